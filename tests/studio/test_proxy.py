"""Every core: `python -m studio.serve` with 2 workers behind HAProxy, and a class of 20 going through it.

Each student is a websocket client (testkit/ws_client.py) that keeps cookies as a browser does. Checked:
every session stays on one worker (HAProxy names the worker that answered each request), the live feed
works through the proxy, and when one worker is killed mid-run its students get a clear answer (their
websocket closes; their feed says the run is gone), a working page when they reload, and the other
worker's students finish their runs. No timings are asserted.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from studio.serve import find_haproxy
from testkit.browser import ARTIFACTS, ROOT, serve, worker_pids
from testkit.ws_client import FeedError, Student

STUDENTS = 20
HAVE_HAPROXY = find_haproxy("haproxy") is not None
pytestmark = pytest.mark.skipif(not HAVE_HAPROXY and not os.environ.get("CI"),
                                reason="haproxy is not installed: bash scripts/install-test-deps.sh")


async def open_class(url: str) -> list[Student]:
    students = [Student(url) for _ in range(STUDENTS)]
    await asyncio.gather(*(s.open("logistic") for s in students))
    return students


@pytest.mark.parametrize("args", [[], ["--tls-cert", "/etc/ssl/studio.pem"],
                                  ["--workers", "3", "--worker-address", "10.0.0.5", "--prefix", "b"]])
def test_the_printed_config_is_one_haproxy_accepts(args, tmp_path):
    config = tmp_path / "haproxy.cfg"
    config.write_text(subprocess.run([sys.executable, "-m", "studio.serve", "--print-config", *args], cwd=ROOT,
                                     check=True, capture_output=True, text=True).stdout)
    text = config.read_text()
    if "--prefix" in args:
        assert "server b3 10.0.0.5:8602 cookie b3" in text
    if "--tls-cert" in args:
        assert "ssl crt /etc/ssl/studio.pem" in text and "httponly secure" in text
        return  # haproxy -c would open the certificate
    check = subprocess.run([find_haproxy("haproxy"), "-c", "-f", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_proxy_serves_the_app_and_pins_a_session_by_cookie():
    with serve() as (url, pids, _):
        assert set(pids) == {"w1", "w2"}
        with urllib.request.urlopen(f"{url}/") as r:
            worker, cookies = r.headers["X-Studio-Worker"], r.headers.get_all("Set-Cookie")
        assert worker in pids
        [cookie] = [c for c in cookies if c.startswith("STUDIO_WORKER=")]
        assert cookie.startswith(f"STUDIO_WORKER={worker};") and "HttpOnly" in cookie
        for _ in range(5):  # with the cookie, always the same worker; without, least connections
            request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"STUDIO_WORKER={worker}"})
            with urllib.request.urlopen(request) as r:
                assert r.headers["X-Studio-Worker"] == worker
                assert not [c for c in r.headers.get_all("Set-Cookie") or [] if c.startswith("STUDIO_WORKER=")]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's certificate")
def test_haproxy_terminates_tls_for_the_page_the_websocket_and_the_cookie(tmp_path):
    import ssl

    import websockets

    key, crt, pem = tmp_path / "key.pem", tmp_path / "crt.pem", tmp_path / "studio.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", crt,
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    pem.write_bytes(crt.read_bytes() + key.read_bytes())
    trust = ssl.create_default_context(cafile=str(crt))
    with serve(workers=1, tls_cert=pem) as (url, _, _):
        with urllib.request.urlopen(f"{url}/logistic", context=trust) as r:
            assert r.status == 200 and "Strict-Transport-Security" in r.headers
            [cookie] = [c for c in r.headers.get_all("Set-Cookie") if c.startswith("STUDIO_WORKER=")]
        assert "Secure" in cookie and "HttpOnly" in cookie

        async def stream():
            async with websockets.connect(url.replace("https", "wss") + "/_stcore/stream", ssl=trust,
                                          subprotocols=["streamlit"]) as ws:
                return ws.response.status_code
        assert asyncio.run(stream()) == 101


def test_a_class_of_twenty_through_the_proxy_survives_losing_a_worker():
    with serve() as (url, pids, log_path):
        asyncio.run(_class(url, pids))
        deadline = time.monotonic() + 120  # the killed worker is started again
        while worker_pids(log_path)["w2"] == pids["w2"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "worker w2 (pid" in log_path.read_text() and worker_pids(log_path)["w2"] != pids["w2"]


async def _class(url: str, pids: dict[str, int]) -> None:
    students = await open_class(url)
    for s in students:
        assert not s.exceptions and s.titles and s.titles[-1].startswith("3 ·"), (s.titles, s.exceptions)
        assert len(set(s.workers)) == 1, s.workers  # the page and its websocket: one worker
    on = {name: [s for s in students if s.workers[0] == name] for name in pids}
    assert all(on.values()), {k: len(v) for k, v in on.items()}  # both workers took part of the class

    await asyncio.gather(*(s.set_speed("20") for s in students))  # runs of ~19 s: long enough to kill w2 mid-run
    await asyncio.gather(*(s.click("Train") for s in students))
    assert all(s.chart and s.chart.get("feed") for s in students), [s.chart for s in students]

    # Everyone follows their run through the proxy; once every student has seen it running, w2 dies.
    running, killed, before_kill = set(), asyncio.Event(), {}

    def seen(student):
        running.add(id(student))
        if len(running) == len(students) and not killed.is_set():
            before_kill.update({id(s): list(s.workers) for s in students})
            os.kill(pids["w2"], signal.SIGKILL)
            killed.set()

    async def follow(s):
        try:
            return await s.follow(on_poll=seen)
        except FeedError as exc:
            return exc
    results = await asyncio.gather(*(follow(s) for s in students))
    assert killed.is_set(), "some run ended before every student had seen it running"
    for s in students:  # page, websocket and every feed poll so far: one worker per student
        assert len(set(before_kill[id(s)])) == 1 and len(before_kill[id(s)]) >= 3, before_kill[id(s)]

    for s, result in zip(students, results, strict=True):
        if s in on["w1"]:  # the others finish, on the worker they started on, with live progress
            assert result == ("done", result[1]) and result[1] > 0, result
            assert set(s.workers) == {"w1"} and not s.closed.is_set() and not s.exceptions
        else:  # w2's students: their websocket closed, and the feed says in words that the run is gone
            await asyncio.wait_for(s.closed.wait(), 30)
            assert isinstance(result, FeedError) and result.response.status in (404, 410), result
            assert "run" in result.response.json()["error"], result  # what the chart turns into "lost"
            for page in s.gateway:  # a request caught by the kill: the proxy's page says what happened
                assert "Reload the page" in page.body.decode(), page.body

    answers = sorted({(r.response.status, r.response.body[:60]) for r in results if isinstance(r, FeedError)})
    gateway = sorted({g.status for s in on["w2"] for g in s.gateway})
    print(f"\n{len(on['w1'])} students on w1, {len(on['w2'])} on w2 (killed mid-run); w2's feed answered "
          f"{gateway} from the proxy, then {answers}")

    # w2's students reload: the same browser (same cookie), a working page on a live worker, a run that ends.
    back = [Student(url, cookies=dict(s.cookies)) for s in on["w2"]]
    await asyncio.gather(*(b.open("logistic") for b in back))
    for b in back:
        assert not b.exceptions and b.titles[-1].startswith("3 ·"), (b.titles, b.exceptions)
        assert len(set(b.workers)) == 1, b.workers
    await asyncio.gather(*(b.set_speed("max") for b in back))
    await asyncio.gather(*(b.click("Train") for b in back))
    for b, (status, _) in zip(back, await asyncio.gather(*(b.follow() for b in back)), strict=True):
        assert status == "done" and len(set(b.workers)) == 1, (status, b.workers)
    for s in students + back:
        await s.close()


@pytest.mark.browser
def test_in_the_browser_a_killed_worker_s_student_is_told_and_a_reload_works():
    """What a student sees: a run going through the proxy, its worker killed. The live chart says the run
    was lost (it reads that from the feed, which a live worker answers now); a reload gives a working page
    on a live worker, and a new run there finishes."""
    from playwright.sync_api import sync_playwright

    from testkit.browser import finished_caption, launch, set_speed, wait_idle

    with serve() as (url, pids, _), sync_playwright() as p:
        browser = launch(p)
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(f"{url}/logistic")
        wait_idle(page)
        set_speed(page, "5")  # a run of over a minute: it is surely going when the worker dies
        page.get_by_role("button", name="Train").click()
        page.wait_for_selector('.studio-live[data-status="running"]', timeout=120_000)
        [worker] = [c["value"] for c in context.cookies() if c["name"] == "STUDIO_WORKER"]
        os.kill(pids[worker], signal.SIGKILL)
        page.wait_for_selector('.studio-live[data-status="lost"]', timeout=60_000)
        told = page.locator(".studio-live .studio-status").inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "proxy-worker-killed.png"))
        assert "lost" in told.lower(), told

        page.reload()
        wait_idle(page)
        assert page.locator("h1").first.inner_text().startswith("3 ·")
        assert page.locator('[data-testid="stException"]').count() == 0
        set_speed(page, "max")
        page.get_by_role("button", name="Train").click()
        # At full speed the run may end before the live chart is ever seen running: what shows it finished
        # is the replay's caption, drawn by the script run that follows the end.
        finished_caption(page, "Finished at iteration").wait_for(timeout=120_000)
        wait_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        [now] = [c["value"] for c in context.cookies() if c["name"] == "STUDIO_WORKER"]
        page.screenshot(path=str(ARTIFACTS / "proxy-after-reload.png"))
        browser.close()
    print(f"\nkilled {worker}; the page said {told!r}; after the reload it ran on {now}")
