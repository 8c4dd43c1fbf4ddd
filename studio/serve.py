"""Every core: K ``streamlit run app.py`` workers behind HAProxy, started and watched by one command.

    python -m studio.serve                      # K = the cores this process may use, on port 8501
    python -m studio.serve --workers 4 --port 80
    python -m studio.serve --port 443 --tls-cert /etc/ssl/private/studio.pem   # HAProxy terminates TLS
    python -m studio.serve --print-config       # the HAProxy config it would use, then exit
    python -m studio.serve --no-proxy --worker-address 10.0.0.5 --prefix a   # workers only, for a proxy elsewhere

One Python process serves all its sessions under one GIL, so a class on one process uses one core. Each
worker here is a separate process on ``127.0.0.1:worker-port+i``; HAProxy (Debian's ``haproxy``
package) listens on the public port and keeps each session on one worker by a cookie, so the session's
websocket and its live feed reach the process that holds them (``deploy/haproxy.cfg``).

A worker that dies is started again after a second; HAProxy's health check takes it out meanwhile, and
its students' next request goes to another worker. Ctrl+C (or SIGTERM) stops everything.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
RESTART_AFTER = 1.0  # seconds before a dead worker is started again
HEALTH_TIMEOUT = 180.0  # seconds a worker may take to answer its first health check


def default_workers() -> int:
    """The cores this process may use (a container's CPU set, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS
        return max(1, os.cpu_count() or 1)


def trainers_each(workers: int) -> int:
    """Trainer processes each worker starts (``studio.trainers``): the cores shared among the workers, at least 1."""
    return max(1, default_workers() // max(1, workers))


@dataclass
class Worker:
    name: str
    port: int
    address: str = "127.0.0.1"
    proc: subprocess.Popen | None = None
    starts: int = 0
    died_at: float | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "::", "") else self.address
        return f"http://{host}:{self.port}"


@dataclass
class Options:
    workers: int = field(default_factory=default_workers)
    port: int = 8501
    address: str = "0.0.0.0"
    worker_port: int = 8600
    tls_cert: str | None = None
    haproxy: str = "haproxy"
    restart: bool = True
    worker_address: str = "127.0.0.1"
    proxy: bool = True
    prefix: str = "w"  # worker names, also their cookie values: one prefix per machine behind one proxy


def haproxy_config(opts: Options, workers: list[Worker]) -> str:
    """deploy/haproxy.cfg with its placeholders filled in."""
    template = string.Template((DEPLOY / "haproxy.cfg").read_text(encoding="utf-8"))
    bind = f"{opts.address}:{opts.port}"
    tls_rules = ""
    if opts.tls_cert:
        bind += f" ssl crt {opts.tls_cert} alpn h2,http/1.1"
        tls_rules = ("    http-request set-header X-Forwarded-Proto https\n"
                     "    http-response set-header Strict-Transport-Security \"max-age=31536000\"")
    servers = "\n".join(f"    server {w.name} {w.url[len('http://'):]} cookie {w.name}" for w in workers)
    return template.substitute(BIND=bind, TLS_RULES=tls_rules, SERVERS=servers, ERRORS=DEPLOY / "errors",
                               COOKIE_SECURE=" secure" if opts.tls_cert else "")


def worker_command(port: int, address: str = "127.0.0.1") -> list[str]:
    """One app process, on the loopback by default: HAProxy is the one door in."""
    return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
            "--server.port", str(port), "--server.address", address,
            "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]


def healthy(url: str) -> bool:
    """Whether the server at ``url`` answers its health check. Anything else is "not yet", an answer that is not
    HTTP included: a look at a port where nothing listens yet can connect to itself (the kernel may give the asking
    socket that very port) and read back its own request, "GET /_stcore/health HTTP/1.1", as the status line."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except (OSError, http.client.HTTPException):
        return False


def find_haproxy(name: str) -> str | None:
    """``name`` on the PATH, else in /usr/sbin (where Debian puts it, off a normal user's PATH)."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")


def listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


class Cluster:
    """The workers and HAProxy: ``start()``, then ``watch()`` until told to stop, then ``stop()``."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.workers = [Worker(f"{opts.prefix}{i + 1}", opts.worker_port + i, opts.worker_address)
                        for i in range(opts.workers)]
        self.haproxy: subprocess.Popen | None = None
        self.stopping = False
        self._dir: Path | None = None  # where the filled-in config goes: the app's folder may be read-only

    def _start_worker(self, w: Worker) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", STUDIO_WORKER=w.name)
        env.setdefault("STUDIO_TRAINERS", str(trainers_each(len(self.workers))))
        w.proc = subprocess.Popen(worker_command(w.port, w.address), cwd=ROOT, env=env)
        w.starts += 1
        w.died_at = None
        say(f"worker {w.name} pid {w.proc.pid} on {w.url}" + (f" (start {w.starts})" if w.starts > 1 else ""))

    def start(self) -> None:
        haproxy = find_haproxy(self.opts.haproxy) if self.opts.proxy else None
        if self.opts.proxy and haproxy is None:
            raise SystemExit(f"{self.opts.haproxy} is not installed: `apt-get install haproxy` (Debian, Ubuntu).")
        self._start_workers()
        if haproxy is None:
            say(f"ready: {len(self.workers)} workers, no proxy (--no-proxy)")
        else:
            self._start_proxy(haproxy)

    def _start_workers(self) -> None:
        for w in self.workers:
            self._start_worker(w)
        deadline = time.monotonic() + HEALTH_TIMEOUT
        waiting = list(self.workers)
        while waiting:
            for w in list(waiting):
                if w.proc.poll() is not None:
                    raise SystemExit(f"worker {w.name} exited with {w.proc.returncode} while starting")
                if healthy(w.url):
                    waiting.remove(w)
            if waiting and time.monotonic() > deadline:
                raise SystemExit(f"workers {[w.name for w in waiting]} did not answer within {HEALTH_TIMEOUT:.0f} s")
            time.sleep(0.25)

    def _start_proxy(self, haproxy: str) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="studio-serve-"))
        config = self._dir / "haproxy.cfg"
        config.write_text(haproxy_config(self.opts, self.workers), encoding="utf-8")
        check = subprocess.run([haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit(f"HAProxy refused {config}:\n{check.stdout}{check.stderr}")
        self.haproxy = subprocess.Popen([haproxy, "-db", "-f", str(config)])
        scheme = "https" if self.opts.tls_cert else "http"
        host = "localhost" if self.opts.address in ("0.0.0.0", "::", "") else self.opts.address
        while not listening(host, self.opts.port):
            if self.haproxy.poll() is not None:
                raise SystemExit(f"haproxy exited with {self.haproxy.returncode} while starting")
            time.sleep(0.1)
        say(f"haproxy pid {self.haproxy.pid}")
        say(f"ready: {scheme}://{host}:{self.opts.port} ({len(self.workers)} workers)")

    def watch_once(self) -> None:
        """Restart workers that died (after ``RESTART_AFTER``); stop everything if HAProxy died."""
        if self.haproxy is not None and self.haproxy.poll() is not None:
            raise SystemExit(f"haproxy exited with {self.haproxy.returncode}")
        now = time.monotonic()
        for w in self.workers:
            if w.proc is None or w.proc.poll() is None:
                continue
            if w.died_at is None:
                w.died_at = now
                say(f"worker {w.name} (pid {w.proc.pid}) exited with {w.proc.returncode}; its sessions are lost, "
                    "their students get another worker when they reload")
            elif self.opts.restart and now - w.died_at >= RESTART_AFTER:
                self._start_worker(w)

    def watch(self) -> None:
        while not self.stopping:
            self.watch_once()
            time.sleep(0.2)

    def stop(self) -> None:
        self.stopping = True
        procs = [p for p in [self.haproxy, *(w.proc for w in self.workers)] if p is not None and p.poll() is None]
        for p in procs:
            p.terminate()
        deadline = time.monotonic() + 10
        for p in procs:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


def say(text: str) -> None:
    print(f"studio.serve: {text}", flush=True)


def parse(argv: list[str] | None = None) -> tuple[Options, bool]:
    p = argparse.ArgumentParser(prog="python -m studio.serve", description=__doc__.split("\n\n")[0])
    d = Options()
    p.add_argument("--workers", "-k", type=int, default=d.workers, help=f"app processes (default: {d.workers}, "
                   "the cores this process may use)")
    p.add_argument("--port", type=int, default=d.port, help="the public port HAProxy listens on (default 8501)")
    p.add_argument("--address", default=d.address, help="the address HAProxy binds (default 0.0.0.0: every "
                   "interface, so students on the LAN can reach it)")
    p.add_argument("--worker-port", type=int, default=d.worker_port, help="first worker's port on 127.0.0.1 "
                   "(default 8600; the workers use K ports from there)")
    p.add_argument("--tls-cert", help="a PEM file holding the certificate and its key: HAProxy then serves HTTPS")
    p.add_argument("--haproxy", default=d.haproxy, help="the haproxy binary (default: haproxy on the PATH)")
    p.add_argument("--no-restart", dest="restart", action="store_false", help="leave a dead worker down")
    p.add_argument("--worker-address", default=d.worker_address, help="the address the workers bind (default "
                   "127.0.0.1; a LAN address when a proxy on another machine sends them students)")
    p.add_argument("--no-proxy", dest="proxy", action="store_false", help="start and watch the workers only; "
                   "put `--print-config`'s server lines into your own HAProxy")
    p.add_argument("--prefix", default=d.prefix, help="worker names and cookie values are PREFIX1..PREFIXK "
                   "(default w); give each machine its own when one proxy serves several")
    p.add_argument("--print-config", action="store_true", help="print the HAProxy config and exit")
    a = p.parse_args(argv)
    if a.workers < 1:
        p.error("--workers must be at least 1")
    opts = Options(a.workers, a.port, a.address, a.worker_port, a.tls_cert, a.haproxy, a.restart,
                   a.worker_address, a.proxy, a.prefix)
    return opts, a.print_config


def main(argv: list[str] | None = None) -> None:
    opts, print_only = parse(argv)
    cluster = Cluster(opts)
    if print_only:
        print(haproxy_config(opts, cluster.workers))
        return

    def stop(signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        cluster.start()
        cluster.watch()
    except KeyboardInterrupt:
        pass
    finally:
        say("stopping")
        cluster.stop()


if __name__ == "__main__":
    main()
