"""Setting up as a newcomer does: `streamlit run app.py` starts at once, from a checkout it never writes to,
and the first page does not wait for the warm-up."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from studio import assets, boot
from testkit.browser import COMPILE, free_port

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", "__pycache__", ".pytest_cache", ".ruff_cache", "artifacts", ".venv"}


def checkout_files() -> set[Path]:
    return {p.relative_to(ROOT) for p in ROOT.rglob("*") if not SKIP.intersection(p.relative_to(ROOT).parts)}


def test_a_fresh_account_with_a_desktop_starts_without_a_prompt(tmp_path):
    """A first `streamlit run` on an account with a display once stopped at 'Welcome to Streamlit! ... Email:'."""
    port = free_port()
    env = os.environ | {"HOME": str(tmp_path), "DISPLAY": ":0", "BROWSER": "true", "PYTHONUNBUFFERED": "1"}
    env.pop("STREAMLIT_SERVER_HEADLESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1"],
                            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline, body = time.monotonic() + 60, None
        while body is None and proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                    body = r.read()
            except OSError:
                time.sleep(0.25)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{assets.PLOTLY_JS_URL}", timeout=10) as r:
            plotly_js = r.read()
    finally:
        proc.terminate()
        output = proc.communicate(timeout=10)[0].decode()
    assert body == b"ok", output
    assert "Email" not in output and "Welcome to Streamlit" not in output, output
    assert plotly_js == assets.plotly_js_path().read_bytes()  # the installed package's own file


def test_plotly_js_comes_from_the_installed_package():
    import plotly

    path = assets.plotly_js_path()
    assert path == Path(plotly.__file__).parent / "package_data" / "plotly.min.js" and path.is_file()
    js = (ROOT / "studio" / "live_chart.js").read_text()
    assert f'"{assets.PLOTLY_JS_URL}"' in js  # the live chart loads it from the route that serves it


def test_a_page_run_writes_nothing_into_the_checkout(app):
    """The checkout can be read-only (a Docker image): plotly.js was once copied into ./static at start-up."""
    before = checkout_files()
    app.switch_page("pages/custom_function.py").run()
    assert not app.exception
    assert checkout_files() - before == set()


def test_the_first_page_does_not_wait_for_the_warm_up(new_app, monkeypatch):
    release, entered = threading.Event(), threading.Event()

    def slow_warm_up():  # stands in for the optimizer import: it takes as long as the test likes
        entered.set()
        release.wait(30)

    monkeypatch.setattr(boot, "_started", set())
    monkeypatch.setattr(boot, "_warm_up", slow_warm_up)
    try:
        at = new_app()
        at.run()  # returns although the warm-up is still going
        assert not at.exception and at.title[0].value == "Autograd Studio"
        assert entered.wait(10), "the warm-up was not started"
        at.run()
        assert not boot.warm_up(), "the warm-up runs once per process"
    finally:
        release.set()


def pins(name: str) -> dict[str, str]:
    """{distribution (normalised): version} of the ``name==version`` lines of a requirements file."""
    found = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            dist, _, version = line.partition("==")
            assert version, f"{name}: {line!r} is not pinned with =="
            found[re.sub(r"[-_.]+", "-", dist).lower()] = version
    return found


def test_every_third_party_import_is_pinned_and_locked():
    """A package the code imports must be pinned (starlette once was not), and the lock must agree."""
    direct = pins("requirements.txt") | pins("requirements-dev.txt")
    locked = pins("constraints.txt")
    imported = set()
    for path in ROOT.rglob("*.py"):
        if SKIP.intersection(path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    local = {p.name for p in ROOT.iterdir() if p.is_dir()} | {p.stem for p in ROOT.rglob("*.py")}
    local |= {p.parent.name for p in ROOT.rglob("__init__.py")}  # packages of the repo's own (tests/studio/toy_lesson)
    distributions = importlib.metadata.packages_distributions()
    for module in sorted(imported - set(sys.stdlib_module_names) - local):
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in distributions.get(module, [module])}
        assert dists & direct.keys(), f"'import {module}' but none of {dists} is pinned in requirements*.txt"
    for dist, version in direct.items():
        assert locked.get(dist) == version, f"{dist}=={version} in requirements*.txt, {locked.get(dist)} in the lock"


def test_ci_runs_the_readme_test_command_exactly():
    readme = (ROOT / "README.md").read_text()
    test_section = readme[readme.index("## Test it"):]
    command = re.search(r"```bash\n(.*?)\n```", test_section, re.S).group(1)
    assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install")
    assert "-c constraints.txt" in command and "python -m pytest" in command
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == command


def test_the_readme_run_commands_use_the_lock():
    readme = (ROOT / "README.md").read_text()
    run_section = readme[readme.index("## Run it"):readme.index("## Test it")]
    commands = re.findall(r"```bash\n(.*?)\n```", run_section, re.S)
    assert len(commands) == 2 and all(c.endswith(f"-c constraints.txt && {COMPILE} && streamlit run app.py")
                                      for c in commands)
    assert "--index-url https://download.pytorch.org/whl/cpu" in commands[1]


def test_the_servers_first_request_starts_the_preload(monkeypatch):
    """Not earlier: importing torch while the server starts delayed its health check by a second or more."""
    import asyncio

    calls = []
    monkeypatch.setattr(boot, "preload", lambda: calls.append("preload"))

    async def app(scope, receive, send):
        calls.append(scope["type"])

    middleware = boot.PreloadOnFirstRequest(app)
    for kind in ("lifespan", "http", "websocket", "http"):
        asyncio.run(middleware({"type": kind}, None, None))
    assert calls == ["lifespan", "preload", "http", "websocket", "http"]


def script_imports(path: Path, main_only: bool = False) -> set[str]:
    """The ``studio`` modules a script imports (in app.py, those of its ``__main__`` branch: every page's run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if main_only:
        [branch] = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
        tree = ast.Module(body=branch.body, type_ignores=[])
    return {n.module for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("studio.")}


def test_the_preload_imports_what_every_pages_first_run_imports():
    """The server's preload loads app.py's own modules and the home page's with the engine, while the browser loads
    Streamlit; the first page's script run then finds them loaded."""
    wanted = script_imports(ROOT / "app.py", main_only=True) | script_imports(ROOT / "pages" / "home.py")
    wanted.discard("studio.boot")  # the module that preloads
    assert wanted and wanted <= set(boot.SHELL), wanted - set(boot.SHELL)


FIRST_PAGE = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120)
at.run()
assert not at.exception, [e.value for e in at.exception]
print(sorted(name for name in ("pandas", "pyarrow") if name in sys.modules))
"""


def test_the_home_pages_first_run_imports_no_pandas():
    """Streamlit checks a component's data for a dataframe, and the check imports pandas and pyarrow (0.4 s): the
    class memory's cookies once made a new browser's first page pay that. (A fresh interpreter: this one may have
    imported them for other tests.)"""
    done = subprocess.run([sys.executable, "-c", FIRST_PAGE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
