"""The sandbox's plumbing: its limits and errors, the wire to a long-lived worker, and fair turns.

* ``Channel`` (server side) and ``WorkerConn`` (worker side) are the two ends of a Unix stream socket that
  carries length-prefixed messages. The server reads the worker's answers with ``plain_loads``, which allows
  no class at all: a worker that escaped the validator still cannot make the server run code.
* ``FairSlots`` hands the sandbox's few one-shot workers to browser sessions in turn, and refuses a session
  that asks too often.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import signal
import socket
import struct
import threading
import time
from collections import OrderedDict, deque
from contextlib import contextmanager
from dataclasses import dataclass

HEADER = struct.Struct("!Q")
SPIN = 0.002  # seconds a worker waits awake for the next request before it sleeps (bench/sandbox_training.py)
MAX_MESSAGE = 1 << 31  # an answer is at most as big as its question; this only stops nonsense


@dataclass(frozen=True)
class Limits:
    """A worker's limits. The defaults are a Check's: the slowest reference solution needs about 0.8 s of CPU;
    the wall clock leaves room for a busy server, where workers run at a lower priority than the pages."""

    cpu_seconds: int = 4
    memory_mb: int = 512
    wall_seconds: int = 20


class SandboxError(Exception):
    """The task was stopped at a limit, or failed; the message is for the student."""


def death(code: int, limits: Limits) -> str:
    """Why a worker that exited with ``code`` (negative: the signal) was stopped, in one sentence."""
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"Your code used more than {limits.cpu_seconds} s of CPU time and was stopped."
    if code == -signal.SIGALRM:
        return f"Your code ran longer than {limits.wall_seconds} s and was stopped."
    return f"Your code crashed the sandbox (exit code {code}) and was stopped."


class _NoClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise SandboxError("The sandbox sent back something it should not have; the answer was dropped.")


def plain_loads(data: bytes):
    """Unpickle tuples, numbers, strings and bytes only."""
    return _NoClasses(io.BytesIO(data)).load()


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes | None:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([sock], [], [], left)[0]:
                raise TimeoutError
        k = sock.recv_into(view[got:])
        if k == 0:
            return None
        got += k
    return bytes(buf)


def recv_message(sock: socket.socket, deadline: float | None = None) -> bytes | None:
    """One message, or None when the other end hung up; TimeoutError past ``deadline``."""
    head = _recv_exact(sock, HEADER.size, deadline)
    if head is None:
        return None
    (n,) = HEADER.unpack(head)
    if n > MAX_MESSAGE:
        return None
    return _recv_exact(sock, n, deadline)


def send_message(sock: socket.socket, data: bytes) -> None:
    sock.sendall(HEADER.pack(len(data)) + data)


class WorkerConn:
    """The worker's end: ``receive()`` the next request (None when the server hung up), ``send()`` an answer."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.limits = sock, None

    def receive(self, idle: float | None = None) -> bytes | None:
        """The next request; None when the server hung up, or when none came for ``idle`` seconds. Waits
        awake for ``SPIN`` seconds first: in training the next call comes within a fraction of a millisecond,
        and waking a sleeping process costs more than that (measured 0.2-0.6 ms a call on a 2-core VM)."""
        try:
            spin_until = time.perf_counter() + SPIN
            while not select.select([self.sock], [], [], 0)[0] and time.perf_counter() < spin_until:
                pass
            return recv_message(self.sock, None if idle is None else time.monotonic() + idle)
        except (OSError, TimeoutError):
            return None

    def send(self, data: bytes) -> None:
        send_message(self.sock, data)


class Channel:
    """The server's end of a long-lived worker: ``call()`` sends one request and waits for its answer.
    A call past its time, ``kill()`` or ``close()`` ends the worker at once (SIGKILL), whatever it is doing."""

    def __init__(self, sock: socket.socket, status_fd: int, limits: Limits) -> None:
        self.sock, self.status_fd, self.limits = sock, status_fd, limits
        self.pid: int | None = None
        self.closed = False
        self._lock = threading.Lock()
        hello = self._answer(time.monotonic() + 120)  # the zygote may still be warming up
        if hello[0] != "ready":
            self.close()
            raise SandboxError(str(hello[1]))
        self.pid = int(hello[1])

    def call(self, request: bytes, timeout: float):
        """The worker's answer to ``request`` (plain data), or SandboxError saying why there is none."""
        with self._lock:
            if self.closed:
                raise SandboxError("This Function's worker was stopped.")
            try:
                send_message(self.sock, request)
            except OSError:
                raise SandboxError(self._why()) from None
            try:
                return self._answer(time.monotonic() + timeout)
            except TimeoutError:
                self.kill()
                raise SandboxError(f"One call of your Function took longer than {timeout:g} s at this size and "
                                   "was stopped.") from None

    def _answer(self, deadline: float):
        data = recv_message(self.sock, deadline)
        if data is None:
            raise SandboxError(self._why())
        return plain_loads(data)

    def _why(self) -> str:
        """Read how the worker ended from its monitor (it hung up: the worker is gone)."""
        self.closed = True
        if select.select([self.status_fd], [], [], 2.0)[0]:
            data = os.read(self.status_fd, 4096)
            if data:
                return death(plain_loads(data), self.limits)
        return "The sandbox stopped unexpectedly; try again."

    def gone(self) -> bool:
        """Whether the worker has ended while idle (its end of the socket reads as closed)."""
        if self.closed:
            return True
        with self._lock:
            try:
                return bool(select.select([self.sock], [], [], 0)[0]) and not self.sock.recv(1, socket.MSG_PEEK)
            except OSError:
                return True

    def kill(self) -> None:
        pid, self.pid = self.pid, None
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        """End the worker now and free both ends (safe to call twice, from any thread)."""
        self.kill()
        if not self.closed or self.sock.fileno() >= 0:
            self.closed = True
            self.sock.close()
            try:
                os.close(self.status_fd)
            except OSError:
                pass

    def __del__(self) -> None:
        self.close()


class Busy(SandboxError):
    """A session asked for more checks than it may."""


class FairSlots:
    """``n`` workers shared by sessions in turn: each session has at most one task in the sandbox or in its
    queue, served first come first served, so a check waits behind at most one task of each other session,
    however many that session sends. ``per_minute``: tasks a session may start a minute (None: any number)."""

    def __init__(self, n: int, per_minute: int | None = 12) -> None:
        self.free, self.per_minute = n, per_minute
        self._cond = threading.Condition()
        self._waiting: OrderedDict[object, None] = OrderedDict()  # owners in the order they asked
        self._busy: set = set()
        self._recent: dict[object, deque[float]] = {}

    @contextmanager
    def hold(self, owner=None):
        owner = object() if owner is None else owner
        self._enter(owner)
        try:
            yield
        finally:
            with self._cond:
                self._busy.discard(owner)
                self.free += 1
                self._cond.notify_all()

    def _enter(self, owner) -> None:
        with self._cond:
            if owner in self._busy or owner in self._waiting:
                raise Busy("Your previous check is still running: wait for its verdict, then check again.")
            self._rate(owner)
            self._waiting[owner] = None
            try:
                while not (self.free and next(iter(self._waiting)) is owner):
                    self._cond.wait()
            finally:
                self._waiting.pop(owner, None)
                self._cond.notify_all()
            self.free -= 1
            self._busy.add(owner)

    def _rate(self, owner) -> None:
        if self.per_minute is None or not isinstance(owner, str):
            return
        now, times = time.monotonic(), self._recent.setdefault(owner, deque())
        while times and now - times[0] > 60:
            times.popleft()
        if len(times) >= self.per_minute:
            raise Busy(f"You checked {self.per_minute} times in the last minute, the most this server allows; "
                       f"try again in {60 - (now - times[0]):.0f} s.")
        times.append(now)
        if len(self._recent) > 10_000:  # sessions long gone
            self._recent = {k: v for k, v in self._recent.items() if v and now - v[-1] < 60}
