"""Helpers for driving the real app in headless Chromium: used by the browser tests, bench/ and scripts/."""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from studio.serve import healthy  # the servers' own health check (an answer that is not HTTP is "not yet")

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"
# Where a Chromium is looked for, in this order; scripts/install-chromium.sh looks in the same places.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
MAC_APPS = ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
            "/Applications/Chromium.app/Contents/MacOS/Chromium")


def find_chromium() -> str | None:
    """The browser the tests drive: $STUDIO_CHROMIUM, else an installed Chromium or Chrome, else None,
    which means Playwright's own Chromium (``python -m playwright install chromium``)."""
    if os.environ.get("STUDIO_CHROMIUM"):
        return os.environ["STUDIO_CHROMIUM"]
    for name in BROWSER_NAMES:
        if path := shutil.which(name):
            return path
    return next((app for app in MAC_APPS if os.access(app, os.X_OK)), None)


CHROMIUM = find_chromium()
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What the README's run commands compile before ``streamlit run app.py``: the app's own modules, as bytecode
APP_SOURCES = ("app.py", "autodiff_core", "pages", "studio")
COMPILE = f"python -m compileall -q {' '.join(APP_SOURCES)}"


def compile_app(root: Path = ROOT) -> None:
    """Compile the app in ``root`` as the README's run command does, so that a server started there reads its
    modules' bytecode (where Python may not write it, as here, it compiled them on every start)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", *APP_SOURCES], cwd=root, check=True)


@contextlib.contextmanager
def streamlit_server(port: int | None = None, root: Path = ROOT):
    """``streamlit run app.py`` in ``root`` (this checkout by default) on ``port`` (a free one by default);
    yields its base URL and stops it afterwards. A test that restarts the server passes the same port twice."""
    port = port or free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / f"server-{port}-{time.time():.0f}.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start; see {log.name}")
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        proc.kill()
        log.close()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)


def wait_idle(page, timeout: float = 60_000) -> None:
    """Wait until the script has finished its current run (never on content that may be stale).

    Waits on the attribute alone (attached, not 'visible'): a reconnecting overlay must not count as
    busy. On a time-out a screenshot is saved to artifacts/ for whoever looks next."""
    page.wait_for_timeout(150)  # let a run triggered by the last action begin
    try:
        page.wait_for_selector(IDLE, state="attached", timeout=timeout)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"wait-idle-timeout-{int(time.time())}.png"), full_page=True)
        raise


def save_pages(browser, name: str) -> list[tuple[str, str]]:
    """Every tab open in ``browser``, as a test that failed left it: a full-page screenshot in
    artifacts/<name>-<n>.png (n counts the tabs in the order they opened), and (title, text) for the report, the
    title naming the tab's address and its script's state, the text what the page says (its first 2,000
    characters); and for a tab ``open_page`` opened, a second section: its ``Trail``. A tab that cannot be read
    (it closed, or it hangs) is left out."""
    ARTIFACTS.mkdir(exist_ok=True)
    seen = []
    for n, page in enumerate((p for c in browser.contexts for p in c.pages), start=1):
        try:
            page.screenshot(path=str(ARTIFACTS / f"{name}-{n}.png"), full_page=True, timeout=10_000)
            state = page.evaluate("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState")
            text = page.inner_text("body", timeout=5_000)
        except Exception:  # noqa: BLE001 - what the screens showed, for whoever reads the failure; never a new one
            continue
        seen.append((f"tab {n}: {page.url} (script {state}; artifacts/{name}-{n}.png)", text[:2_000]))
        if lines := trail(page):
            seen.append((f"tab {n}: what it did, latest last", "\n".join(lines)))
    return seen


# The presenter view's stylesheet is an st.html, which Streamlit draws with a component it loads on first use: under
# load the page can be idle, its graph or chart on screen, a moment before the stylesheet applies
PRESENTER_STYLED = """() => { const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  return main && getComputedStyle(main).paddingTop === '36px'; }"""


# In each tab the tests open: every press and click, with what it landed on (the nearest control), and each change
# of the script's state, told to the test through the console (``Trail``)
TRAIL_INIT_JS = """(() => {
  const say = (what) => console.debug('studio-trail ' + what);
  for (const kind of ['pointerdown', 'click']) {
    document.addEventListener(kind, (e) => {
      const hit = e.target instanceof Element ? e.target : null;
      const control = hit && hit.closest('button, summary, input, textarea, label, a, [role]');
      const label = control && (control.innerText || control.getAttribute('aria-label') || '').trim().slice(0, 40);
      const name = control ? `${control.tagName.toLowerCase()} "${label}"${control.disabled ? ' (disabled)' : ''}`
        : (hit ? hit.tagName.toLowerCase() : '?');
      say(`${kind} on ${name} at (${Math.round(e.clientX)}, ${Math.round(e.clientY)})`);
    }, true);
  }
  let state = null;
  const look = () => {
    const now = document.querySelector('[data-testid=stApp]')?.dataset.testScriptState;
    if (now && now !== state) { state = now; say(`script ${now}`); }
  };
  new MutationObserver(look).observe(document, {subtree: true, attributes: true,
                                                attributeFilter: ['data-test-script-state']});
})()"""


class Trail:
    """What one tab did, for the report of a test that fails (``save_pages``): its presses and clicks and what each
    landed on, its script's runs, and each rerun it asked the server for (the button or component that asked, if
    one did, and whether for the whole page or a fragment), with the time on this machine's clock
    to set beside the server's log. A click that a loaded machine lost shows as a click with no rerun after it."""

    KEPT = 60  # the latest lines

    def __init__(self, page) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=self.KEPT)
        page.add_init_script(TRAIL_INIT_JS)
        page.on("console", self._console)
        page.on("websocket", self._socket)
        page.on("framenavigated", lambda frame: frame == page.main_frame and self.add(f"at {frame.url[:120]}"))

    def add(self, line: str) -> None:
        now = time.time()
        self.lines.append(f"{time.strftime('%H:%M:%S', time.localtime(now))}.{int(now * 1000) % 1000:03d} {line}")

    def _console(self, message) -> None:
        if message.text.startswith("studio-trail "):
            self.add(message.text.removeprefix("studio-trail "))

    def _socket(self, socket) -> None:
        self.add("websocket opened")
        socket.on("framesent", self._sent)
        socket.on("close", lambda _: self.add("websocket closed"))

    def _sent(self, payload) -> None:
        if isinstance(payload, str):
            return
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        with contextlib.suppress(Exception):  # only for reading; a message it cannot read is left out
            msg.ParseFromString(bytes(payload))
        if msg.WhichOneof("type") != "rerun_script":
            return
        rerun = msg.rerun_script
        asked = [w.id.rsplit("-", 1)[-1] for w in rerun.widget_states.widgets
                 if w.WhichOneof("value") in ("trigger_value", "json_trigger_value")
                 and getattr(w, w.WhichOneof("value"))]
        scope = f"fragment {rerun.fragment_id[:8]}" if rerun.fragment_id else "the page"
        self.add(f"asked the server to rerun {scope}" + (f", for {', '.join(asked)}" if asked else ""))


def trail(page) -> list[str]:
    """The lines of ``page``'s ``Trail`` (none for a tab that ``open_page`` did not open)."""
    found = getattr(page, "studio_trail", None)
    return list(found.lines) if found else []


def open_page(context, url: str):
    """A new tab at ``url``, once its first script run has ended (and, in the presenter view, once its stylesheet
    applies). The tab keeps a ``Trail`` for a failed test's report."""
    page = context.new_page()
    page.studio_trail = Trail(page)
    page.goto(url)
    wait_idle(page)
    if "present=1" in url:
        page.wait_for_function(PRESENTER_STYLED, timeout=30_000)
    return page


# An expander opens with an animation (a fifth of a second, longer on a loaded machine) while the page below it moves
# over its content: a button in it keeps its place, so Playwright finds it steady, but a press begun on it can end on
# the page that slides past and do nothing. Open means open and still.
EXPANDER_OPEN = """(title) => {
  const box = [...document.querySelectorAll('details')]
    .find((d) => d.querySelector('summary')?.innerText.includes(title));
  return !!box && box.open && box.getAnimations({subtree: true}).every(
    (a) => a.playState !== 'running' || a.effect?.getComputedTiming().endTime === Infinity);
}"""


def open_expander(page, title: str) -> None:
    """Open the expander titled ``title`` as a student does, and wait until it has finished opening."""
    page.get_by_text(title).first.click()
    page.wait_for_function(EXPANDER_OPEN, arg=title, timeout=30_000)


TAB_DRAWN = """(name) => {
  const tab = [...document.querySelectorAll('[role=tab]')].find((t) => t.innerText.trim() === name);
  const panel = tab && document.getElementById(tab.getAttribute('aria-controls'));
  const app = document.querySelector('[data-testid=stApp]');
  return !!panel && tab.getAttribute('aria-selected') === 'true' && panel.offsetHeight > 0
    && panel.innerText.trim().length > 0 && app && app.dataset.testScriptState === 'notRunning';
}"""


def open_tab(page, name: str) -> None:
    """Open the tab ``name`` as a student does, and wait for what it draws: lesson 4 draws only its open tab, so a
    click reruns the page for it; done once the tab is selected, its panel shows something, and the run is over."""
    page.get_by_role("tab", name=name, exact=True).click()
    wait_idle(page)
    page.wait_for_function(TAB_DRAWN, arg=name, timeout=60_000)


def set_number(page, label: str, value) -> None:
    """Type into a number input the way a student does (select, type, Enter)."""
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def set_speed(page, value: str) -> None:
    """Move the speed slider with the keyboard, as a student does: End for 'max', else Home then right-arrows,
    each key once the script run of the one before has ended, until the address bar holds the speed."""
    from studio.lessons import SPEEDS

    slider = page.get_by_role("slider", name=re.compile(r"^Speed"))
    keys = ["End"] if value == SPEEDS[-1] else ["Home"] + ["ArrowRight"] * SPEEDS.index(value)
    for _ in range(3):
        for key in keys:
            wait_idle(page)
            slider.press(key)
        wait_idle(page)
        if re.search(rf"_speed={re.escape(value)}(&|$)", page.url):
            return
    raise AssertionError(f"the speed slider did not reach {value!r}: {page.url}")


def play_then_pause(page, step: int, timeout: float = 240.0) -> None:
    """Lesson 5 at full speed until its live chart has painted ``step``, then Pause, and the finished view."""
    set_speed(page, "max")
    page.get_by_role("button", name="Play", exact=True).click()
    page.wait_for_function(f"() => Number(document.querySelector('.studio-live')?.dataset.painted) >= {step}",
                           timeout=timeout * 1000)
    page.get_by_role("button", name="Pause", exact=True).click()
    wait_idle(page)


def slow_step(page) -> None:
    """Lesson 5's Step in slow motion, up to its heading (its tables, graph and update under it)."""
    page.get_by_text("Slow motion", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Step", exact=True).click()
    wait_idle(page)
    page.get_by_text("Step 1 in slow motion").wait_for()


SAMPLER_JS = """(ms) => {
  window.__studioSamples = [];
  window.__studioSampler = setInterval(() => {
    const root = document.querySelector('.studio-live');
    const plot = root && root.querySelector('.js-plotly-plot');
    const box = plot ? plot.getBoundingClientRect() : null;
    window.__studioSamples.push({t: performance.now() / 1000, painted: root ? root.dataset.painted ?? null : null,
      paints: root ? Number(root.dataset.paints || 0) : 0,
      status: root ? root.dataset.status ?? null : null,
      script: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState ?? null,
      visible: !!(box && box.width > 0 && box.height > 0 && plot.querySelector('.main-svg'))});
  }, ms);
}"""


STOP_SAMPLER_JS = "() => { clearInterval(window.__studioSampler); return window.__studioSamples; }"


def sample_live(*pages, seconds: float, interval_ms: int = 40) -> list[list[dict]]:
    """Sample the live chart inside each page every ``interval_ms`` for the same ``seconds`` (no round
    trips from here while it runs): what is painted, and whether a chart is on screen at all.
    Returns one list of samples per page."""
    for page in pages:
        page.evaluate(SAMPLER_JS, interval_ms)
    time.sleep(seconds)
    return [page.evaluate(STOP_SAMPLER_JS) for page in pages]


def painted_rate(samples: list[dict]) -> tuple[float, int, int]:
    """(states painted per second while running, distinct states seen, samples with no chart on screen).

    The chart counts its own paints (each one a new state, since states only move forward), so the
    sampler need not catch every paint and can stay light enough not to slow what it measures."""
    running = [s for s in samples if s.get("status") == "running"]
    if len(running) < 2:
        return 0.0, 0, 0
    paints = running[-1]["paints"] - running[0]["paints"]
    distinct = len({s["painted"] for s in running if s["painted"] is not None})
    blank = sum(1 for s in running if not s["visible"])
    return paints / (running[-1]["t"] - running[0]["t"]), distinct, blank


def painted(page) -> int:
    """The newest state the live chart has painted (its step or iteration)."""
    return int(page.locator(".studio-live").get_attribute("data-painted"))


def wait_painted(page, step: int, timeout: float = 30.0) -> None:
    """Wait until the live chart has painted state ``step`` or a later one."""
    page.wait_for_function(f"() => Number(document.querySelector('.studio-live')?.dataset.painted) >= {step}",
                           timeout=timeout * 1000)


def plot_data(page, index: int = 0) -> list[dict]:
    """The data of the index-th Plotly chart on the page, read from the div itself."""
    page.wait_for_function("(i) => document.querySelectorAll('.js-plotly-plot')[i]?.data", arg=index)
    return page.evaluate("""(i) => {
      const div = document.querySelectorAll('.js-plotly-plot')[i];
      return div ? div.data.map(t => ({name: t.name, x: Array.from(t.x || []), y: Array.from(t.y || [])})) : null;
    }""", index)


def playground_replay(page, steps: int) -> None:
    """Lesson 5 as a student gets its replay: Play at full speed until the chart has painted ``steps``, Pause, and
    switch the replay on (the page's Plotly figure then loads)."""
    wait_painted(page, 0, timeout=60.0)
    set_speed(page, "max")
    page.get_by_role("button", name="Play").click()
    wait_painted(page, steps, timeout=60.0)
    page.get_by_role("button", name="Pause").click()
    wait_idle(page)
    page.get_by_text("Replay the run as an animation").click()


def finished_caption(page, text: str):
    """The caption over a finished logistic run's replay (not the live chart's status line)."""
    return page.get_by_test_id("stCaptionContainer").get_by_text(text)


def exception_boxes(page) -> int:
    return page.locator('[data-testid="stException"]').count()


def free_ports(n: int) -> int:
    """The first of ``n`` consecutive free ports."""
    for _ in range(50):
        first = free_port()
        if first + n < 65535 and all(_free(first + i) for i in range(1, n)):
            return first
    raise RuntimeError("no consecutive free ports")


def _free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def serve(workers: int = 2, tls_cert=None):
    """``python -m studio.serve`` on free ports; yields (proxy URL, {worker name: pid}, log path)."""
    from studio.serve import find_haproxy

    assert find_haproxy("haproxy"), "haproxy is not installed: bash scripts/install-test-deps.sh"
    port, worker_port = free_port(), free_ports(workers)
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / f"serve-{port}.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed in finally
    tls = ["--tls-cert", str(tls_cert)] if tls_cert else []
    proc = subprocess.Popen([sys.executable, "-m", "studio.serve", "--workers", str(workers), "--port", str(port),
                             "--worker-port", str(worker_port), "--address", "127.0.0.1", *tls],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"{'https' if tls_cert else 'http'}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while "studio.serve: ready:" not in log_path.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"studio.serve did not start; see {log_path}")
            time.sleep(0.25)
        yield url, worker_pids(log_path), log_path
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(20)
        proc.kill()
        log.close()


def worker_pids(log_path) -> dict[str, int]:
    """The newest pid of each worker, from studio.serve's own lines."""
    pids = {}
    for name, pid in re.findall(r"studio\.serve: worker (w\d+) pid (\d+)", log_path.read_text()):
        pids[name] = int(pid)
    return pids
