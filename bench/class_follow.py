"""A class follows the teacher's live run, without a browser: the teacher and N students are websocket sessions
(testkit/ws_client.py) against a real ``streamlit run app.py`` (or ``python -m studio.serve`` and HAProxy), and
each student's live chart is played as studio/live_chart.js plays it in follow mode: it asks the class relay
(``/api/class/<code>/live``) for what is new, and its watch (``/api/class/<code>/watch``) reruns its page when
the class changes.

Prints, side by side in one run:
- the states a second each follower received while the teacher's paced run went (lesson 3, every iteration
  drawn), against the teacher's own chart;
- how far behind the teacher's own chart each state reached the followers (p50, p95, max over every state of
  every follower);
- the teacher's run at full speed with N followers against the same run with none (Train → finished).

    python bench/class_follow.py                       # N = 30, one process, SQLite
    python bench/class_follow.py --n 100 --workers 2   # through studio.serve and HAProxy
    python bench/class_follow.py --store redis         # the class store on a redis-server this starts
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from testkit.browser import free_port, serve, streamlit_server  # noqa: E402
from testkit.ws_client import RUNNING, Student, http_get  # noqa: E402

PACED = "lr_iters=400&lr_every=1&lr_stop=1.0&logistic_speed=50"  # 50 drawn states a second for 8 s
FULL = "lr_iters=8000&lr_every=20&lr_stop=1.0&logistic_speed=max"


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


class Chart:
    """One live chart: what it received, and when (monotonic seconds) each state first reached it."""

    def __init__(self) -> None:
        self.run, self.seq, self.layout, self.seen, self.status = "", -1, "", {}, ""

    def took(self, body: dict) -> None:
        if body.get("full"):
            self.run, self.seq, self.layout = body["run"], -1, body.get("layout_id", "")
        self.layout = body.get("layout_id", self.layout)
        now = time.monotonic()
        for state in body.get("states") or []:
            if state["seq"] > self.seq:
                self.seq = state["seq"]
            self.seen.setdefault(state["seq"], now)
        if "status" in body:
            self.status = body["status"]

    def rate(self) -> float:
        times = sorted(self.seen.values())
        return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0


async def teacher_chart(teacher: Student, chart: Chart) -> None:
    """The teacher's own live chart, on the live feed, until its run ends."""
    chart.took(teacher.chart)
    while True:
        response = await teacher.poll(chart.seq, chart.layout)
        body = response.json()
        chart.took(body)
        if body.get("status") not in RUNNING:
            return
        await asyncio.sleep(0.1)


async def follower(base: str, code: str, student: Student, chart: Chart, run: str, stop: asyncio.Event,
                   direct: Student | None = None) -> None:
    """A follower's chart and watch, as live_chart.js and studio/room/watch.py play them. ``direct``: the chart
    reads the teacher's own live feed instead, with the teacher's cookies, so a proxy sends it to the teacher's
    worker (the other way to reach followers: every follower's poll on the teacher's worker)."""
    async def watch() -> None:
        value = ""
        while not stop.is_set():
            answer = (await http_get(base, f"/api/class/{code}/watch?what=version&since={value}",
                                     student.cookies)).json()
            if value != "" and str(answer["value"]) != value:
                await student.rerun()  # the page redraws for the class's change (the teacher's run started)
            value = str(answer["value"])

    watcher = asyncio.create_task(watch())
    try:
        while True:
            if direct is not None:
                if not chart.run:
                    chart.run = run
                path = f"{direct.chart['feed']}?after={chart.seq}&layout={chart.layout}"
            else:
                path = (f"/api/class/{code}/live?lesson=logistic&run={chart.run}&after={chart.seq}"
                        f"&layout={chart.layout}")
            response = await http_get(base, path, (direct or student).cookies)
            body = response.json() if response.status == 200 else {}
            chart.took(body)
            if chart.run == run and chart.status and chart.status not in RUNNING:
                return
            await asyncio.sleep(0.1 if chart.status in RUNNING else 0.4)
    finally:
        stop.set()
        watcher.cancel()


async def one_class(base: str, data: Path, n: int, query: str, direct: bool = False
                    ) -> tuple[Chart, list[Chart], float]:
    """A class of ``n`` followers watches one teacher run of ``query``; returns the teacher's chart, the
    followers' charts and the teacher's Train → finished seconds."""
    from studio.room.classes import KEEP, Classes
    from studio.room.store import open_store

    classes = Classes(open_store(os.environ.get("STUDIO_STORE", "")))
    room, key = classes.start()
    teacher = Student(base, cookies={"studio_teacher": f"{room.code}.{key}",
                                     "studio_browser": secrets.token_urlsafe(18)}, query=query)
    await teacher.open("logistic")
    students = []
    for i in range(n):
        browser = secrets.token_urlsafe(18)
        classes.join(room.code, browser, f"bench-{i}", f"S{i}")
        classes.store.put(f"browser:{browser}:class", room.code.encode(), KEEP)
        students.append(Student(base, cookies={"studio_browser": browser}, query=query))
    await asyncio.gather(*(s.open("logistic") for s in students))
    charts, stop = [Chart() for _ in students], [asyncio.Event() for _ in students]
    mine = Chart()
    t0 = time.monotonic()
    await teacher.click("Train")
    run = teacher.chart["run"]
    followers = [asyncio.create_task(follower(base, room.code, s, c, run, e, teacher if direct else None))
                 for s, c, e in zip(students, charts, stop, strict=True)]
    await teacher_chart(teacher, mine)
    took = time.monotonic() - t0
    await asyncio.wait_for(asyncio.gather(*followers), 120)
    for s in (teacher, *students):
        await s.close()
    return mine, charts, took


@contextlib.contextmanager
def redis_server():
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server is not installed (scripts/install-test-deps.sh)")
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()


async def main_async(args) -> None:
    data = Path(tempfile.mkdtemp(prefix="class-follow-"))
    os.environ["STUDIO_DATA"] = str(data)
    with contextlib.ExitStack() as stack:
        if args.store == "redis":
            os.environ["STUDIO_STORE"] = stack.enter_context(redis_server())
        if args.workers:
            base, _, _ = stack.enter_context(serve(workers=args.workers))
        else:
            base = stack.enter_context(streamlit_server())
        print(f"{args.workers or 1} worker process(es), store {args.store}; lesson 3, every iteration drawn at "
              "50 a second")
        await one_class(base, data, 1, PACED)  # warm: torch loaded, the page's first run done
        for n in args.n:
            for way, direct in (("through the store", False), ("on the teacher's worker", True)):
                mine, charts, _ = await one_class(base, data, n, PACED, direct)
                rates = [c.rate() for c in charts]
                behind = [seen - mine.seen[seq] for c in charts for seq, seen in c.seen.items() if seq in mine.seen]
                missed = sum(len(set(mine.seen) - set(c.seen)) for c in charts)
                print(f"  {n} followers {way}: states/s p5 {pct(rates, 0.05):.1f}, p50 {pct(rates, 0.5):.1f} "
                      f"(teacher's own chart {mine.rate():.1f}); behind the teacher's chart p50 "
                      f"{pct(behind, 0.5):.2f} s, p95 {pct(behind, 0.95):.2f} s, max {max(behind):.2f} s; states "
                      f"the teacher's chart had that a follower never got: {missed}")
        for n in args.n:  # alternated, three of each: the machine's own drift falls on both
            times = {"alone": [], "through the store": [], "on the teacher's worker": []}
            for _ in range(3):
                times["alone"].append((await one_class(base, data, 0, FULL))[2])
                times["through the store"].append((await one_class(base, data, n, FULL))[2])
                times["on the teacher's worker"].append((await one_class(base, data, n, FULL, True))[2])
            a = sorted(times["alone"])[1]
            said = ", ".join(f"{sorted(t)[1]:.2f} s with {n} followers {way} ({sorted(t)[1] / a:.2f}x)"
                             for way, t in times.items() if way != "alone")
            print(f"  full speed, 8,000 iterations (median of 3): Train -> finished {a:.2f} s alone, {said}")
    shutil.rmtree(data, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[30])
    parser.add_argument("--workers", type=int, default=0, help="0: streamlit run app.py; else studio.serve")
    parser.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
