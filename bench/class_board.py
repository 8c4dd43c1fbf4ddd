"""A class's store under a class's load: 30 students send to the board at once, on SQLite and on Redis.

For each store, side by side in one run: 30 threads (the students' sessions of one server process) and, to
count what other workers do, 2 processes of 15 each, join the class and press "Send to class" together. It
prints how long until the teacher's board reads every submission (target: within 1 s), and what one board
read costs. Redis runs only where `redis-server` is installed (scripts/install-test-deps.sh).

    python bench/class_board.py [--students 30] [--rounds 5]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from studio.room.classes import Classes  # noqa: E402
from studio.room.store import RedisStore, SQLiteStore, open_store  # noqa: E402

_SEND = """
import sys, threading, time
from studio.room.classes import Classes
from studio.room.store import open_store
spec, code, first, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
c = Classes(open_store(spec))
def one(i):
    s = c.join(code, f"p{i}", f"10.1.{i // 250}.{i % 250}", f"P{i}")
    time.sleep(max(0.0, go - time.time()))
    c.submit(s, code, {"lesson": "logistic", "run_id": "r", "settings": {"lr_lr": 0.01 * i},
                       "figures": {"loss": 1 / (i + 1)}})
ts = [threading.Thread(target=one, args=(first + k,)) for k in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
"""


def board_time(c: Classes, code: str, n: int, go: float) -> float:
    while len(c.submissions(code)) < n:
        time.sleep(0.002)
    return time.time() - go


def in_threads(c: Classes, n: int) -> float:
    room, _ = c.start()
    students = [c.join(room.code, f"t{i}", f"10.0.{i // 250}.{i % 250}", f"T{i}") for i in range(n)]
    go = time.time() + 0.2
    def send(s):
        time.sleep(max(0.0, go - time.time()))
        c.submit(s, room.code, {"lesson": "logistic", "run_id": "r", "settings": {"lr_lr": 0.1},
                                "figures": {"loss": 0.3}})
    ts = [threading.Thread(target=send, args=(s,)) for s in students]
    for t in ts:
        t.start()
    took = board_time(c, room.code, n, go)
    for t in ts:
        t.join()
    return took


def in_processes(c: Classes, spec: str, n: int) -> float:
    room, _ = c.start()
    go = time.time() + 3.0  # the processes import and join first
    half = n // 2
    procs = [subprocess.Popen([sys.executable, "-c", _SEND, spec, room.code, str(k * half), str(half), str(go)],
                              cwd=Path(__file__).resolve().parents[1]) for k in range(2)]
    took = board_time(c, room.code, 2 * half, go)
    for p in procs:
        p.wait(60)
    return took


def read_cost(c: Classes, n: int) -> float:
    room, _ = c.start()
    for i in range(n):
        c.submit(c.join(room.code, f"r{i}", f"10.2.0.{i}", ""), room.code, {"lesson": "l", "run_id": "r",
                                                                          "figures": {"loss": 0.5}})
    t0 = time.perf_counter()
    for _ in range(50):
        c.submissions(room.code)
    return (time.perf_counter() - t0) / 50


def redis_server():
    exe = shutil.which("redis-server")
    if exe is None:
        return None, None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "--port", str(port), "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(200):
        try:
            RedisStore(url)
            return proc, url
        except Exception:
            time.sleep(0.05)
    proc.kill()
    return None, None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="class-board-")
    proc, url = redis_server()
    stores = {"sqlite": f"sqlite:///{folder}/classes.sqlite3"} | ({"redis": url} if url else {})
    print(f"{args.students} students press Send to class at once; {args.rounds} rounds; medians (max)")
    rows = {}
    for name, spec in stores.items():
        c = Classes(open_store(spec))
        t = [in_threads(c, args.students) for _ in range(args.rounds)]
        p = [in_processes(c, spec, args.students) for _ in range(args.rounds)]
        rows[name] = statistics.median(p)
        print(f"  {name:6s}  one process: all on the board in {statistics.median(t) * 1e3:6.1f} ms "
              f"(max {max(t) * 1e3:.1f})   two worker processes: {statistics.median(p) * 1e3:6.1f} ms "
              f"(max {max(p) * 1e3:.1f})   a board read of {args.students}: {read_cost(c, args.students) * 1e3:.2f} ms")
    if len(rows) == 2:
        print(f"  redis / sqlite, two processes: {rows['redis'] / rows['sqlite']:.2f}x")
    if proc is not None:
        proc.terminate()
    if isinstance(open_store(stores["sqlite"]), SQLiteStore):
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
