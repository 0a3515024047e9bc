"""Pages in other encodings, declared or mislabelled, are stored correctly decoded."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[1]
CZECH = "Příliš žluťoučký kůň úpěl ďábelské ódy"
JAPANESE = "日本語のページです"


def page(text: str, meta: str = "") -> str:
    return f"<html><head>{meta}<title>{text}</title></head><body><p>{text}</p></body></html>"


CASES = {
    # path: (bytes, content type, expected text)
    "/cp1250-header": (page(CZECH).encode("cp1250"), "text/html; charset=windows-1250", CZECH),
    "/iso-8859-2-meta": (page(CZECH, '<meta charset="iso-8859-2">').encode("iso-8859-2"), "text/html", CZECH),
    "/shift-jis-meta": (page(JAPANESE, '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">')
                        .encode("shift_jis"), "text/html", JAPANESE),
    # lies: the header says UTF-8, the page (rightly) says windows-1250
    "/header-lies": (page(CZECH, '<meta charset="windows-1250">').encode("cp1250"), "text/html; charset=utf-8", CZECH),
    # lies: labelled ISO-8859-1, the bytes are UTF-8
    "/utf8-as-latin1": (page(CZECH).encode("utf-8"), "text/html; charset=iso-8859-1", CZECH),
}


def test_encodings_are_unified_to_utf8(tmp_path: Path) -> None:
    site = DictSite()
    links = "".join(f'<a href="{p}">{p}</a>' for p in CASES)
    site.add("/", Response.html(f"<html><body>{links}</body></html>"))
    for path, (body, ctype, _) in CASES.items():
        site.add(path, Response(body=body, content_type=ctype))
    with WebServer() as server:
        server.add_site("enc.test", site)
        env = {**os.environ, "http_proxy": server.proxy_url}
        run = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://enc.test/",
             "-s", f"SPITAG_STORE=sqlite:///{tmp_path}/s.db", "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/f.db"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )
    assert run.returncode == 0, run.stderr[-2000:]
    with sqlite3.connect(tmp_path / "s.db") as conn:
        rows = dict(conn.execute(
            "SELECT u.url, p.data FROM url u JOIN page p ON p.id = u.page_id"))
        titles = dict(conn.execute("SELECT u.url, p.title FROM url u JOIN page p ON p.id = u.page_id"))
    for path, (_, _, text) in CASES.items():
        stored = rows[f"http://enc.test{path}"].decode("utf-8")  # stored as UTF-8
        assert text in stored, path
        assert titles[f"http://enc.test{path}"] == text, path
