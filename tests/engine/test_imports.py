"""The engine's boundaries (``autodiff_core/__init__.py``): the engine imports torch and numpy, never plotly or
Streamlit (``figures/`` alone draws); nothing in ``autodiff_core`` imports the app (``studio``, ``pages``), nor
``studio`` a page; and the modules of the engine and of the app import one another without a cycle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "autodiff_core"
UI = ("plotly", "streamlit")
APP = ("studio", "pages")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of a package (``autodiff_core`` by default), by dotted name (a package by its own name)."""
    return {module_name(p): p for p in sorted(package.rglob("*.py"))}


def engine_modules() -> list[str]:
    """``autodiff_core`` itself, its top-level modules and ``grading``'s: all of it but ``figures``."""
    return [m for m in package_modules() if not m.startswith("autodiff_core.figures")]


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """(module imported, line) for every ``import``/``from`` statement, at the top or in a function; for
    ``from X import name``, ``X.name`` too (it may be a module). ``if TYPE_CHECKING:`` blocks never run: skipped."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.append((target, node.lineno))
            found.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found


def ui_loaded_on_import(modules: list[str]) -> dict[str, list[str]]:
    """Import ``modules`` one after another in a fresh interpreter: {module: UI packages its import loaded}."""
    code = ("import importlib, json, sys\n"
            f"ui, seen, out = {UI!r}, set(), {{}}\n"
            "for m in sys.argv[1:]:\n"
            "    importlib.import_module(m)\n"
            "    new = {n.split('.')[0] for n in sys.modules if n.split('.')[0] in ui} - seen\n"
            "    seen |= new\n"
            "    out[m] = sorted(new)\n"
            "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code, *modules], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_autodiff_core_loads_no_ui_library():
    assert ui_loaded_on_import(["autodiff_core"]) == {"autodiff_core": []}


def test_no_engine_module_loads_a_ui_library_when_imported():
    """Each engine module in turn, in one fresh interpreter: the first whose import loads plotly or streamlit is
    named (so is a module that imports it)."""
    loaded = {m: ui for m, ui in ui_loaded_on_import(engine_modules()).items() if ui}
    assert not loaded, "; ".join(f"importing {m} loaded {', '.join(ui)}" for m, ui in loaded.items())


def test_the_engine_source_imports_no_ui_library_even_in_a_function():
    """A function-level ``import plotly`` would pass the test above and still make the engine draw."""
    found = [f"{path.relative_to(ROOT)}:{line} imports {target}"
             for module, path in package_modules().items() if module in engine_modules()
             for target, line in imports(module, path) if target.split(".")[0] in UI]
    assert not found, "\n".join(found)


def test_autodiff_core_never_imports_the_app():
    found = [f"{path.relative_to(ROOT)}:{line} imports {target}"
             for module, path in package_modules().items()
             for target, line in imports(module, path) if target.split(".")[0] in APP]
    assert not found, "\n".join(found)


def import_graph(*packages: Path) -> dict[str, set[str]]:
    modules = {m: p for package in packages or (PACKAGE,) for m, p in package_modules(package).items()}
    return {m: {t for t, _ in imports(m, p) if t in modules and t != m} for m, p in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as [a, b, ..., a], or None."""
    state: dict[str, str] = {}  # "open" while on the path, "done" once every way out of it is explored
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := walk(nxt)):
                return cycle
        path.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := walk(start)):
            return cycle
    return None


def test_find_cycle_names_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_autodiff_core_has_no_import_cycles():
    """Counting function-level imports too: one there to dodge a cycle at import time is still a cycle."""
    graph = import_graph()
    assert "autodiff_core.grading.judge" in graph["autodiff_core.grading.zygote"]  # the graph sees the package
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_studio_never_imports_a_page():
    found = [f"{path.relative_to(ROOT)}:{line} imports {target}"
             for module, path in package_modules(ROOT / "studio").items()
             for target, line in imports(module, path) if target.split(".")[0] == "pages"]
    assert not found, "\n".join(found)


def test_the_app_has_no_import_cycles():
    """``studio`` and the engine together, function-level imports counted (``if TYPE_CHECKING:`` ones never run)."""
    graph = import_graph(PACKAGE, ROOT / "studio")
    assert "studio.budget" in graph["studio.runner"]  # the graph sees the app's own imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
