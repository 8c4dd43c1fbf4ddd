"""A class of N students on one server, without a browser: each student is a websocket session that
speaks Streamlit's own protocol (BackMsg / ForwardMsg protobufs on ``/_stcore/stream``) and polls the
live feed the way the live chart does (studio/live_chart.js), against a real ``streamlit run app.py``.

Prints, for each N: lesson pages ready p50/p95 (all N open at once), Train → finished p50/p95 against
N = 1 (logistic at its default pace; the two-layer net at full speed, also against the same runs one
after another), whether every page saw live progress, errors, and the server's CPU seconds, RSS and
threads. Then the server's memory after all the sessions closed.

    python bench/classroom.py                 # N = 1, 5, 15, 30
    python bench/classroom.py --n 30 --only open,logistic
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import json
import os
import re
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browser import streamlit_server  # noqa: E402

FEED_MS = 100  # as live_chart.js: the pause between one feed response and the next request
RUNNING = ("queued", "starting", "running")


@dataclass
class Student:
    """One browser tab: a websocket session, the elements its page drew, and its live chart's feed."""

    base: str  # http://host:port
    page: str = ""
    ws: object = None
    widgets: dict = field(default_factory=dict)  # label -> (widget id, element kind)
    component: dict | None = None  # the live chart's latest data from a script run
    component_id: str = ""
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    errors: list = field(default_factory=list)
    exceptions: int = 0
    reader: asyncio.Task | None = None
    script_runs: int = 0
    seq: int = -1  # the newest state this student's chart holds
    layout_id: str = ""
    polls: int = 0
    progress: int = 0  # feed responses, while the run went, that brought new states
    feed_bytes: list = field(default_factory=list)
    poll_seconds: list = field(default_factory=list)  # request to response, each poll
    final: str = ""  # the status the feed gave when the run ended
    final_text: str = ""  # and its status line ("Finished at iteration 379 in 7.6 s.")
    train_rerun: float = float("nan")  # seconds from the Train click to its script run's end

    async def connect(self) -> None:
        url = self.base.replace("http", "ws", 1) + "/_stcore/stream"
        self.ws = await websockets.connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=120,
                                           ping_interval=None)
        self.reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self.reader:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if kind == "delta":
                    self._element(msg.delta)
                elif kind == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self.script_runs += 1
                    self.finished.set()
        except websockets.ConnectionClosed:
            pass
        except Exception as exc:  # counted, never fatal to the other students
            self.errors.append(f"websocket: {exc!r}")

    def _element(self, delta) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        if kind == "exception":
            self.exceptions += 1
            self.errors.append(f"exception element: {el.exception.message[:200]}")
        elif kind in ("button", "slider", "number_input", "selectbox"):
            proto = getattr(el, kind)
            self.widgets[proto.label] = (proto.id, kind)
        elif kind == "bidi_component" and el.bidi_component.json:
            data = json.loads(el.bidi_component.json)
            if isinstance(data, dict) and "run" in data:  # the live chart (a page may have other components)
                self.component_id, self.component = el.bidi_component.id, data

    async def rerun(self, widgets=()) -> None:
        """Ask for a script run, as the browser does after a click; returns once it finished."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = ""
        state.page_name = self.page
        for add in widgets:
            add(state.widget_states.widgets.add())
        self.finished.clear()
        await self.ws.send(msg.SerializeToString())
        await asyncio.wait_for(self.finished.wait(), 600)

    async def open(self, page: str) -> None:
        self.page, self.component = page, None
        self.widgets.clear()
        await self.rerun()

    async def click(self, label: str) -> None:
        wid, _ = self.widgets[label]

        def add(w):
            w.id, w.trigger_value = wid, True
        await self.rerun([add])

    async def set_speed(self, value: str) -> None:
        [wid] = [w for label, (w, kind) in self.widgets.items() if kind == "slider" and label.startswith("Speed")]

        def add(w):
            w.id = wid
            w.string_array_value.data.append(value)
        await self.rerun([add])

    async def follow(self) -> float | None:
        """Poll the live feed as the chart does until the run ended; the time it ended (monotonic)."""
        data = self.component or {}
        feed = data.get("feed")
        if not feed:
            if data.get("status") in RUNNING:
                self.errors.append("the page shows a running run but no feed address")
            return time.monotonic() if data.get("status") not in RUNNING else None
        states = data.get("states") or []
        self.seq = max((s["seq"] for s in states), default=-1)
        self.layout_id = data.get("layout_id", "")
        host, port = urllib.parse.urlsplit(self.base).netloc.split(":")
        while True:
            query = urllib.parse.urlencode({"after": self.seq, "layout": self.layout_id})
            try:
                t_poll = time.monotonic()
                status, body = await http_get(host, int(port), f"{feed}?{query}")
                self.poll_seconds.append(time.monotonic() - t_poll)
            except OSError as exc:
                self.errors.append(f"feed: {exc!r}")
                await asyncio.sleep(1)
                continue
            self.polls += 1
            self.feed_bytes.append(len(body))
            if status != 200:
                self.errors.append(f"feed answered {status}")
                return None
            data = json.loads(body)
            new = data.get("states") or []
            if new:
                self.seq = max(self.seq, max(s["seq"] for s in new))
            self.layout_id = data.get("layout_id", self.layout_id)
            if data.get("status") not in RUNNING:
                self.final, self.final_text = data.get("status", ""), data.get("status_text", "")
                return time.monotonic()
            if new:
                self.progress += 1
            await asyncio.sleep(FEED_MS / 1000)


async def http_get(host: str, port: int, path: str) -> tuple[int, bytes]:
    """A minimal HTTP/1.1 GET that accepts gzip, as a browser does; returns (status, decoded body)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept-Encoding: gzip\r\n"
                     "Connection: close\r\n\r\n".encode())
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    wire = len(body)
    if headers.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    WIRE.append(wire)
    return int(lines[0].split()[1]), body


WIRE: list[int] = []  # bytes of every feed response as sent (compressed where the server compressed)


def _unchunk(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out, body = out + rest[:n], rest[n + 2:]
    return out


class Server:
    """CPU seconds, RSS and threads of the server process, from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def status(self) -> tuple[float, int]:
        text = Path(f"/proc/{self.pid}/status").read_text()
        values = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        return int(values["VmRSS"].split()[0]) / 1024, int(values["Threads"])


    def where(self) -> str:
        """RSS by kind of mapping (/proc/<pid>/smaps): files (code, libraries), the main heap, and anonymous
        memory (glibc's other arenas, pymalloc's arenas, large allocations, thread stacks)."""
        kinds = {"files": 0, "heap": 0, "anonymous": 0}
        kind = "anonymous"
        for line in Path(f"/proc/{self.pid}/smaps").read_text().splitlines():
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                name = head[5] if len(head) > 5 else ""
                kind = "heap" if name == "[heap]" else "files" if name.startswith("/") else "anonymous"
            elif head and head[0] == "Rss:":
                kinds[kind] += int(head[1])
        return ", ".join(f"{k} {v / 1024:.0f} MB" for k, v in kinds.items())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))] if values else float("nan")


async def class_opens(base: str, n: int, page: str) -> tuple[list[Student], list[float]]:
    """N students open ``page`` at the same moment; seconds until each page's script finished."""
    students = [Student(base) for _ in range(n)]

    async def one(s: Student) -> float:
        t0 = time.monotonic()
        await s.connect()
        await s.open(page)
        return time.monotonic() - t0
    ready = await asyncio.gather(*(one(s) for s in students))
    return students, list(ready)


async def train_all(students: list[Student]) -> tuple[list[float], float]:
    """Every student presses Train at once; each follows its feed. Train → finished per student, and
    the whole class's span (first click to last run finished)."""
    start = time.monotonic()

    async def one(s: Student) -> float:
        t0 = time.monotonic()
        await s.click("Train")
        s.train_rerun = time.monotonic() - t0
        end = await s.follow()
        if end is None:
            return float("nan")
        with contextlib.suppress(Exception):  # the rerun the chart asks for when the run ended
            await s.rerun()
        return end - t0
    times = await asyncio.gather(*(one(s) for s in students))
    return list(times), time.monotonic() - start


def report(label: str, values: list[float], base: float | None = None) -> str:
    good = [v for v in values if v == v]
    text = f"{label}: p50 {pct(good, 0.5):.2f} s, p95 {pct(good, 0.95):.2f} s"
    if base:
        text += f" ({pct(good, 0.5) / base:.2f}x and {pct(good, 0.95) / base:.2f}x N = 1)"
    missing = len(values) - len(good)
    return text + (f", {missing} never finished" if missing else "")


def breakdown(students: list[Student], times: list[float]) -> str:
    """Where Train → finished went: the Train click's script run, the run by its own clock (its status line:
    from its start in that script run to its end), and the rest (the run started late, or the feed saw
    its end late)."""
    own = [float(m.group(1)) if (m := re.search(r" in ([0-9.]+) s", s.final_text)) else float("nan")
           for s in students]
    rest = [t - o for t, o in zip(times, own, strict=True)]
    parts = [("Train's script run", [s.train_rerun for s in students]), ("the run by its own clock", own),
             ("the rest", rest)]
    return "where it went: " + "; ".join(f"{name} p50 {pct(_good(v), 0.5):.2f} s, p95 {pct(_good(v), 0.95):.2f} s"
                                         for name, v in parts)


def _good(values: list[float]) -> list[float]:
    return [v for v in values if v == v]


async def scenario(base: str, server: Server, n: int, what: set[str], baselines: dict) -> None:
    cpu0 = server.cpu()
    print(f"\nN = {n}")
    errors = 0
    if "open" in what:
        students, ready = await class_opens(base, n, "logistic")
        print("  " + report("logistic pages ready", ready))
        errors += sum(len(s.errors) for s in students)
        await asyncio.gather(*(s.close() for s in students))
    if "logistic" in what:
        rss_before, _ = server.status()
        students, _ = await class_opens(base, n, "logistic")
        cpu_train = server.cpu()
        times, span = await train_all(students)
        cpu_train = server.cpu() - cpu_train
        base_t = baselines.setdefault("logistic", pct(times, 0.5) if n == 1 else None)
        live = sum(1 for s in students if s.progress > 0)
        rss_open, _ = server.status()
        print("  " + report("logistic at the default pace, Train → finished", times, base_t)
              + f"; live progress on {live} of {n} pages; {(rss_open - rss_before) / n:.1f} MB RSS per open session")
        print("  " + breakdown(students, times) + f"; server CPU {cpu_train:.1f} s in the {span:.1f} s from the "
              "clicks to the last finished view")
        polls = [b for s in students for b in s.feed_bytes]
        if polls:
            waits = [t for s in students for t in s.poll_seconds]
            print(f"  feed: {len(polls)} polls, median {pct(polls, 0.5) / 1e3:.2f} KB decoded, "
                  f"median {pct(WIRE, 0.5) / 1e3:.2f} KB on the wire; a poll answered in p50 "
                  f"{pct(waits, 0.5) * 1e3:.0f} ms, p95 {pct(waits, 0.95) * 1e3:.0f} ms, max {max(waits):.2f} s")
        errors += sum(len(s.errors) for s in students)
        await asyncio.gather(*(s.close() for s in students))
    if "two_layer" in what:
        students, _ = await class_opens(base, n, "two_layer")
        for s in students:
            await s.set_speed("max")
        times, span = await train_all(students)
        seq_total = 0.0
        if n > 1:  # the same n runs one after another
            for s in students:
                t, _ = await train_all([s])
                seq_total += t[0]
        base_t = baselines.setdefault("two_layer", pct(times, 0.5) if n == 1 else None)
        text = "  " + report("two-layer at max, Train → finished", times, base_t)
        if n > 1:
            text += f"; all {n} at once {span:.1f} s against {seq_total:.1f} s one after another " \
                    f"({span / seq_total:.2f}x)"
        print(text)
        errors += sum(len(s.errors) for s in students)
        await asyncio.gather(*(s.close() for s in students))
    rss, threads = server.status()
    print(f"  errors {errors}; server CPU {server.cpu() - cpu0:.1f} s; RSS {rss:.0f} MB; threads {threads}")


async def main_async(args) -> None:
    what = set(args.only.split(","))
    with streamlit_server() as base:
        pid = SERVER_PIDS[-1]
        server = Server(pid)
        warm = Student(base)  # the first session pays the imports: not part of any figure
        await warm.connect()
        await warm.open("logistic")
        if args.warm:  # every lesson once, each run once: what any server has paid after its first student
            await train_all([warm])
            await warm.open("two_layer")
            await train_all([warm])
        await warm.close()
        await asyncio.sleep(args.settle if args.warm else 1)
        rss0, threads0 = server.status()
        print(f"server after one {'student' if args.warm else 'page'}: RSS {rss0:.0f} MB ({server.where()}), "
              f"threads {threads0}")
        baselines: dict = {}
        for n in args.n:
            await scenario(base, server, n, what, baselines)
        await asyncio.sleep(args.settle)
        rss1, threads1 = server.status()
        print(f"\nall sessions closed, {args.settle:.0f} s later: RSS {rss1:.0f} MB ({(rss1 - rss0) / rss0:+.0%} "
              f"against after one {'student' if args.warm else 'page'}; {server.where()}), threads {threads1}")


SERVER_PIDS: list[int] = []


def _track_server_pid() -> None:
    """tests.browser.streamlit_server starts the server with subprocess.Popen: remember its pid."""
    import subprocess

    original = subprocess.Popen.__init__

    def init(self, *a, **kw):
        original(self, *a, **kw)
        if a and "streamlit" in a[0]:
            SERVER_PIDS.append(self.pid)
    subprocess.Popen.__init__ = init


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1, 5, 15, 30])
    parser.add_argument("--only", default="open,logistic,two_layer")
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds to wait after the last session closed (runs are released 10 s after)")
    parser.add_argument("--warm", action="store_true",
                        help="before measuring, one student trains in lessons 3 and 2 (memory then starts warm)")
    args = parser.parse_args()
    _track_server_pid()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
