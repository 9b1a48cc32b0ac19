"""Loopback ports of the local server: free ones, whether Bolt and HTTP answer, Browser's URL."""

from __future__ import annotations

import socket
import time
import urllib.request

__all__ = ["bolt_answers", "browser_url", "free_port", "port_is_free", "wait_http"]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bolt_answers(port: int) -> bool:
    """True when something completes the Bolt handshake on the port."""
    if not port:
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as s:
            s.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x04\x05" + b"\x00" * 12)
            s.settimeout(2.0)
            return len(s.recv(4)) == 4
    except OSError:
        return False


def browser_url(http_port: int) -> str:
    return f"http://127.0.0.1:{http_port}/browser/"


def wait_http(port: int, timeout: float) -> bool:
    """True once the HTTP port serves Neo4j's discovery document."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            # no proxy: a loopback port is never behind one (http_proxy may be set)
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"http://127.0.0.1:{port}/", timeout=2.0) as response:
                if response.status == 200:
                    return True
        except (OSError, ValueError):
            pass
        time.sleep(0.25)
    return False
