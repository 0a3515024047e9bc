"""Hostile pages: the crawl goes on, exits 0, and records every case with its reason."""

from __future__ import annotations

import gzip
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

from testbed.rawserver import RawServer
from testbed.webserver import DictSite, Response, WebServer

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024


def hostile_site(raw: RawServer) -> tuple[DictSite, dict[str, str]]:
    """The site and, per path, what the URL row must show ('200', '404', 'error', …)."""
    rng = random.Random(7)
    site = DictSite()
    cases: dict[str, str] = {}

    def add(path: str, response: Response, expect: str) -> None:
        site.add(path, response)
        cases[path] = expect

    good = '<script type="application/ld+json">{"@type": "Thing", "name": "ok"}</script>'
    add("/broken-jsonld", Response.html(
        f'<html><head>{good}<script type="application/ld+json">{{"@type": "Broken",,,</script>{good}'
        "</head><body>x</body></html>"), "200")
    huge = json.dumps({"@type": "Dataset", "items": [{"@type": "Thing", "n": i} for i in range(80_000)]})
    add("/huge-jsonld", Response.html(f'<html><head><script type="application/ld+json">{huge}</script></head></html>'), "200")
    add("/invalid-utf8", Response(body=b"<html><body>caf\xe9 \xff\xfe\xc3\x28 ok</body></html>",
                                  content_type="text/html; charset=utf-8"), "200")
    add("/lying-charset", Response(body="<html><body>Příliš žluťoučký</body></html>".encode("cp1250"),
                                   content_type="text/html; charset=utf-8"), "200")
    add("/binary-as-html", Response(body=bytes(rng.getrandbits(8) for _ in range(300_000)),
                                    content_type="text/html"), "200")
    add("/deep-nesting", Response.html("<html><body>" + "<div>" * 100_000 + "deep" + "</div>" * 100_000
                                       + "</body></html>"), "200")
    add("/many-links", Response.html("<html><body>" + "".join(f'<a href="/l{i}">{i}</a>' for i in range(100_000))
                                     + "</body></html>"), "200")
    add("/fifty-mb", Response(body=b"<html><body>" + b"a" * (50 * MB), content_type="text/html"), "200")
    bomb = gzip.compress(b"\0" * (300 * MB), compresslevel=9)
    add("/gzip-bomb", Response(body=bomb, content_type="text/html", headers={"Content-Encoding": "gzip"}), "error")
    add("/loop-a", Response.redirect("/loop-b"), "301")
    add("/loop-b", Response.redirect("/loop-a"), "301")
    add("/chain-1", Response.redirect("http://other-host.test/chain-2", status=302), "302")
    add("/empty", Response(body=b"", content_type="text/html"), "200")
    add("/not-found", Response.html("<html>gone</html>", status=404), "404")
    add("/server-error", Response.html("<html>oops</html>", status=500), "500")
    links = "".join(f'<a href="{p}">{p}</a>' for p in cases)
    links += "".join(f'<a href="{raw.base_url}{p}">{p}</a>' for p in ("/truncated", "/slow", "/hangup"))
    site.add("/", Response.html(f"<html><body>{links}</body></html>"))
    return site, cases


def test_hostile_pages(tmp_path: Path) -> None:
    with RawServer() as raw, WebServer() as server:
        site, cases = hostile_site(raw)
        server.add_site("hostile.test", site)
        env = {**os.environ, "http_proxy": server.proxy_url, "https_proxy": server.proxy_url,
               "no_proxy": "127.0.0.1"}
        run = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "spitag", "-a", "seeds=http://hostile.test/",
             "-O", str(tmp_path / "out.jsonl"),
             "-s", f"SPITAG_STORE=sqlite:///{tmp_path}/s.db", "-s", f"SPITAG_FRONTIER=sqlite:///{tmp_path}/f.db",
             "-s", "SPITAG_SCOPE=any", "-s", "SPITAG_MAX_DEPTH=1", "-s", "DOWNLOAD_TIMEOUT=10", "-s", "RETRY_TIMES=0"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
        )
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    log = run.stderr
    assert run.returncode == 0, log[-3000:]
    assert "Spider error processing" not in log and "Traceback" not in log
    print(f"peak RSS of the crawl: {peak_mb:.0f} MB")
    assert peak_mb < 1500  # bounded, though one body is 50 MB and one inflates to 300 MB
    with sqlite3.connect(tmp_path / "s.db") as conn:
        rows = {u: (s, e) for u, s, e in conn.execute("SELECT url, status, error FROM url")}
    for path, expect in cases.items():
        status, error = rows[f"http://hostile.test{path}"]
        if expect == "error":
            assert status is None and error, (path, status, error)
        else:
            assert status == int(expect), (path, status, error)
    for path in ("/truncated", "/slow", "/hangup"):
        status, error = rows[f"{raw.base_url}{path}"]
        assert status is None and error, (path, status, error)
    # only the first 1,000 of the 100,000 links are taken (SPITAG_MAX_LINKS_PER_PAGE)
    many = next(json.loads(line) for line in (tmp_path / "out.jsonl").open() if line.find('"/many-links"') < 0
                and json.loads(line)["url"].endswith("/many-links"))
    assert many["outlinks"] == 100_000 and len(many["links"]) == 1000
    truncated = next(json.loads(line) for line in (tmp_path / "out.jsonl").open()
                     if json.loads(line)["url"].endswith("/fifty-mb"))
    assert truncated["truncated"] is True and truncated["size"] < 20 * MB  # cut, not downloaded whole
    broken = next(json.loads(line) for line in (tmp_path / "out.jsonl").open()
                  if json.loads(line)["url"].endswith("/broken-jsonld"))
    assert broken["semantic"]["json-ld"] == 2
    for stat in ("'spitag/extract/errors/json-ld'", "'spitag/errors/", "'spitag/status/404'"):
        assert stat in log, stat
