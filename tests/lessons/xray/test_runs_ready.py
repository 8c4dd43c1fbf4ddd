"""Lesson 4's comparison runs and their panels are computed once per config, and the server's warm-up computes the
ones the page asks for at the default settings, so the page's first visit trains and builds nothing
(studio/xray_runs.py)."""

import time

from autodiff_core.compare import custom_vs_builtin, manual_vs_optim_sgd, zero_grad_comparison
from studio import boot, xray_runs
from tests.conftest import open_tab

RUNS = (xray_runs.zero_grad_runs, xray_runs.sgd_steps, xray_runs.relu_steps)
PANELS = (xray_runs.zero_grad_panels, xray_runs.sgd_panels, xray_runs.relu_panels)
CACHED = (*RUNS, *PANELS, xray_runs.gradcheck_lab, xray_runs.ctx_traces)


def misses() -> list[int]:
    return [f.cache_info().misses for f in CACHED]


def test_the_runs_are_the_comparisons_own():
    for f in CACHED:  # computed here, in this thread: the two-layer runs' last bits depend on the thread's BLAS
        f.cache_clear()
    config = xray_runs.zero_grad_config(1.7, "cpu", "float32")
    assert xray_runs.zero_grad_runs(config) == zero_grad_comparison(config)
    assert xray_runs.sgd_steps(xray_runs.sgd_config("cpu", "float32")) == manual_vs_optim_sgd(
        xray_runs.sgd_config("cpu", "float32"), xray_runs.SGD_STEPS)
    relu = xray_runs.relu_config("cpu", "float32")
    assert xray_runs.relu_steps(relu) == custom_vs_builtin(relu)


def test_after_the_warm_up_the_page_at_its_defaults_trains_nothing(app):
    for f in CACHED:
        f.cache_clear()
    xray_runs.warm()
    before = misses()
    assert all(before), before  # the warm-up computed each
    app.switch_page("pages/xray.py").run()
    for tab in [t.label for t in app.tabs]:  # each tab as a click opens it: only the open one is drawn
        open_tab(app, tab)
    open_tab(app, "zero_grad()")
    app.radio(key="xr_zg_data").set_value(app.radio(key="xr_zg_data").options[1]).run()  # the other data set
    assert not app.exception
    assert misses() == before


def test_a_servers_warm_up_computes_them_first_giving_way_then_starts_the_trainers(monkeypatch):
    """pandas, then a first optimizer, then lesson 4's runs and panels at once after the first page (between the
    pages opened meanwhile: each part once no script runs, and their steps give way to pages), then the trainers
    after a quiet moment."""
    calls = []
    monkeypatch.setattr(boot, "wait_quiet", lambda quiet=boot.QUIET: calls.append(f"quiet {quiet:g}"))
    monkeypatch.setattr(boot, "freeze_imports", lambda: 0)
    monkeypatch.setattr("studio.trainers.TRAINERS.start", lambda: calls.append("trainers"))
    monkeypatch.setattr("studio.trainers.TRAINERS.on_demand", False)  # set again by the warm-up, undone after
    monkeypatch.setattr("autodiff_core.stopping.give_way_while",
                        lambda busy: calls.append("give way" if busy else "go on"))
    for f in CACHED:
        monkeypatch.setattr(xray_runs, f.__name__, lambda *args, name=f.__name__: calls.append(name))
    monkeypatch.setattr(boot, "first_optimizer", lambda: calls.append("optimizer"))
    monkeypatch.setattr(boot, "_started", {"preload", "warm-up"})
    boot._warm_up()
    assert calls == [f"quiet {boot.DRAWN:g}",  # plotly.js compressed, once the first page is drawn
                     "quiet 0",  # pandas, once no page's run goes
                     "quiet 0", "optimizer",  # torch._dynamo, which torch's first optimizer imports
                     "give way", "quiet 0", "zero_grad_panels", "quiet 0", "relu_panels", "quiet 0", "sgd_panels",
                     "quiet 0", "zero_grad_panels", "quiet 0", "ctx_traces", "gradcheck_lab", "go on", "quiet 3",
                     "trainers"]


def test_the_panels_are_the_figures_own():
    """What the page draws from the kept specs is what it drew from the figures (studio.charts.panel_specs)."""
    from autodiff_core.figures.xray import sgd_figure
    from studio.charts import panel_specs

    config = xray_runs.sgd_config("cpu", "float32")
    assert xray_runs.sgd_panels(config) == panel_specs(sgd_figure(xray_runs.sgd_steps(config)))
    assert len(xray_runs.sgd_panels(config)) == len(sgd_figure(xray_runs.sgd_steps(config)).layout.annotations)


def test_quiet_means_no_script_run_going_or_just_ended(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(boot.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(boot.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    boot.script_began()
    clock[0] += 5  # a long script run, still going
    assert not boot.wait_quiet(quiet=1.0, at_most=3.0)
    boot.script_ended()
    start = clock[0]
    assert boot.wait_quiet(quiet=1.0, at_most=3.0)
    assert clock[0] - start >= 1.0


def test_waiting_for_no_run_going_takes_no_cpu():
    """The warm-up waits for each page's script run to end (quiet=0) between its steps: once, that wait looked
    again at once, a core spun for as long as the page's run lasted, and the page had the other."""
    boot.script_began()  # a page's run, going
    try:
        cpu = time.thread_time()
        assert not boot.wait_quiet(quiet=0.0, at_most=0.4)
        assert time.thread_time() - cpu < 0.05
    finally:
        boot.script_ended()


def test_the_presenter_view_draws_a_copy_of_the_kept_panels(app):
    """The kept specs are shared by every session: the presenter view's larger fonts never reach them."""
    import copy

    from studio import presenter

    xray_runs.warm()
    config = xray_runs.sgd_config("cpu", "float32")
    kept = copy.deepcopy(xray_runs.sgd_panels(config))
    app.session_state[presenter.KEY] = True
    app.switch_page("pages/xray.py").run()
    open_tab(app, "Manual SGD")
    assert not app.exception
    assert xray_runs.sgd_panels(config) == kept
    import json

    from autodiff_core.figures.theme import PRESENT_FONT

    drawn = [json.loads(c.proto.spec) for c in app.get("plotly_chart") if "xr_sgd" in c.proto.id]
    assert len(drawn) == len(kept)
    assert all(d["layout"]["font"]["size"] == PRESENT_FONT for d in drawn)
    assert all(k["layout"]["font"].get("size") != PRESENT_FONT for k in kept)
