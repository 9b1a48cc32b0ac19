"""A TCP relay in front of the real server that can cut a connection under the driver: the
network fault a load balancer's idle timeout or a restarted pod gives. Every byte goes to and
comes from the real Neo4j; nothing here answers for it."""

from __future__ import annotations

import socket
import threading


class CuttingRelay:
    """Relays 127.0.0.1:``port`` to ``target``. After ``cut_next()``, the next request a client
    sends on a connection already open is dropped and that connection closed, so the driver
    meets a dead connection mid-request (``cuts`` counts them)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.cuts = 0
        self._armed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_next(self) -> None:
        self._armed.set()

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                _close(s)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self._lock:
                self._sockets += [client, server]
            # a connection open before cut_next() is the one to cut: the driver's pooled one
            opened_before = not self._armed.is_set()
            threading.Thread(target=self._pump, args=(client, server, opened_before), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, may_cut: bool) -> None:
        try:
            while data := source.recv(65536):
                if may_cut and self._armed.is_set():
                    self._armed.clear()
                    self.cuts += 1
                    break
                sink.sendall(data)
        except OSError:
            pass
        _close(source)
        _close(sink)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
