"""The recrawl schedule on hand-computed cases (spitag.recrawl)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from scrapy.http.headers import Headers

from spitag.errors import BadInputError
from spitag.recrawl import (
    RecrawlPolicy,
    conditional_headers,
    freshness_lifetime,
    settle,
    validators,
)
from tests.support.settings import options

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
POLICY = RecrawlPolicy(interval=1000.0, min_interval=100.0, max_interval=2000.0, inc_rate=0.5, dec_rate=0.25)


def test_next_interval_follows_nutchs_adaptive_schedule_within_bounds() -> None:
    assert POLICY.next_interval(None, None) == 1000.0  # first fetch: the default
    assert POLICY.next_interval(1000.0, True) == 750.0  # changed: × (1 − 0.25)
    assert POLICY.next_interval(1000.0, False) == 1500.0  # unchanged: × (1 + 0.5)
    assert POLICY.next_interval(1500.0, False) == 2000.0  # not above the maximum
    assert POLICY.next_interval(120.0, True) == 100.0  # not below the minimum
    assert POLICY.next_interval(None, True) == 1000.0  # a revisit with no interval on record


def test_expiry_is_the_servers_lifetime_else_the_interval_both_bounded() -> None:
    assert POLICY.expires(NOW, 1000.0, None) == NOW + timedelta(seconds=1000)
    assert POLICY.expires(NOW, 1000.0, 300.0) == NOW + timedelta(seconds=300)
    assert POLICY.expires(NOW, 1000.0, 0.0) == NOW + timedelta(seconds=100)
    assert POLICY.expires(NOW, 1000.0, 10**9) == NOW + timedelta(seconds=2000)
    huge = RecrawlPolicy(max_interval=1e30)
    assert huge.expires(NOW, 1e30, None).year == 9999  # no overflow


@pytest.mark.parametrize("headers, lifetime", [
    ({}, None),
    ({"Cache-Control": "public, max-age=600"}, 600.0),
    ({"Cache-Control": 'max-age="60"'}, 60.0),
    ({"Cache-Control": "no-cache"}, 0.0),
    ({"Cache-Control": "private, no-store"}, 0.0),
    ({"Cache-Control": "max-age=600", "Expires": "Mon, 30 Nov 2026 15:00:00 GMT"}, 600.0),
    ({"Expires": "Mon, 30 Nov 2026 15:00:00 GMT"}, 3 * 3600.0),
    ({"Expires": "Mon, 30 Nov 2026 15:00:00 GMT", "Date": "Mon, 30 Nov 2026 14:00:00 GMT"}, 3600.0),
    ({"Expires": "Mon, 30 Nov 2026 11:00:00 GMT"}, 0.0),
    ({"Expires": "0"}, None),  # invalid: treated as "not said"
    ({"Cache-Control": "max-age=abc"}, None),
])
def test_freshness_lifetime_from_headers(headers: dict[str, str], lifetime: float | None) -> None:
    assert freshness_lifetime(Headers(headers), NOW) == lifetime


def test_validators_go_back_as_conditional_headers() -> None:
    etag, modified = validators(Headers({"ETag": ' W/"x1" ', "Last-Modified": "Mon, 05 Jan 2026 12:00:00 GMT"}))
    assert (etag, modified) == ('W/"x1"', "Mon, 05 Jan 2026 12:00:00 GMT")
    assert conditional_headers({"etag": etag, "last_modified": modified, "md5": "ab"}) == {
        "If-None-Match": 'W/"x1"', "If-Modified-Since": "Mon, 05 Jan 2026 12:00:00 GMT",
    }
    assert conditional_headers(None) == {} and conditional_headers({"md5": "ab"}) == {}


def item(status: int | None, md5: str | None = "m1") -> dict:
    return {"status": status, "md5": md5, "md5dia": md5, "fetched_at": "2026-11-30T12:00:00.000Z"}


def test_settle_first_fetch_revisits_and_failures() -> None:
    first = item(200)
    settle(POLICY, first, Headers({"ETag": '"a"'}), None, NOW)
    assert (first["changed"], first["revisit_interval"], first["etag"]) == (None, 1000.0, '"a"')
    assert first["expires"] == "2026-11-30T12:16:40.000Z"

    revisit = {"etag": '"a"', "last_modified": "L", "interval": 1000.0, "md5": "m1", "status": 200}
    not_modified = item(304, md5="d41d")
    settle(POLICY, not_modified, Headers({}), revisit, NOW)
    assert (not_modified["changed"], not_modified["revisit_interval"]) == (False, 1500.0)
    assert (not_modified["md5"], not_modified["md5dia"]) == ("m1", None)  # names the stored content
    assert (not_modified["etag"], not_modified["last_modified"]) == ('"a"', "L")

    same = item(200, "m1")
    settle(POLICY, same, Headers({"Cache-Control": "max-age=200"}), revisit, NOW)
    assert (same["changed"], same["revisit_interval"]) == (False, 1500.0)
    assert same["expires"] == "2026-11-30T12:03:20.000Z"  # the server's 200 s

    changed = item(200, "m2")
    settle(POLICY, changed, Headers({}), revisit, NOW)
    assert (changed["changed"], changed["revisit_interval"]) == (True, 750.0)

    gone = item(404, None)
    settle(POLICY, gone, Headers({}), revisit, NOW)
    assert gone["changed"] is True
    still_gone = item(404, None)
    settle(POLICY, still_gone, Headers({}), {"interval": 1000.0, "status": 404}, NOW)
    assert still_gone["changed"] is False

    failed = item(None, None)
    settle(POLICY, failed, None, revisit, NOW)
    assert failed["revisit_interval"] == 1000.0  # kept
    assert failed["expires"] == "2026-11-30T12:01:40.000Z"  # due again after the minimum


@pytest.mark.parametrize("name, value, message", [
    ("SPITAG_RECRAWL", "maybe", "not a boolean"),
    ("SPITAG_RECRAWL_INTERVAL", "-1", "at least 0"),
    ("SPITAG_RECRAWL_DEC_RATE", "1", "at most 0.99"),
    ("SPITAG_RECRAWL_MIN_INTERVAL", "1e9", "above SPITAG_RECRAWL_MAX_INTERVAL"),
])
def test_bad_settings_are_refused(name: str, value: str, message: str) -> None:
    with pytest.raises(BadInputError, match=message):
        options(**{name: value})


def test_defaults() -> None:
    assert RecrawlPolicy.from_options(options()) == RecrawlPolicy(
        enabled=True, interval=7 * 86400.0, min_interval=3600.0, max_interval=365 * 86400.0,
        inc_rate=0.4, dec_rate=0.2,
    )
