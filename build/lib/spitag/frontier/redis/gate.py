"""The per-host gate (``spitag.frontier.gate``) in Redis, shared by every worker."""

from __future__ import annotations

from collections.abc import Sequence

from spitag.frontier.gate import HostGate
from spitag.frontier.records import BACK_OFF_KEEP, HostFailure
from spitag.frontier.redis.db import RedisDB, transient


class RedisGate(HostGate):
    shares_places = True  # workers share it: per-host places too (enter)

    def __init__(self, db: RedisDB) -> None:
        self.db = db
        self.prefix = db.prefix

    @transient
    def acquire(self, host: str, delay: float) -> float:
        return float(self.db.run("acquire", host, delay))

    @transient
    def set_delay(self, host: str, delay: float) -> None:
        self.db.redis.hset(self.prefix + "delay", host, delay)

    @transient
    def delays(self) -> dict[str, float]:
        return {h.decode(): float(d) for h, d in self.db.redis.hgetall(self.prefix + "delay").items()}

    @transient
    def pause(self, host: str, seconds: float) -> None:
        self.db.run("pause_host", host, seconds)

    @transient
    def back_off(self, host: str, sent_ago: float, base: float, cap: float) -> float:
        return float(self.db.run("back_off", host, sent_ago, base, cap, BACK_OFF_KEEP))

    @transient
    def end_back_off(self, host: str, sent_ago: float) -> bool:
        return bool(self.db.run("end_back_off", host, sent_ago))

    @transient
    def enter(self, host: str, token: str, limit: int, hold: float) -> int:
        return int(self.db.run("enter_host", host, token, limit, hold, self.turn_seconds))

    @transient
    def leave(self, host: str, token: str) -> None:
        pipe = self.db.redis.pipeline(transaction=False)
        for kind in ("hx", "hw", "hwt"):  # its place, or its turn in the line
            pipe.zrem(f"{self.prefix}{kind}:{host}", token)
        pipe.execute()

    @transient
    def hold(self, places: Sequence[tuple[str, str]], hold: float) -> None:
        if places:
            self.db.run("hold_hosts", hold, *(v for place in places for v in place))

    @transient
    def failed(self, host: str, limit: int, seconds: float) -> HostFailure:
        count, down, again = self.db.run("host_failed", host, limit, seconds)
        return HostFailure(int(count), float(down), bool(again))

    @transient
    def answered(self, host: str) -> None:
        self.db.redis.hdel(self.prefix + "fails", host)

    @transient
    def failing(self) -> list[str]:
        return [h.decode() for h in self.db.redis.hkeys(self.prefix + "fails")]

    @transient
    def set_down(self, host: str, seconds: float) -> None:
        self.db.run("set_host_down", host, seconds)

    @transient
    def down(self) -> list[tuple[str, float, int]]:
        flat = self.db.run("hosts_down")
        return sorted((flat[i].decode(), float(flat[i + 1]), int(flat[i + 2])) for i in range(0, len(flat), 3))

    @transient
    def clear_down(self) -> int:
        return int(self.db.run("clear_down"))
