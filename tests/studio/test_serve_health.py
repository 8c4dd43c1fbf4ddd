"""The servers' health check (``studio.serve.healthy``, also the tests' and the benchmarks'): "not yet" for anything
that is not a healthy answer, never an exception that ends a start-up.

A look at a port where nothing listens yet can connect to itself (the kernel may give the asking socket that very
port) and read back its own request as the answer: ``studio.serve`` once stopped a class's start with
``BadStatusLine: GET /_stcore/health HTTP/1.1``. An echo server plays that here."""

from __future__ import annotations

import socket
import threading

from studio.serve import healthy


def _echo_once(server: socket.socket) -> None:
    conn, _ = server.accept()
    with conn:
        conn.sendall(conn.recv(4096))  # the request, back as the answer: a self-connected socket's view


def test_an_answer_that_is_not_http_is_not_healthy_yet():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        thread = threading.Thread(target=_echo_once, args=(server,), daemon=True)
        thread.start()
        assert healthy(f"http://127.0.0.1:{server.getsockname()[1]}") is False
        thread.join(5)


def test_nothing_listening_is_not_healthy_yet():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert healthy(f"http://127.0.0.1:{port}") is False
