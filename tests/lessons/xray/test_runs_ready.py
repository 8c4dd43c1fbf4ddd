"""Lesson 4's comparison runs are computed once per config, and the server's warm-up computes the ones the page
asks for at the default settings, so the page's first visit trains nothing (studio/xray_runs.py)."""

from autodiff_core.compare import custom_vs_builtin, manual_vs_optim_sgd, zero_grad_comparison
from studio import boot, xray_runs

CACHED = (xray_runs.zero_grad_runs, xray_runs.sgd_steps, xray_runs.relu_steps)


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
    xray_runs.warm()
    before = misses()
    app.switch_page("pages/xray.py").run()
    assert not app.exception
    app.radio(key="xr_zg_data").set_value(app.radio(key="xr_zg_data").options[1]).run()  # the other data set
    assert not app.exception
    assert misses() == before


def test_a_servers_warm_up_computes_them_each_after_a_quiet_moment(monkeypatch):
    calls = []
    monkeypatch.setattr(boot, "wait_quiet", lambda: calls.append("quiet"))
    monkeypatch.setattr(boot, "freeze_imports", lambda: 0)
    monkeypatch.setattr("studio.trainers.TRAINERS.start", lambda: calls.append("trainers"))
    for f in CACHED:
        monkeypatch.setattr(xray_runs, f.__name__, lambda config, name=f.__name__: calls.append(name))
    monkeypatch.setattr(boot, "_started", {"preload", "warm-up"})
    boot._warm_up()
    assert calls == ["quiet", "quiet", "trainers", "quiet", "zero_grad_runs", "quiet", "relu_steps", "quiet",
                     "sgd_steps", "quiet", "zero_grad_runs"]


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
