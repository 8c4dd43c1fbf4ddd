"""A class across workers: `python -m studio.serve` with 2 workers behind HAProxy, the class store on a real
redis-server. The teacher's session lives on one worker; students on both follow the teacher's live run through
the class relay, and every one of them gets the whole run. No timings are asserted."""

from __future__ import annotations

import asyncio
import os
import secrets

import pytest

from studio.room.classes import KEEP, Classes
from studio.room.store import RedisStore
from studio.serve import find_haproxy
from testkit.browser import serve
from testkit.ws_client import RUNNING, Student, http_get

pytestmark = pytest.mark.skipif(find_haproxy("haproxy") is None and not os.environ.get("CI"),
                                reason="haproxy is not installed: bash scripts/install-test-deps.sh")
QUERY = "lr_iters=120&lr_every=1&lr_stop=1.0&logistic_speed=50"


def test_students_on_both_workers_follow_a_teacher_s_run_through_redis(redis_url, monkeypatch, tmp_path):
    monkeypatch.setenv("STUDIO_STORE", redis_url)
    monkeypatch.setenv("STUDIO_DATA", str(tmp_path))
    classes = Classes(RedisStore(redis_url))
    with serve() as (url, pids, _):
        asyncio.run(_class(url, classes))


async def _follow(url: str, code: str, student: Student, run: str) -> tuple[str, set[int]]:
    """The follower's chart, as live_chart.js plays it: the run whole, then what is new, until it ends."""
    got, seq, status, layout, shown = set(), -1, "", "", ""
    for _ in range(2000):
        body = (await http_get(url, f"/api/class/{code}/live?lesson=logistic&run={shown}&after={seq}"
                                    f"&layout={layout}", student.cookies)).json()
        if body.get("full"):
            shown, seq = body["run"], -1
        layout = body.get("layout_id", layout)
        for state in body.get("states") or []:
            got.add(state["seq"])
            seq = max(seq, state["seq"])
        status = body.get("status", status)
        if shown == run and status not in RUNNING:
            return status, got
        await asyncio.sleep(0.1)
    raise AssertionError("the follower never saw the run end")


async def _class(url: str, classes: Classes) -> None:
    room, key = classes.start()
    teacher = Student(url, cookies={"studio_teacher": f"{room.code}.{key}",
                                    "studio_browser": secrets.token_urlsafe(18)}, query=QUERY)
    await teacher.open("logistic")
    students = []
    while len({s.workers[-1] for s in students} | {teacher.workers[-1]}) < 2 or len(students) < 4:
        browser = secrets.token_urlsafe(18)
        classes.join(room.code, browser, f"client-{len(students)}", "")
        classes.store.put(f"browser:{browser}:class", room.code.encode(), KEEP)
        student = Student(url, cookies={"studio_browser": browser}, query=QUERY)
        await student.open("logistic")
        students.append(student)
        assert len(students) < 20, "HAProxy put every session on one worker"
    assert classes.room(room.code).lesson == "logistic"  # the teacher's page leads from its worker
    await teacher.click("Train")
    run = teacher.chart["run"]
    followed = await asyncio.gather(*(_follow(url, room.code, s, run) for s in students))
    seq, states = -1, set()
    while True:  # the teacher's own chart, on the live feed of its worker
        body = (await teacher.poll(seq)).json()
        for state in body.get("states") or []:
            states.add(state["seq"])
            seq = max(seq, state["seq"])
        if body.get("status") not in RUNNING:
            break
        await asyncio.sleep(0.1)
    workers = {s.workers[-1] for s in students}
    assert len(workers | {teacher.workers[-1]}) == 2
    for status, got in followed:
        assert status == body["status"] == "done"
        assert max(got) == max(states)  # every follower, on either worker, saw the run to its last state
    for s in (teacher, *students):
        assert not s.exceptions, s.exceptions
        await s.close()
