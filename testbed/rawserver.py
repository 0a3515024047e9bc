"""A raw TCP server for answers no well-behaved HTTP server gives: truncated bodies,
a byte per second, a connection closed without an answer."""

from __future__ import annotations

import socket
import socketserver
import threading
import time


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return
            data += chunk
        path = data.split(b" ", 2)[1].decode("latin-1")
        self.server.owner.requests.append(path)  # type: ignore[attr-defined]
        try:
            if path.startswith("/truncated"):
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
                             + b"<html><body>" + b"x" * 1000)
            elif path.startswith("/slow"):
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000\r\n\r\n")
                for _ in range(1000):  # one byte a second, until the client gives up
                    if self.server.owner.stopping.is_set():  # type: ignore[attr-defined]
                        break
                    sock.sendall(b"x")
                    time.sleep(1)
            elif path.startswith("/hangup"):
                pass  # close without a word
        except OSError:
            pass


class RawServer:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.stopping = threading.Event()
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.owner = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
