"""The loopback web server the end-to-end tests crawl: real sockets, real clients."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from testbed.corpus import FLINK_HOST, flink_site, real_pages, real_pages_site, ring_links
from testbed.webserver import DictSite, Response, WebServer

TIMEOUT = 30  # seconds; only so a broken server fails a test instead of hanging it


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def proxy_opener(server: WebServer, follow_redirects: bool = True) -> urllib.request.OpenerDirector:
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler({"http": server.proxy_url})]
    if not follow_redirects:
        handlers.append(_NoRedirect())
    return urllib.request.build_opener(*handlers)


def direct_opener() -> urllib.request.OpenerDirector:
    """No proxy at all, whatever the environment says."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def status_of(opener: urllib.request.OpenerDirector, url: str) -> int:
    try:
        with opener.open(url, timeout=TIMEOUT) as response:
            return response.status
    except urllib.error.HTTPError as error:
        error.close()
        return error.code


def get_with_host(server: WebServer, path: str, host: str | None) -> tuple[int, bytes]:
    """Origin-mode GET on 127.0.0.1:PORT with an explicit Host header."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        headers = {"Host": host} if host else {}
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def two_sites(server: WebServer) -> None:
    server.add_site("a.test", DictSite({"/": "site A", "/only-a": "only on A"}))
    server.add_site("b.test", DictSite({"/": "site B"}))
    server.add_site("fallback.test", DictSite({"/": "default site"}), default=True)


def test_origin_mode_routes_by_host_header(webserver: WebServer) -> None:
    two_sites(webserver)
    assert get_with_host(webserver, "/", "a.test") == (200, b"site A")
    assert get_with_host(webserver, "/", "B.Test:80") == (200, b"site B")
    assert get_with_host(webserver, "/", "unknown.test") == (200, b"default site")
    assert get_with_host(webserver, "/", None) == (200, b"default site")
    assert get_with_host(webserver, "/only-a", "b.test")[0] == 404
    with direct_opener().open(webserver.url_for(None, "/"), timeout=TIMEOUT) as response:
        assert response.read() == b"default site"


def test_first_site_is_default_unless_told(webserver: WebServer) -> None:
    webserver.add_site("first.test", DictSite({"/": "first"}))
    webserver.add_site("second.test", DictSite({"/": "second"}))
    assert get_with_host(webserver, "/", None) == (200, b"first")


def test_proxy_mode_routes_by_uri_host(webserver: WebServer) -> None:
    two_sites(webserver)
    opener = proxy_opener(webserver)
    with opener.open("http://a.test/only-a", timeout=TIMEOUT) as response:
        assert response.read() == b"only on A"
    with opener.open("http://b.test/", timeout=TIMEOUT) as response:
        assert response.read() == b"site B"
    # The server's own address through the proxy is the default site, not an unknown host.
    with opener.open(webserver.url_for(None, "/"), timeout=TIMEOUT) as response:
        assert response.read() == b"default site"
    assert [(e.host, e.path) for e in webserver.log] == [
        ("a.test", "/only-a"), ("b.test", "/"), ("127.0.0.1", "/")]


def test_proxy_mode_unknown_host_is_404(webserver: WebServer) -> None:
    two_sites(webserver)
    assert status_of(proxy_opener(webserver), "http://never-served.example/x?y=1") == 404
    assert webserver.log[-1][1:4] == ("never-served.example", "/x?y=1", 404)


def test_connect_is_refused_at_once(webserver: WebServer) -> None:
    two_sites(webserver)
    with socket.create_connection(("127.0.0.1", webserver.port), timeout=TIMEOUT) as sock:
        sock.sendall(b"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        reply = b""
        while chunk := sock.recv(4096):  # the server closes after answering
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 405 ")
    assert webserver.log[-1][1:4] == ("a.test", "a.test:443", 405)


def test_flink_site_through_proxy(webserver: WebServer, flink_root: Path) -> None:
    site = flink_site(flink_root)
    assert len(site) > 600
    webserver.add_site(FLINK_HOST, site)
    opener = proxy_opener(webserver)
    with opener.open(webserver.url_for(FLINK_HOST, "/"), timeout=TIMEOUT) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        home = response.read()
    assert b'href="http://flink.apache.org/zh/"' in home
    assert b"https://flink.apache.org" not in home
    assert b"https://nightlies.apache.org/" in home  # other hosts keep their scheme
    assert (flink_root / "index.html").read_bytes().count(b"https://flink.apache.org") > 0

    # /x/ serves /x/index.html; /x redirects to /x/; missing files and robots.txt are 404.
    post = "/2014/08/26/apache-flink-0.6-available/"
    assert status_of(opener, f"http://flink.apache.org{post}") == 200
    no_follow = proxy_opener(webserver, follow_redirects=False)
    try:
        no_follow.open(f"http://flink.apache.org{post.rstrip('/')}", timeout=TIMEOUT)
        raise AssertionError("expected a redirect")
    except urllib.error.HTTPError as error:
        assert (error.code, error.headers["Location"]) == (301, post)
        error.close()
    assert status_of(opener, "http://flink.apache.org/no/such/page.html") == 404
    assert status_of(opener, "http://flink.apache.org/robots.txt") == 404
    with opener.open("http://flink.apache.org/sitemap.xml", timeout=TIMEOUT) as response:
        assert response.headers["Content-Type"].startswith("application/xml")
        assert b"<loc>http://flink.apache.org/" in response.read()


def test_redirects(webserver: WebServer) -> None:
    site = DictSite({"/new": "arrived"})
    site.redirect("/old", "/new", 302)
    site.redirect("/elsewhere", "http://b.test/", 301)
    webserver.add_site("a.test", site)
    webserver.add_site("b.test", DictSite({"/": "site B"}))
    opener = proxy_opener(webserver)
    with opener.open("http://a.test/old", timeout=TIMEOUT) as response:
        assert (response.geturl(), response.read()) == ("http://a.test/new", b"arrived")
    with opener.open("http://a.test/elsewhere", timeout=TIMEOUT) as response:
        assert (response.geturl(), response.read()) == ("http://b.test/", b"site B")
    assert [(e.host, e.path, e.status) for e in webserver.log] == [
        ("a.test", "/old", 302), ("a.test", "/new", 200),
        ("a.test", "/elsewhere", 301), ("b.test", "/", 200)]


def test_log_keeps_arrival_order(webserver: WebServer) -> None:
    webserver.add_site("a.test", DictSite({f"/{i}": "x" * i for i in range(1, 31)}))
    opener = proxy_opener(webserver)
    for i in range(1, 31):
        with opener.open(f"http://a.test/{i}", timeout=TIMEOUT) as response:
            response.read()
    log = webserver.log
    assert [e.path for e in log] == [f"/{i}" for i in range(1, 31)]
    assert [e.bytes for e in log] == list(range(1, 31))
    assert all(e.status == 200 and e.host == "a.test" for e in log)
    assert all(a.time <= b.time for a, b in zip(log, log[1:]))
    assert webserver.requested("a.test")[:2] == ["/1", "/2"]
    webserver.clear_log()
    assert webserver.log == []


def test_dict_site_custom_status_headers_and_queries(webserver: WebServer) -> None:
    site = DictSite({
        "/teapot": Response(418, b"short and stout", headers=[
            ("X-Test", "yes"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")],
            content_type="text/plain"),
        "/slow": Response(200, b"late", delay=0.05),
        "/search?q=1": "first query",
        "/search": "any other query",
        "/caf%C3%A9": "coffee",
    })
    webserver.add_site("a.test", site)
    conn = http.client.HTTPConnection("127.0.0.1", webserver.port, timeout=TIMEOUT)
    try:
        conn.request("GET", "http://a.test/teapot")
        response = conn.getresponse()
        assert (response.status, response.read()) == (418, b"short and stout")
        assert response.headers["X-Test"] == "yes"
        assert response.headers["Content-Type"] == "text/plain"
        assert response.headers.get_all("Set-Cookie") == ["a=1", "b=2"]
        for target, body in [("/slow", b"late"), ("/search?q=1", b"first query"),
                             ("/search?q=2", b"any other query"), ("/café", b"coffee")]:
            conn.request("GET", "http://a.test" + target.replace("é", "%C3%A9"))
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, body)
        conn.request("HEAD", "http://a.test/search")
        response = conn.getresponse()
        assert (response.status, response.read()) == (200, b"")
        assert response.headers["Content-Length"] == str(len(b"any other query"))
        # All of the above went over one kept-alive connection.
        assert conn.sock is not None
    finally:
        conn.close()
    assert webserver.log[-1][1:5] == ("a.test", "/search", 200, 0)


def test_stop_closes_kept_alive_connections() -> None:
    server = WebServer(DictSite({"/": "hi"})).start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
    try:
        conn.request("GET", "/")
        assert conn.getresponse().read() == b"hi"
        server.stop()
        conn.auto_open = 0  # don't let http.client quietly reconnect
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            conn.request("GET", "/")
            conn.getresponse()
    finally:
        conn.close()
        server.stop()


def test_real_pages_manifest(real_pages_dir: Path) -> None:
    pages = real_pages(real_pages_dir)
    manifest = [json.loads(line) for line in (real_pages_dir / "manifest.jsonl").open()]
    assert 0 < len(pages) < len(manifest)  # the "hard::" entries are left out
    assert all(p.url.startswith(("http://", "https://")) and p.file.is_file() for p in pages)
    assert all(p.path.startswith("/") and p.host == p.host.lower() for p in pages)
    sample = real_pages(real_pages_dir, n=5, seed=3)
    assert sample == real_pages(real_pages_dir, n=5, seed=3)
    assert len(sample) == 5 and set(sample) <= set(pages)


def test_real_pages_site_serves_original_urls_with_links(webserver: WebServer, real_pages_dir: Path) -> None:
    pages = real_pages(real_pages_dir, n=4, seed=1)
    sites = real_pages_site(pages, link_graph=ring_links(len(pages)))
    webserver.add_sites(sites)
    assert set(webserver.hosts) == {p.host for p in pages}
    opener = proxy_opener(webserver)
    for i, page in enumerate(pages):
        with opener.open(page.served_url, timeout=TIMEOUT) as response:
            body = response.read()
        next_url = pages[(i + 1) % len(pages)].served_url
        assert next_url.replace("&", "&amp;").encode() in body
        for other in pages:
            assert f"https://{other.host}/".encode() not in body
        assert len(body) >= len(page.read()) - 200 * len(pages)  # the page itself is all there
    assert [e.status for e in webserver.log] == [200] * len(pages)


SPIDER = textwrap.dedent("""
    import scrapy

    class ProbeSpider(scrapy.Spider):
        name = "probe"
        start_urls = ["http://flink.apache.org/", "https://flink.apache.org/secure-only"]
        custom_settings = {
            "ROBOTSTXT_OBEY": False,
            "TELNETCONSOLE_ENABLED": False,
            "RETRY_ENABLED": False,
            "DOWNLOAD_TIMEOUT": 30,
        }

        def parse(self, response):
            yield {"url": response.url, "status": response.status,
                   "title": response.css("title::text").get()}
""")


def test_scrapy_fetches_through_the_proxy(webserver: WebServer, flink_root: Path, tmp_path: Path) -> None:
    webserver.add_site(FLINK_HOST, flink_site(flink_root))
    (tmp_path / "probe.py").write_text(SPIDER)
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in {"http_proxy", "https_proxy", "no_proxy", "all_proxy"}
           and k != "SCRAPY_SETTINGS_MODULE"}
    # https goes to the same server too: it answers CONNECT with 405, so no https URL
    # ever leads Scrapy to a DNS lookup or a connection of its own.
    env["http_proxy"] = env["https_proxy"] = webserver.proxy_url
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "runspider", "probe.py", "-O", "items.jsonl"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [(i["url"], i["status"]) for i in items] == [("http://flink.apache.org/", 200)]
    assert "Flink" in items[0]["title"]
    assert sorted((e.host, e.path, e.status) for e in webserver.log) == [
        (FLINK_HOST, "/", 200), (FLINK_HOST, "flink.apache.org:443", 405)]
    assert "TunnelError" in result.stderr


def test_every_real_page_is_served_at_its_url(webserver: WebServer, real_pages_dir: Path) -> None:
    pages = real_pages(real_pages_dir)
    webserver.add_sites(real_pages_site(pages))
    opener = proxy_opener(webserver)
    for page in pages:
        assert status_of(opener, page.served_url) == 200, page
    assert len(webserver.log) == len(pages)
