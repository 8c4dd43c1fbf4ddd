"""Run untrusted work (a student's Function being judged) in a separate process with hard limits.

How it is built:

* **A zygote.** One helper process per server (``python -m autodiff_core.grading.zygote``: ``zygote.py``)
  imports torch, warms up by judging a reference solution, and then waits on a private Unix socket
  (``serve_forks``). It never runs threads, so forking it is safe, and a fork starts with torch ready
  (milliseconds, not the seconds of an import).
* **A monitor and a worker per request.** For each request the zygote forks a monitor, which forks the
  worker. The worker sets its limits and then runs the task: ``RLIMIT_CPU`` (CPU seconds; the kernel sends
  SIGXCPU, then SIGKILL), ``RLIMIT_AS`` (its address space may grow by ``memory_mb`` past what torch
  already maps), ``RLIMIT_FSIZE`` 0 (no files written), no core dumps, and ``alarm()`` for wall-clock
  time (SIGALRM's default action ends the process, whatever it is doing, even inside a C call). The
  monitor waits for it and sends the server its result, or why it died.
* **The server side** (``Sandbox.run``) passes the zygote one end of a fresh pipe with each request (a
  datagram on a Unix socket pair, the pipe's descriptor riding along) and reads the answer from it.
  Waiting for it releases the GIL, so other sessions go on; at most ``max_parallel`` workers run at once.
  Memory is limited where the kernel enforces ``RLIMIT_AS`` (Linux, where the class server runs).
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import pickle
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from .channel import Busy, Channel, FairSlots, Limits, SandboxError, WorkerConn, death

__all__ = ["Busy", "Channel", "Limits", "Sandbox", "SandboxError", "shared_sandbox"]
ROOT = Path(__file__).resolve().parents[2]  # the checkout
log = logging.getLogger(__name__)
CHECKS_PER_MINUTE = 12  # per browser session; STUDIO_CHECKS_PER_MINUTE changes it
# The zygote's main module: it imports the tasks (the judge, the remote Functions) and this module, never the
# other way round, so the judge can import the sandbox.
ZYGOTE = "autodiff_core.grading.zygote"


class Sandbox:
    """The server's handle on its zygote: start it once, then ``run`` tasks in fresh workers."""

    def __init__(self, limits: Limits | None = None, max_parallel: int = 2) -> None:
        self.limits = limits or Limits()
        self._slots = FairSlots(max_parallel, int(os.environ.get("STUDIO_CHECKS_PER_MINUTE", CHECKS_PER_MINUTE)))
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None

    def start(self) -> None:
        """Start the zygote if it is not running (returns at once; it warms up on its own)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            # one request, one message; and when the server ends, however it ends, the zygote reads the end
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            command = [*walls(), sys.executable, "-m", ZYGOTE, str(theirs.fileno())]
            self._proc = subprocess.Popen(command, pass_fds=[theirs.fileno()], cwd=ROOT, env=env,
                                          stdin=subprocess.DEVNULL)
            theirs.close()
            self._sock = ours

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
            if self._proc is not None:
                self._proc.terminate()
                self._proc.wait(5)
            self._proc = self._sock = None

    def run(self, fn, *args, limits: Limits | None = None, owner: str | None = None):
        """``fn(*args)`` in a fresh worker under ``limits``; its return value, or ``SandboxError``.

        ``fn`` must be importable by name (a module-level function): it is pickled by reference. ``owner`` (a
        browser session) takes turns with other owners for the ``max_parallel`` workers (``FairSlots``)."""
        limits = limits or self.limits
        _need_fork()
        request = pickle.dumps(("call", fn, args, limits))
        with self._slots.hold(owner):
            readable, writable = os.pipe()
            try:
                self._send(request, [writable])
            finally:
                os.close(writable)
            with os.fdopen(readable, "rb") as answer:
                data = _read_until_eof(answer, deadline=time.monotonic() + limits.wall_seconds + 60)
        return _outcome(data, limits)

    def open(self, fn, *args, limits: Limits | None = None) -> Channel:
        """A long-lived worker running ``fn(conn, *args)``, which answers requests over ``conn`` under
        ``limits`` (``cpu_seconds`` over its whole life, ``memory_mb`` at any moment, ``wall_seconds`` of life)."""
        limits = limits or self.limits
        _need_fork()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_r, status_w = os.pipe()
        try:
            self._send(pickle.dumps(("serve", fn, args, limits)), [theirs.fileno(), status_w])
        except BaseException:
            ours.close()
            os.close(status_r)
            raise
        finally:
            theirs.close()
            os.close(status_w)
        return Channel(ours, status_r, limits)

    def _send(self, request: bytes, fds: list[int]) -> None:
        for attempt in (1, 2):  # a zygote that died is started again once
            self.start()
            try:
                socket.send_fds(self._sock, [request], fds)
                return
            except OSError:
                if attempt == 2:
                    raise SandboxError("The sandbox could not be started; try again.") from None
                self.close()


def _read_until_eof(stream, deadline: float) -> bytes:
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            raise SandboxError("The sandbox did not answer in time.")
        chunk = os.read(stream.fileno(), 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _outcome(data: bytes, limits: Limits):
    """Turn the monitor's report into the task's value or a SandboxError with a clear message."""
    if not data:
        raise SandboxError("The sandbox stopped unexpectedly; try again.")
    result, status = pickle.loads(data)
    code = os.waitstatus_to_exitcode(status)
    if result is not None:
        kind, value = _ResultUnpickler(io.BytesIO(result)).load()
        if kind == "ok":
            return value
        if kind == "memory":
            raise SandboxError(f"Your code needed more than {limits.memory_mb} MB of memory and was stopped.")
        raise SandboxError(f"The check failed: {value}")
    raise SandboxError(death(code, limits))


def _need_fork() -> None:
    if not hasattr(os, "fork"):
        raise SandboxError("Running student code needs the sandbox, which runs on Linux and macOS only.")


class _ResultUnpickler(pickle.Unpickler):
    """A worker's answer is data, never code: only these classes may appear in it (a plain ``pickle.loads``
    would let a worker that escaped the validator run code in the server)."""

    ALLOWED = {("autodiff_core.grading.judge", "Verdict"), ("autodiff_core.grading.judge", "Kink"),
               ("numpy._core.multiarray", "_reconstruct"), ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise SandboxError("The sandbox sent back something it should not have; the check was dropped.")
        return super().find_class(module, name)


# ---- Inside the zygote, the monitor and the worker ----


_WALLS: list[str] | None = None


def walls() -> list[str]:
    """The second wall around the zygote, where the machine has one: Debian's ``bubblewrap`` gives it (and so
    every worker it forks) no network, read-only system and Python directories and nothing else of the file
    system (an empty /tmp). ``STUDIO_SANDBOX_BWRAP=0`` leaves it out; the
    rlimits apply either way. Probed once: where user namespaces are not allowed, bwrap cannot start."""
    global _WALLS
    if _WALLS is None:
        bwrap = shutil.which("bwrap")
        _WALLS = []
        if bwrap and os.environ.get("STUDIO_SANDBOX_BWRAP", "1") != "0":
            roots = {"/usr", "/lib", "/lib64", "/bin", "/sbin", str(ROOT), sys.prefix, sys.base_prefix,
                     os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
                     *(os.path.abspath(p) for p in sys.path if p and os.path.isdir(p))}
            # /tmp itself stays the sandbox's own, empty and writable (a script run from /tmp puts it on the path);
            # a folder under it, such as an app checked out there, is bound like any other
            roots = {p for p in roots if p not in ("/", "/tmp")}
            args = [bwrap, "--unshare-user-try", "--unshare-ipc", "--unshare-net", "--unshare-uts",
                    "--unshare-cgroup-try", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                    "--chdir", str(ROOT)]
            for path in sorted(roots):
                if not any(path.startswith(other + os.sep) for other in roots):  # a folder already bound
                    args += ["--ro-bind-try", path, path]
            args.append("--")
            probe = subprocess.run([*args, sys.executable, "-c", "pass"], capture_output=True, timeout=60)
            if probe.returncode == 0:
                _WALLS = args
            else:
                log.warning("bubblewrap cannot start here (%s): the sandbox has its rlimits only",
                            probe.stderr.decode(errors="replace").strip()[:200])
    return _WALLS


def serve_forks(fd: int, server: int) -> None:
    """The zygote's loop, once it is warm (``zygote.py``): fork a monitor for each request on the socket ``fd``
    until the server (``server``, its pid) is gone."""
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # monitors are reaped by the kernel
    while True:
        if not select.select([sock], [], [], 1.0)[0]:
            if os.getppid() != server:  # the server is gone: so are we
                return
            continue
        try:
            request, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            return
        if not request:  # the server's end closed: the server is gone
            return
        if not fds:
            continue
        if os.fork() == 0:
            try:
                sock.close()
                (_monitor if len(fds) == 1 else _monitor_serve)(request, *fds)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)


def _monitor_serve(request: bytes, conn: int, status: int) -> None:
    """Fork the long-lived worker, wait for it, and report how it ended on ``status``."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        os.close(status)
        _serve_worker(request, conn)
    os.close(conn)
    _, code = os.waitpid(pid, 0)
    _write_all(status, pickle.dumps(os.waitstatus_to_exitcode(code)))


def _serve_worker(request: bytes, fd: int) -> None:
    """Set the limits, say hello (or why not), then let the task answer requests; never returns."""
    conn = WorkerConn(socket.socket(fileno=fd))
    try:
        _, fn, args, limits = pickle.loads(request)
        conn.limits = limits
        _set_limits(limits)
        try:
            conn.send(pickle.dumps(("ready", os.getpid())))
            fn(conn, *args)
        except MemoryError:
            conn.send(pickle.dumps(("error", f"Your code needed more than {limits.memory_mb} MB of memory.")))
        except Exception as exc:
            conn.send(pickle.dumps(("error", f"The sandbox could not start this code ({type(exc).__name__}).")))
    except OSError:  # the server hung up
        pass
    finally:
        os._exit(0)


def _monitor(request: bytes, out: int) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(readable)
        os.close(out)
        _worker(request, writable)
    os.close(writable)
    chunks = []
    while chunk := os.read(readable, 1 << 16):
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    result = b"".join(chunks) or None
    _write_all(out, pickle.dumps((result, status)))


def _worker(request: bytes, out: int) -> None:
    """Set the limits, run the task, write ("ok", value) / ("memory", None) / ("error", text); never returns."""
    try:
        _, fn, args, limits = pickle.loads(request)
        _set_limits(limits)
        try:
            answer = ("ok", fn(*args))
        except MemoryError:
            answer = ("memory", None)
        except Exception as exc:
            text = str(exc).split("\n")[0][:300]
            answer = ("memory", None) if "can't allocate memory" in text else ("error", type(exc).__name__)
        _write_all(out, pickle.dumps(answer))
    finally:
        os._exit(0)


WORKER_NICE = 10  # student code yields the CPU to the server: other students' pages stay quick


def _set_limits(limits: Limits) -> None:
    os.nice(WORKER_NICE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    room = mapped + limits.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (room, room))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
    signal.alarm(limits.wall_seconds)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


_SHARED: Sandbox | None = None
_SHARED_LOCK = threading.Lock()


def shared_sandbox() -> Sandbox:
    """The one sandbox of this server process (started on first use, closed at exit)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Sandbox()
            atexit.register(_SHARED.close)
        return _SHARED

