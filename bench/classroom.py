"""A class of N students on one server, without a browser: each student is a websocket session that
speaks Streamlit's own protocol (BackMsg / ForwardMsg protobufs on ``/_stcore/stream``) and polls the
live feed the way the live chart does (studio/live_chart.js), against a real ``streamlit run app.py``.
The student is testkit/ws_client.py's (the proxy test's), with what this benchmark measures added.

Prints, for each N: lesson pages ready p50/p95 (all N open at once), Train → finished p50/p95 against
N = 1 (logistic at its default pace; the two-layer net at full speed, also against the same runs one
after another), whether every page saw live progress, errors, and the server's CPU seconds, RSS and
threads. Then the server's memory after all the sessions closed.

"Finished" is what the student's page knows: the live chart's feed answered that the run ended (the
chart then asks for the rerun that draws the finished view; its time is printed too). For the logistic
class it also prints where slow feed answers went: the feed's own time (its ``Server-Timing`` header)
against the whole answer, and the lag of the server's event loop (``/_stcore/health`` every 0.1 s) and
of this client's own loop, which would otherwise blur what it measures.

    python bench/classroom.py                 # N = 1, 5, 15, 30
    python bench/classroom.py --n 30 --only open,logistic
    python bench/classroom.py --n 60 100 --workers 2   # through python -m studio.serve and HAProxy
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from testkit import ws_client  # noqa: E402
from testkit.browser import serve, streamlit_server  # noqa: E402

RUNNING = ws_client.RUNNING
WIRE: list[int] = []  # bytes of every feed response as sent (compressed where the server compressed)


@dataclass
class Student(ws_client.Student):
    """One browser tab (testkit/ws_client.py), and what the benchmark measures of it."""

    polls: int = 0
    progress: int = 0  # feed responses, while the run went, that brought new states
    feed_bytes: list = field(default_factory=list)
    poll_seconds: list = field(default_factory=list)  # request to response, each poll
    poll_at: list = field(default_factory=list)  # when each poll was answered (monotonic)
    server_ms: list = field(default_factory=list)  # the feed's own time on each (its Server-Timing header)
    final: str = ""  # the status the feed gave when the run ended
    final_text: str = ""  # and its status line ("Finished at iteration 379 in 7.6 s.")
    train_rerun: float = float("nan")  # seconds from the Train click to its script run's end
    view_seconds: float = float("nan")  # from the Train click until the finished view was drawn

    def _noted(self, response: ws_client.Response, seconds: float) -> None:
        self.polls += 1
        self.poll_seconds.append(seconds)
        self.poll_at.append(time.monotonic())
        self.feed_bytes.append(len(response.body))
        WIRE.append(response.wire)
        timing = re.search(r"dur=([0-9.]+)", response.header("server-timing") or "")
        self.server_ms.append(float(timing.group(1)) if timing else float("nan"))
        if response.status == 200:
            data = response.json()
            self.final, self.final_text = data.get("status", ""), data.get("status_text", "")

    async def follow_run(self) -> float | None:
        """Poll the live feed as the chart does until the run ended; the time it ended (monotonic)."""
        data = self.chart or {}
        if not data.get("feed"):
            if data.get("status") in RUNNING:
                self.errors.append("the page shows a running run but no feed address")
            return time.monotonic() if data.get("status") not in RUNNING else None
        try:
            _, self.progress = await self.follow(on_response=self._noted)
        except (ws_client.FeedError, OSError) as exc:
            self.errors.append(str(exc))
            return None
        return time.monotonic()


class Server:
    """CPU seconds, RSS and threads of the server's app processes (one, or each worker of ``studio.serve``),
    summed, from /proc; its trainer processes' CPU is counted in ``cpu`` and their RSS in ``trainers_rss``."""

    def __init__(self, *pids: int) -> None:
        self.pids = pids

    def trainers(self) -> list[int]:
        """The app processes' trainer processes (studio.trainers)."""
        found = []
        for pid in self.pids:
            for task in Path(f"/proc/{pid}/task").iterdir():
                with contextlib.suppress(OSError):
                    found += [int(c) for c in (task / "children").read_text().split()]
        return [c for c in found if b"autodiff_core.pool" in _cmdline(c)]

    def cpu(self) -> float:
        total = 0.0
        for pid in (*self.pids, *self.trainers()):
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return total

    def trainers_rss(self) -> str:
        rss = []
        for pid in self.trainers():
            with contextlib.suppress(OSError):
                line = next(li for li in Path(f"/proc/{pid}/status").read_text().splitlines() if li.startswith("VmRSS"))
                rss.append(int(line.split()[1]) / 1024)
        return f"{len(rss)} trainer process{'es' * (len(rss) != 1)}, RSS {sum(rss):.0f} MB" if rss else "no trainers"

    def status(self) -> tuple[float, int]:
        rss, threads = 0.0, 0
        for pid in self.pids:
            text = Path(f"/proc/{pid}/status").read_text()
            values = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            rss, threads = rss + int(values["VmRSS"].split()[0]) / 1024, threads + int(values["Threads"])
        return rss, threads


    def where(self) -> str:
        """RSS by kind of mapping (/proc/<pid>/smaps): files (code, libraries), the main heap, and anonymous
        memory (glibc's other arenas, pymalloc's arenas, large allocations, thread stacks)."""
        kinds = {"files": 0, "heap": 0, "anonymous": 0}
        kind = "anonymous"
        for line in (line for pid in self.pids for line in Path(f"/proc/{pid}/smaps").read_text().splitlines()):
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line
                name = head[5] if len(head) > 5 else ""
                kind = "heap" if name == "[heap]" else "files" if name.startswith("/") else "anonymous"
            elif head and head[0] == "Rss:":
                kinds[kind] += int(head[1])
        return ", ".join(f"{k} {v / 1024:.0f} MB" for k, v in kinds.items())


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def quiet(server: Server, window: float = 1.0, limit: float = 60.0) -> float:
    """Wait until the server is idle (under 5 % of a core over ``window`` s): the first page starts
    background imports (studio.boot's warm-up, over a second of the GIL, more on a busy machine) that no
    class should be measured against. Returns the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        cpu = server.cpu()
        await asyncio.sleep(window)
        if server.cpu() - cpu < 0.05 * window:
            break
    return time.monotonic() - t0


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))] if values else float("nan")


async def class_opens(base: str, n: int, page: str) -> tuple[list[Student], list[float]]:
    """N students open ``page`` at the same moment; seconds until each page's script finished."""
    students = [Student(base) for _ in range(n)]

    async def one(s: Student) -> float:
        t0 = time.monotonic()
        await s.open(page)  # the page's HTML, then the websocket and the first script run
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
        end = await s.follow_run()
        if end is None:
            return float("nan")
        with contextlib.suppress(Exception):  # the rerun the chart asks for when the run ended (its section's: a
            await s.rerun(fragment_id=s.chart_fragment)  # browser sends every widget's value with a whole page's)
            s.view_seconds = time.monotonic() - t0
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


class Lag:
    """While a class trains: how late the server answers a trivial request (``/_stcore/health``, answered
    on its event loop: the lag of that loop, or of the GIL it waits for), and how late this client's own
    event loop wakes (its lag would delay what it measures)."""

    EVERY = 0.1

    def __init__(self, base: str) -> None:
        self.base, self.server, self.client = base, [], []  # (when, seconds)
        self.task: asyncio.Task | None = None

    async def _probe(self) -> None:
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(self.EVERY)
            t1 = time.monotonic()
            self.client.append((t1, t1 - t0 - self.EVERY))
            with contextlib.suppress(OSError):
                await ws_client.http_get(self.base, "/_stcore/health")
                self.server.append((t1, time.monotonic() - t1))

    def __enter__(self) -> Lag:
        self.task = asyncio.get_running_loop().create_task(self._probe())
        return self

    def __exit__(self, *exc) -> None:
        self.task.cancel()

    def summary(self, since: float = 0.0) -> str:
        parts = []
        for name, values in (("server", self.server), ("this client", self.client)):
            v = [x for t, x in values if t >= since]
            parts.append(f"{name} p50 {pct(v, 0.5) * 1e3:.0f} ms, p95 {pct(v, 0.95) * 1e3:.0f} ms, "
                         f"max {max(v, default=float('nan')) * 1e3:.0f} ms")
        return "; ".join(parts)


def slow_polls(students: list[Student], ended: float, over: float = 1.0) -> str:
    """The feed answers that took over ``over`` s: how many, how many came after the first run ended,
    and how much of each the feed itself spent (the rest waited for a thread, the GIL or the network)."""
    slow = [(t, w, ms) for st in students
            for t, w, ms in zip(st.poll_at, st.poll_seconds, st.server_ms, strict=True) if w > over]
    if not slow:
        return f"no feed answer took over {over:g} s"
    late = sum(1 for t, _, _ in slow if t >= ended)
    return (f"{len(slow)} feed answers took over {over:g} s ({late} after the first run ended; max "
            f"{max(w for _, w, _ in slow):.2f} s), of which the feed itself spent p50 "
            f"{pct([ms for *_, ms in slow], 0.5):.1f} ms, max {max(ms for *_, ms in slow):.1f} ms")


async def scenario(base: str, server: Server, n: int, what: set[str], baselines: dict) -> None:
    await quiet(server)
    cpu0 = server.cpu()
    print(f"\nN = {n}")
    errors = 0
    if "open" in what:
        students, ready = await class_opens(base, n, "logistic")
        print("  " + report("logistic pages ready", ready))
        ROW.setdefault(n, {})["ready"] = pct(ready, 0.5)
        errors += sum(len(s.errors) + len(s.exceptions) for s in students)
        await asyncio.gather(*(s.close() for s in students))
    if "logistic" in what:
        rss_before, _ = server.status()
        students, _ = await class_opens(base, n, "logistic")
        cpu_train = server.cpu()
        t_start = time.monotonic()
        with Lag(base) as lag:
            times, span = await train_all(students)
        cpu_train = server.cpu() - cpu_train
        first_end = t_start + min(_good(times), default=0.0)
        base_t = baselines.setdefault("logistic", pct(times, 0.5) if n == 1 else None)
        if base_t:
            if "train_cpu" not in baselines:  # measured once (setdefault would measure it at every N)
                baselines["train_cpu"] = training_cpu()
            need = n * baselines["train_cpu"]
            print(f"  the {n} runs' training alone (one after another, in this process): {need:.1f} s of a core "
                  f"in the {base_t:.1f} s a run lasts: {need / base_t:.0%} of one core (one app process's Python "
                  "runs on one core at a time)")
        clicks = [s.train_rerun for s in students]
        ROW.setdefault(n, {}).update(vs=(pct(_good(times), 0.5) / base_t, pct(_good(times), 0.95) / base_t) if base_t
                                     else None, click=(pct(clicks, 0.5), pct(clicks, 0.95)))
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
                  f"{pct(waits, 0.5) * 1e3:.0f} ms, p95 {pct(waits, 0.95) * 1e3:.0f} ms, max {max(waits):.2f} s; "
                  + slow_polls(students, first_end))
            print("  " + report("Train → finished view drawn (the rerun after the end)",
                                [st.view_seconds for st in students]))
            print(f"  lag while they trained: {lag.summary()}; from the first run's end: {lag.summary(first_end)}")
        errors += sum(len(s.errors) + len(s.exceptions) for s in students)
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
            ROW.setdefault(n, {})["at_once"] = span / seq_total
        print(text)
        errors += sum(len(s.errors) + len(s.exceptions) for s in students)
        await asyncio.gather(*(s.close() for s in students))
    rss, threads = server.status()
    print(f"  errors {errors}; server CPU {server.cpu() - cpu0:.1f} s (trainer processes included); RSS {rss:.0f} MB; "
          f"threads {threads}; {server.trainers_rss()}")


def training_cpu(repeat: int = 3) -> float:
    """Seconds of CPU one default lesson-3 run's training takes here, alone (the best of ``repeat``), with one
    torch thread as the server computes: what a class's runs need at least, however well the server shares."""
    import torch

    from autodiff_core import LogisticConfig, train_logistic

    torch.set_num_threads(1)
    config = LogisticConfig(record_every=1)  # as lesson 3 records
    for _ in train_logistic(config):  # the first run pays torch's first calls
        pass
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in train_logistic(config):
            pass
        best = min(best, time.process_time() - t0)
    return best


def app_server(workers: int):
    """``streamlit run app.py`` (workers 0), or ``python -m studio.serve --workers K`` behind HAProxy; yields
    (base URL, pids of the app processes)."""
    if not workers:
        with streamlit_server() as base:
            yield base, [SERVER_PIDS[-1]]
        return
    with serve(workers) as (base, pids, _log):
        yield base, list(pids.values())


async def main_async(args) -> None:
    what = set(args.only.split(","))
    with contextlib.contextmanager(app_server)(args.workers) as (base, pids):
        server = Server(*pids)
        print(f"{'one process' if not args.workers else f'studio.serve --workers {args.workers}'} "
              f"({len(pids)} app process{'es' if len(pids) > 1 else ''})")
        warm = Student(base)  # the first session pays the imports: not part of any figure
        await warm.open("logistic")
        if args.warm:  # every lesson once, each run once: what any server has paid after its first student
            await train_all([warm])
            await warm.close()
            warm = Student(base)
            await warm.open("two_layer")
            await train_all([warm])
        await warm.close()
        await asyncio.sleep(args.settle if args.warm else 1)
        await quiet(server)
        rss0, threads0 = server.status()
        print(f"server after one {'student' if args.warm else 'page'}: RSS {rss0:.0f} MB ({server.where()}), "
              f"threads {threads0}; {server.trainers_rss()}")
        baselines: dict = {}
        for n in args.n:
            await scenario(base, server, n, what, baselines)
        await asyncio.sleep(args.settle)
        rss1, threads1 = server.status()
        print(f"\nall sessions closed, {args.settle:.0f} s later: RSS {rss1:.0f} MB ({(rss1 - rss0) / rss0:+.0%} "
              f"against after one {'student' if args.warm else 'page'}; {server.where()}), threads {threads1}")
        print("\n" + table("one process" if not args.workers else f"`studio.serve --workers {args.workers}`"))


SERVER_PIDS: list[int] = []
ROW: dict[int, dict] = {}  # N -> what the summary table shows


def table(setup: str) -> str:
    """The figures of every N in one table (Markdown)."""
    lines = ["| students | setup | pages ready p50 | Train → finished vs one student (p50, p95) "
             "| the Train click's page update (p50, p95) | lesson 2 at max: at once vs one after another |",
             "|---|---|---|---|---|---|"]
    for n, row in sorted(ROW.items()):
        ready = f"{row['ready']:.2f} s" if "ready" in row else ""
        vs = f"{row['vs'][0]:.2f}× ({row['vs'][1]:.2f}×)" if row.get("vs") else ""
        click = f"{row['click'][0]:.2f} s ({row['click'][1]:.2f} s)" if "click" in row else ""
        at_once = f"{row['at_once']:.2f}×" if "at_once" in row else ""
        lines.append(f"| {n} | {setup} | {ready} | {vs} | {click} | {at_once} |")
    return "\n".join(lines)


def _track_server_pid() -> None:
    """testkit.browser.streamlit_server starts the server with subprocess.Popen: remember its pid."""
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
    parser.add_argument("--workers", type=int, default=0,
                        help="K app processes behind HAProxy through studio.serve (default: one streamlit run)")
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds to wait after the last session closed")
    parser.add_argument("--warm", action="store_true",
                        help="before measuring, one student trains in lessons 3 and 2 (memory then starts warm)")
    args = parser.parse_args()
    _track_server_pid()
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
