"""Hostile links to lessons 2 and 5 in headless Chromium (issue 17): a link that carries a student's Function
runs nothing when it opens, shows the code as text and waits for "Check and use it"; after consent only a
Function that passes lesson 6's Check is used, and training with it ends inside the limits, said in words.

The Streamlit server's own process is watched from /proc while each link opens (its RSS and its CPU time),
and afterwards: a link must not grow it by 50 MB nor cost it a second of CPU. Every process the server
started carries a marker in its environment, so any of them that left the server's process tree is found.
The numbers measured are written to artifacts/hostile-links.json and printed with ``-s``."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from studio.session_functions import name_of, pack
from testkit.browser import ARTIFACTS, exception_boxes, launch, open_page, set_number, streamlit_server, wait_idle

pytestmark = pytest.mark.browser

RELU = CHALLENGES["relu"].solution
RETURN = "        return input.clamp(min=0)"
assert RETURN in RELU and "grad_input[input < 0] = 0" in RELU and "    def forward(ctx, input):\n" in RELU


def forward_lines(*lines: str) -> str:
    """The challenge's solution with ``lines`` (forward's body, after save_for_backward) before its return."""
    return RELU.replace(RETURN, "".join(f"        {line}\n" for line in lines) + RETURN)


PAYLOADS = {
    # (a) -False is a float: where() builds a float "index", and input[i] gathered (N, H, H) from (N, H)
    "gather": forward_lines("i = torch.where(input > 0, -False, -False)", "out = input[i]"),
    # (b) correct, but 40 more ops per call
    "slow": RELU.replace(RETURN, "        y = input.clamp(min=0)\n" + "        y = torch.sin(y) * 0 + y\n" * 40
                         + "        return y"),
    # (c) 1e-300 is 0 in float32: right in float64 (gradcheck), 1 for every input in float32 (training)
    "float32": RELU.replace(RETURN, "        return torch.where((input*0+1e-300) > 0, input.clamp(min=0), "
                                    "input.clamp(min=0) * 0 + 1)"),
    # (d) fails gradcheck: the backward's comparison flipped
    "flipped": RELU.replace("grad_input[input < 0] = 0", "grad_input[input > 0] = 0"),
    # (e) the control: the real solution
    "relu": RELU,
    # (f) markdown and links in a docstring and a comment: shown as text, never drawn
    "markdown": RELU.replace("    def forward(ctx, input):\n",
                             '    def forward(ctx, input):\n'
                             '        """**bold** see http://example.com/x and www.example.com"""\n'
                             "        # **bold** [a link](http://example.com/x) www.example.com\n"),
}
assert all(code != RELU for key, code in PAYLOADS.items() if key != "relu")

LESSONS = {"two_layer": ("tl_activation", "ReLU implementation"), "playground": ("pg_activation", "Activation")}
CONSENT = "This link carries a Function someone wrote"
MB = 2**20
RSS_LIMIT_MB = 50
CPU_LIMIT_S = 1.0
RESULTS: dict[str, dict] = {}  # link id -> what was measured, for the table


@dataclass(frozen=True)
class Link:
    payload: str
    lesson: str
    extra: str = ""  # more of the query string

    @property
    def id(self) -> str:
        return f"{self.lesson}-{self.payload}"

    @property
    def code(self) -> str:
        return PAYLOADS[self.payload]

    @property
    def name(self) -> str:
        return name_of(CHALLENGES["relu"], self.code)

    def url(self, base: str) -> str:
        key = LESSONS[self.lesson][0]
        value = urllib.parse.quote(f"{self.name} {pack(self.code)}", safe="")
        return f"{base}/{self.lesson}?{key}={value}{self.extra}"


MAX = "&two_layer_speed=max"
LINKS = [Link("gather", "two_layer", MAX), Link("slow", "two_layer", MAX), Link("float32", "two_layer", MAX),
         Link("flipped", "two_layer", MAX), Link("relu", "two_layer", MAX), Link("markdown", "two_layer", MAX),
         Link("gather", "playground"), Link("float32", "playground"), Link("relu", "playground")]


# ---- the server's processes, from /proc ----

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the command's name: [0] state, [1] ppid, [11] utime, [12] stime."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(root: int) -> set[int]:
    """Every live process under ``root`` (not ``root`` itself): the sandbox's zygote, monitors, workers."""
    children: dict[int, list[int]] = {}
    for pid in all_pids():
        try:
            children.setdefault(int(_stat(pid)[1]), []).append(pid)
        except (OSError, IndexError):
            continue
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def under(pid: int, root: int) -> bool:
    """Whether ``root`` is among ``pid``'s ancestors, read now from each one's /proc/<pid>/stat."""
    for _ in range(64):
        if pid == root:
            return True
        if pid <= 1:
            return False
        try:
            pid = int(_stat(pid)[1])
        except (OSError, IndexError, ValueError):
            return False
    return False


def marked(marker: bytes) -> set[int]:
    """Processes whose environment carries ``marker``: the server and whatever it started, wherever they are now."""
    found = set()
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker in f.read():
                    found.add(pid)
        except OSError:
            continue
    return found


class Watch(threading.Thread):
    """Every 50 ms: each process the server started (by its marker), its CPU time, and whether it is in the server's
    tree. Catches workers that live less than a sample would see, and the CPU of processes that have ended."""

    def __init__(self, server_pid: int, marker: bytes) -> None:
        super().__init__(name="hostile-links-watch", daemon=True)
        self.server_pid, self.marker, self.stop = server_pid, marker, threading.Event()
        self.cpu: dict[int, float] = {}  # pid -> its last CPU seconds seen
        self.born: dict[int, float] = {}  # pid -> when first seen (time.monotonic)
        self.outside: dict[int, str] = {}  # pid -> what it was, for those seen outside the server's tree
        self.outside_from: dict[int, float] = {}  # pid -> its CPU seconds when first seen outside
        self.lock = threading.Lock()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            for pid in marked(self.marker) - {self.server_pid}:
                try:
                    fields = _stat(pid)
                    cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
                except (OSError, IndexError):
                    continue
                with self.lock:
                    self.born.setdefault(pid, time.monotonic())
                    self.cpu[pid] = max(cpu, self.cpu.get(pid, 0.0))
                    if fields[0] not in "ZX" and not under(pid, self.server_pid):
                        what = _cmdline(pid)[:80].decode(errors="replace")
                        self.outside.setdefault(pid, f"parent {fields[1]}: {what}")
                        self.outside_from.setdefault(pid, cpu)

    def sandbox_cpu(self) -> float:
        with self.lock:
            return sum(self.cpu.values())

    def outside_cpu(self) -> float:
        """CPU seconds the server's processes spent while outside its tree."""
        with self.lock:
            return sum(self.cpu[pid] - self.outside_from[pid] for pid in self.outside)

    def outside_since(self, t: float) -> dict[int, str]:
        """Those seen outside the server's tree that were born after ``t``: what they were, CPU spent outside."""
        with self.lock:
            return {pid: f"{what}; {self.cpu[pid] - self.outside_from[pid]:.2f} s CPU outside"
                    for pid, what in self.outside.items() if self.born.get(pid, 0) >= t}

    def born_since(self, t: float) -> list[int]:
        with self.lock:
            return [pid for pid, born in self.born.items() if born >= t]


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ")
    except OSError:
        return b""


@dataclass
class Server:
    url: str
    pid: int
    marker: bytes
    log: Path
    watch: Watch

    def sample(self) -> dict:
        time.sleep(0.1)  # one more round of the watch
        return {"t": time.monotonic(), "rss": rss_bytes(self.pid), "cpu": cpu_seconds(self.pid),
                "sandbox_cpu": self.watch.sandbox_cpu(), "outside_cpu": self.watch.outside_cpu()}

    def strays(self, patience: float = 5.0) -> dict[int, str]:
        """Processes the server started that are alive outside its tree (none may be), each with its state, parent
        and command. One that is on its way out (a worker ended with its session) has ``patience`` seconds."""
        deadline = time.monotonic() + patience
        while True:
            found = {}
            for pid in marked(self.marker) - {self.pid}:
                try:
                    state, ppid = _stat(pid)[:2]
                except (OSError, IndexError):
                    continue  # gone
                if state not in "ZX" and not under(pid, self.pid):
                    found[pid] = f"state {state}, parent {ppid}: {_cmdline(pid)[:80].decode(errors='replace')}"
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.25)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def find_server(port: int) -> int:
    """The `streamlit run` process tests.browser.streamlit_server started: our child, listening on ``port``."""
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if int(_stat(pid)[1]) == os.getpid() and b"streamlit" in argv and str(port).encode() in argv:
                return pid
        except (OSError, IndexError, ValueError):
            continue
    raise RuntimeError(f"no streamlit server on port {port} among this process's children")


@pytest.fixture(scope="module")
def server():
    marker = f"STUDIO_HOSTILE_LINKS={uuid.uuid4().hex}"
    name, value = marker.split("=")
    os.environ[name] = value  # only the server inherits it: it is gone before Chromium starts
    try:
        context = streamlit_server()
        url = context.__enter__()
    finally:
        os.environ.pop(name, None)
    try:
        port = int(url.rsplit(":", 1)[1])
        log = max(ARTIFACTS.glob(f"server-{port}-*.log"), key=lambda p: p.stat().st_mtime)
        pid = find_server(port)
        watch = Watch(pid, marker.encode())
        watch.start()
        yield Server(url, pid, marker.encode(), log, watch)
        watch.stop.set()
        watch.join()
    finally:
        context.__exit__(None, None, None)


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        ctx = b.new_context(viewport={"width": 1280, "height": 720})
        # warm up: the first page, the first run of lesson 2's training and of the playground's surface
        page = open_page(ctx, f"{server.url}/two_layer?tl_steps=50{MAX}")
        page.get_by_role("button", name="Train").click()
        page.get_by_text("Finished: all 50 steps").wait_for(timeout=120_000)
        wait_idle(page)
        open_page(ctx, f"{server.url}/playground")
        ctx.close()
        wait_for_trainers(server)
        yield b
        b.close()
    write_table()


def wait_for_trainers(server, timeout: float = 120.0) -> None:
    """The server's trainer processes (``autodiff_core.pool``) start in its warm-up, after a quiet moment, whatever
    the pages: wait until all of them are up, so that a test counting the processes a link starts does not count
    them."""
    from studio.trainers import wanted

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pool = [pid for pid in descendants(server.pid) if b"autodiff_core.pool" in _cmdline(pid)]
        if len(pool) >= wanted():
            time.sleep(0.2)  # the watch (every 50 ms) has seen them
            return
        time.sleep(0.1)
    raise AssertionError(f"the server's {wanted()} trainer processes did not start in {timeout:.0f} s")


# ---- the page ----

def settle(page, *selectors: str, timeout: float = 30_000) -> None:
    """Idle, and one of ``selectors`` drawn (Streamlit loads an element's code on its first use, so the script
    may be done while the box is still a grey placeholder)."""
    wait_idle(page)
    page.locator(", ".join(selectors)).first.wait_for(state="visible", timeout=timeout)
    wait_idle(page)


def consent_box(page):
    return page.locator('[data-testid="stVerticalBlock"]').filter(has_text=CONSENT).filter(
        has=page.locator('[data-testid="stCode"]')).last


def alerts(page) -> str:
    return " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())


def selected(page, label: str) -> str:
    return page.get_by_role("combobox", name=label, exact=True).input_value()


def warnings_naming(page, key: str) -> list[str]:
    return [t for t in page.locator('[data-testid="stAlert"]').all_inner_texts() if key in t]


def open_link(server: Server, context, link: Link) -> tuple[object, dict, dict]:
    """Open ``link`` in ``context``; returns the page and the server's samples from just before the navigation
    to a second after the page is idle and drawn."""
    key, _ = LESSONS[link.lesson]
    page = context.new_page()
    before = server.sample()
    page.goto(link.url(server.url))
    settle(page, "button:has-text('Check and use it')", f'[data-testid="stAlert"]:has-text("{key}")')
    page.wait_for_timeout(1000)
    return page, before, server.sample()


def plain_cost(server: Server, browser, link: Link) -> float:
    """The server's CPU seconds to open the same lesson without the link's code, in a fresh context, the same way:
    what a link is compared with when the machine is busy."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        before = server.sample()
        page.goto(f"{server.url}/{link.lesson}?{link.extra.lstrip('&')}")
        settle(page, f'input[aria-label="{LESSONS[link.lesson][1]}"]')
        page.wait_for_timeout(1000)
        return server.sample()["cpu"] - before["cpu"]
    finally:
        context.close()


def train(page, timeout: float = 180_000) -> str:
    """Press Train on lesson 2 and wait until the run has ended; returns its last words (status and alerts)."""
    page.get_by_role("button", name="Train").click()
    status = page.get_by_text("Finished: all").or_(page.get_by_text("Stopped at step"))
    status.or_(page.locator('[data-testid="stAlert"]').filter(has_text="limit")).first.wait_for(timeout=timeout)
    wait_idle(page)
    return " ".join([*status.all_inner_texts(), alerts(page)])


def consent(page, link: Link) -> tuple[bool, str]:
    """Press "Check and use it" (lesson 6's Check in the sandbox); returns whether the Function is now the selected
    activation, and the words on the page (the box's reasons are plain st.text)."""
    label = LESSONS[link.lesson][1]
    page.get_by_role("button", name="Check and use it").click()
    settle(page, '[data-testid="stAlert"]:has-text("It was not used")',
           f'input[aria-label="{label}"][value="{link.name}"]', timeout=120_000)
    assert exception_boxes(page) == 0
    return selected(page, label) == link.name, " ".join([alerts(page), *consent_box(page).all_inner_texts()])


SANDBOX_DIED = "The sandbox stopped unexpectedly; try again."


# ---- the tests ----

@pytest.mark.parametrize("link", LINKS, ids=lambda link: link.id)
def test_a_link_with_code_runs_nothing_until_asked(server, browser, link):
    key, label = LESSONS[link.lesson]
    row = RESULTS.setdefault(link.id, {"link": link.id})
    row["plain_cpu_s"] = plain = plain_cost(server, browser, link)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page, before, after = open_link(server, context, link)
        started = server.watch.born_since(before["t"])
        row.update(open_rss_mb=(after["rss"] - before["rss"]) / MB, open_cpu_s=after["cpu"] - before["cpu"],
                   open_sandbox_cpu_s=after["sandbox_cpu"] - before["sandbox_cpu"], open_new_procs=len(started),
                   open_s=after["t"] - before["t"])

        # nothing ran: no error, no traceback, no new process under the server, the built-in still selected
        assert exception_boxes(page) == 0
        assert "Traceback" not in server.log_text()
        assert not started, f"opening the link started processes: {started}"
        assert selected(page, label) == "ReLU", selected(page, label)
        refused = warnings_naming(page, key)
        if refused:  # the validator refused the code: a warning that names the parameter, and no box
            row["outcome"] = "refused by the link"
            assert "refuses" in refused[0] and consent_box(page).count() == 0, refused
        else:
            box = consent_box(page)
            assert box.is_visible()
            assert box.locator('[data-testid="stCode"]').inner_text().strip() == link.code.strip()
            assert link.name in box.inner_text()
            assert box.get_by_role("button", name="Ignore it").is_visible()

        if link.payload == "markdown":
            assert_plain_text(page, link)
            shoot(page)
        assert after["rss"] - before["rss"] < RSS_LIMIT_MB * MB, row
        # a second of CPU or, on a busy machine (lesson 5's page alone then takes 0.7-1.0 s), no more than half a second
        # over what the same page without the link cost just before
        assert after["cpu"] - before["cpu"] < max(CPU_LIMIT_S, plain + 0.5), row
        if refused:
            return

        # consent: lesson 6's Check in the sandbox
        adopted, words = consent(page, link)
        if SANDBOX_DIED in words:  # the app's words: "try again" (recorded; seen once in ~20 checks, see THREAD_BOUND)
            row["sandbox_died"] = words.split("It was not used: ", 1)[-1][:120]
            adopted, words = consent(page, link)
        row["outcome"] = "adopted" if adopted else next(
            (t for t in page.locator('[data-testid="stAlert"]').all_inner_texts() if "It was not used" in t), words)
        if link.payload in ("gather", "float32", "flipped"):
            assert not adopted and "It was not used" in words, words
            assert consent_box(page).count() == 1  # the box stays, with the reasons as plain text
            if link.payload == "float32":
                assert "float32" in words, words
            if link.payload == "flipped":
                assert "gradcheck failed" in words, words
        else:
            assert adopted and "It was not used" not in words, words
            assert consent_box(page).count() == 0

        if adopted and link.lesson == "two_layer":
            said = train(page)
            row["train"] = said.strip()[:80]
            if link.payload == "relu":
                assert "Finished: all 500 steps" in said, said
            else:  # correct but slow: it may finish at this size, else a sentence names the limit
                assert "Finished: all 500 steps" in said or "limit" in said, said
            if link.payload == "slow":  # at a size where the built-in would run, the Function's cost is refused
                for name, value in (("D_in", 1), ("D_out", 1), ("N (batch)", 5000), ("H (hidden)", 4000)):
                    set_number(page, name, value)
                said = train(page)
                row["train_big"] = said.strip()[:120]
                assert "limit" in said and "Your Function from lesson 6 adds about" in said, said
            assert exception_boxes(page) == 0
        if adopted and link.lesson == "playground":  # the surface was drawn by the session's worker
            page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
            assert exception_boxes(page) == 0

        page.wait_for_timeout(1000)
        end = server.sample()
        row.update(end_rss_mb=(end["rss"] - before["rss"]) / MB, end_cpu_s=end["cpu"] - before["cpu"],
                   end_sandbox_cpu_s=end["sandbox_cpu"] - before["sandbox_cpu"],
                   end_outside_cpu_s=end["outside_cpu"] - before["outside_cpu"],
                   outside=server.watch.outside_since(before["t"]))
        assert "Traceback" not in server.log_text()
        assert end["rss"] - before["rss"] < RSS_LIMIT_MB * MB, row
    finally:
        context.close()
        row["strays"] = server.strays(patience=2.0)  # asserted in test_the_sandbox_stays_under_the_server


def test_the_sandbox_stays_under_the_server(server, browser):
    """The zygote lives as long as the server, and every worker stays in the server's process tree (so it dies with
    the server): after lesson 5 adopts a link's Function, its surface's worker is the server's descendant. (Once,
    PR_SET_PDEATHSIG tied the zygote to the script *thread* that started it: it died after every Check.)"""
    link = Link("relu", "playground")
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page, _, _ = open_link(server, context, link)
        adopted, words = consent(page, link)
        assert adopted, words
        page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
        page.wait_for_timeout(2000)  # the script runs that checked and drew it have ended
        strays = server.strays(patience=2.0)
        zygotes = [pid for pid in descendants(server.pid) if b"autodiff_core.grading.zygote" in _cmdline(pid)]
        assert not strays, f"processes the server started are outside its tree: {strays}"
        assert zygotes, "no sandbox process is left under the server"
    finally:
        context.close()


def test_ignore_it_drops_the_function(server, browser):
    link = Link("flipped", "playground")
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page, before, _ = open_link(server, context, link)
        page.get_by_role("button", name="Ignore it").click()
        wait_idle(page)
        page.wait_for_timeout(500)
        assert consent_box(page).count() == 0 and page.get_by_text(CONSENT).count() == 0
        assert selected(page, "Activation") == "ReLU"
        assert not server.watch.born_since(before["t"]), "ignoring the link started processes"
        assert exception_boxes(page) == 0
    finally:
        context.close()


def assert_plain_text(page, link: Link) -> None:
    """The code's markdown marks and addresses are text: no link, bold or italics drawn from them."""
    code = consent_box(page).locator('[data-testid="stCode"]').inner_text()
    for text in ("**bold**", "http://example.com/x", "www.example.com", "[a link](http://example.com/x)"):
        assert text in code, text
    anchors = page.locator("a").evaluate_all("els => els.map(e => [e.href, e.innerText])")
    assert not [a for a in anchors if "example.com" in a[0] or "example.com" in a[1]], anchors
    drawn = page.locator("strong, b, em, i").evaluate_all("els => els.map(e => e.innerText)")
    assert "bold" not in drawn and "a link" not in drawn, drawn


def shoot(page) -> None:
    """The consent box at 1280 x 720: the viewport as the page opens, the viewport scrolled to the box's buttons,
    and the box whole."""
    ARTIFACTS.mkdir(exist_ok=True)
    box = consent_box(page)
    page.screenshot(path=str(ARTIFACTS / "hostile-link-consent-viewport.png"))
    box.get_by_role("button", name="Check and use it").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "hostile-link-consent-buttons.png"))
    box.screenshot(path=str(ARTIFACTS / "hostile-link-consent-box.png"))
    page.evaluate("() => window.scrollTo(0, 0)")


COLUMNS = (("open_rss_mb", "open RSS MB", ".1f"), ("plain_cpu_s", "plain CPU s", ".2f"),
           ("open_cpu_s", "open CPU s", ".2f"),
           ("open_sandbox_cpu_s", "open sandbox s", ".2f"), ("end_rss_mb", "end RSS MB", ".1f"),
           ("end_cpu_s", "end CPU s", ".2f"), ("end_sandbox_cpu_s", "end sandbox s", ".2f"),
           ("end_outside_cpu_s", "outside s", ".2f"))


def write_table() -> None:
    """The numbers of every link: artifacts/hostile-links.json, and a table on stdout (seen with -s)."""
    if not RESULTS:
        return
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "hostile-links.json").write_text(json.dumps(list(RESULTS.values()), indent=1, default=str))
    print("\n" + f"{'link':<22}" + "".join(f"{title:>15}" for _, title, _ in COLUMNS) + "  outcome")
    for r in RESULTS.values():
        cells = "".join(f"{r[key]:>15{spec}}" if key in r else f"{'-':>15}" for key, _, spec in COLUMNS)
        said = " | ".join(str(r[k]) for k in ("outcome", "train", "train_big", "sandbox_died", "strays") if r.get(k))
        print(f"{r['link']:<22}{cells}  {said}")
