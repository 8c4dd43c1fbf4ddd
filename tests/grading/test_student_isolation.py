"""A student's Function never runs in the server: lessons 2 and 5 train with it in a sandboxed worker of the
run's own, sized to the run, which Stop and the limits end at once, with a sentence that says which limit."""

from __future__ import annotations

import time

import pytest
import torch

from autodiff_core.grading import validator
from autodiff_core.grading.challenges import CHALLENGES
from studio.budget import estimate
from tests.conftest import process_alive, wait_for_run

pytestmark = pytest.mark.timeout(300)
RELU = CHALLENGES["relu"].solution


@pytest.fixture
def no_student_code_here(monkeypatch):
    """The server process must never compile (let alone run) a student's code: make it impossible here."""
    def refuse(*args, **kwargs):
        raise AssertionError("student code was compiled in the server process")

    monkeypatch.setattr(validator, "compile_function", refuse)
    monkeypatch.setattr(validator, "load", refuse)


def adopted(new_app, source: str = RELU):
    """An AppTest whose session checked ``source`` in lesson 6 and pressed Use; returns it and the name."""
    at = new_app()
    at.switch_page("pages/write_function.py").run()
    at.toggle(key="wf_plain").set_value(True).run()
    at.text_area(key="wf_text_relu").input(source).run()
    at.button(key="wf_check").click().run()
    at.button(key="wf_use").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [name] = at.session_state["wf_activations"]
    return at, name


def train(at, page: str, lesson: str, button: str = "", **settings):
    at.switch_page(page).run()
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()
    at.button(key=button or f"{lesson}_train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_lesson_2_trains_with_a_student_function_in_its_own_worker(new_app, no_student_code_here):
    at, name = adopted(new_app)
    train(at, "pages/two_layer.py", "two_layer", tl_activation=name, tl_steps=60, two_layer_speed="max")
    run = wait_for_run(at, "two_layer")
    assert run.status == "done", run.message
    mine = [s.loss for s in run.snapshots]
    train(at, "pages/two_layer.py", "two_layer", tl_activation="ReLU")
    tutorial = [s.loss for s in wait_for_run(at, "two_layer").snapshots]
    assert mine == tutorial  # the same numbers as MyReLU, step for step, computed in the worker
    assert run.cost.worker is not None and run.cost.worker.memory_mb >= 256  # a worker sized to the run


def test_lesson_5_snapshots_and_trains_with_a_student_function(new_app, no_student_code_here):
    at, name = adopted(new_app)
    at.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_activation").select(name).run()  # the surface is drawn: the worker computed it
    assert not at.exception and at.session_state["pg_session"].history[-1].surface
    at.button(key="pg_step").click().run()  # one step, in the session's worker
    assert not at.exception and at.session_state["pg_session"].model.steps_done == 1
    at.button(key="pg_play").click().run()
    run = at.session_state["playground_run"]
    deadline = time.monotonic() + 30
    while run.count < 3 and run.running and time.monotonic() < deadline:
        time.sleep(0.05)
    at.button(key="pg_pause").click().run()
    run = wait_for_run(at, "playground")
    assert run.status == "stopped" and run.count > 1, run.message
    assert not at.exception


SLOW = RELU.replace("return input.clamp(min=0)",
                    "y = input.clamp(min=0)\n        " + "\n        ".join(["y = torch.sin(y) * 0 + y"] * 60)
                    + "\n        return y")


def test_stop_ends_the_worker_mid_call(new_app):
    at, name = adopted(new_app, SLOW)
    train(at, "pages/two_layer.py", "two_layer", tl_activation=name, tl_N=1000, tl_H=500, tl_steps=100, tl_lr=1e-9,
          two_layer_speed="max")
    run = at.session_state["two_layer_run"]
    deadline = time.monotonic() + 60
    while run._worker is None and run.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert run.running, (run.status, run.message)
    time.sleep(0.5)
    assert run._worker is not None, (run.status, run.message, run.running)
    pid = run._worker.channel.pid
    assert pid and process_alive(pid)
    t0 = time.monotonic()
    run.stop()
    while process_alive(pid) and time.monotonic() - t0 < 2:
        time.sleep(0.01)
    assert not process_alive(pid), "the worker outlived Stop"
    assert time.monotonic() - t0 < 0.5
    run.join(10)
    assert run.status == "stopped"


def test_the_run_estimate_counts_the_function(new_app):
    from autodiff_core import TwoLayerConfig
    from autodiff_core.grading.remote import StudentActivation

    config = TwoLayerConfig()
    cheap = StudentActivation("yours: ReLU (a)", RELU, "relu", cost=(16.0, 1e-8))
    dear = StudentActivation("yours: ReLU (b)", RELU, "relu", cost=(4000.0, 1e-5))
    base, one, two = estimate(config), estimate(config, cheap), estimate(config, dear)
    assert base.memory < one.memory < two.memory and base.step_seconds < one.step_seconds < two.step_seconds
    assert two.worker.memory_mb > one.worker.memory_mb
    big = estimate(TwoLayerConfig(N=10_000, H=5_000, D_in=10, D_out=10), dear)
    from studio.budget import BUDGET

    assert "Your Function from lesson 6 adds about" in BUDGET.refuse(big)  # refused up front, with the reason


def test_a_limit_reached_while_the_page_draws_is_one_sentence(new_app, monkeypatch):
    from autodiff_core.grading import remote

    at, name = adopted(new_app)
    monkeypatch.setattr(remote, "CALL_SECONDS", 1e-4)  # every call of it is now "too slow"
    for fn in at.session_state["wf_functions"].values():
        fn.close()
    at.switch_page("pages/playground.py").run()
    at.selectbox(key="pg_activation").select(name).run()
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(e.value for e in at.error)
    assert "Your Function from lesson 6 was stopped: One call of your Function took longer than" in said


def test_a_run_over_its_memory_says_so(new_app, monkeypatch):
    from studio import budget

    at, name = adopted(new_app)
    monkeypatch.setattr(budget, "WORKER_BASE_MB", 1)  # the run's worker has room for almost nothing
    train(at, "pages/two_layer.py", "two_layer", tl_activation=name, tl_steps=3, tl_N=4000, tl_D_in=4000, tl_lr=1e-12,
          two_layer_speed="max")  # x alone is 64 MB
    run = wait_for_run(at, "two_layer")
    assert run.status == "error" and "needed more memory than this run allows" in run.message, run.message
    assert not at.exception


def test_the_proxy_computes_what_autograd_does_in_process():
    """Lesson 5's path: every forward and backward of the student's Function is a round trip to its worker, which
    calls the two methods with a ctx of its own. Step for step, the same numbers as MyReLU in this process."""
    from autodiff_core.functions import bind_student_activations
    from autodiff_core.grading.remote import StudentActivation
    from autodiff_core.playground import Playground, PlaygroundConfig

    act = StudentActivation("yours: ReLU (proxy)", RELU, "relu")
    bind_student_activations({act.name: act})
    try:
        def losses(name):
            pg = Playground(PlaygroundConfig(activation=name, hidden=(8, 4, 3)))
            return [(s.train_loss, s.test_loss) for s in pg.run(30, record_every=5)]

        assert losses(act.name) == losses("ReLU")
    finally:
        bind_student_activations(None)
        act.close()


@pytest.mark.parametrize("optimizer", ["Adam", "SGD + momentum", "SGD (by hand)"])
def test_lesson_5_trains_whole_in_its_worker_and_the_model_comes_back(optimizer):
    """The app's path for lesson 5: the Playground goes to the run's worker, trains there, and its state (weights,
    optimizer, batch order, steps) comes back with each batch of snapshots. The numbers are MyReLU's in this
    process, step for step, and so are the steps taken here afterwards from the state that came back."""
    from autodiff_core.functions import bind_student_activations
    from autodiff_core.grading.remote import StudentActivation
    from autodiff_core.grading.remote_runs import PlaygroundRun, land
    from autodiff_core.grading.sandbox import Limits
    from autodiff_core.playground import Playground, PlaygroundConfig
    from autodiff_core.recording import every_step_then_sparser

    act = StudentActivation("yours: ReLU (whole)", RELU, "relu")
    bind_student_activations({act.name: act})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the server and the worker compute: the same sums in the same order
    try:
        settings = {"optimizer": optimizer, "learning_rate": 0.03, "hidden": (6, 3)}
        here = Playground(PlaygroundConfig(activation="ReLU", **settings))
        config = PlaygroundConfig(activation=act.name, **settings)
        there = Playground(config)
        worker = act.open(Limits(cpu_seconds=60, memory_mb=512, wall_seconds=120), call_seconds=10)
        remote = [s.train_loss for s in worker.train(PlaygroundRun(there, 300), config,
                                                     land=lambda state: land(there, state))]
        worker.close()
        assert remote == [s.train_loss for s in every_step_then_sparser(here.run, total=300)]
        assert there.steps_done == here.steps_done == 300
        assert [s.train_loss for s in there.run(20, 5)] == [s.train_loss for s in here.run(20, 5)]
    finally:
        torch.set_num_threads(threads)
        bind_student_activations(None)
        act.close()


def test_a_model_that_is_not_this_one_is_refused():
    from autodiff_core.grading.remote import StudentFunctionError, encode
    from autodiff_core.grading.remote_runs import land
    from autodiff_core.playground import Playground, PlaygroundConfig

    pg = Playground(PlaygroundConfig(optimizer="Adam"))
    before = [p.detach().clone() for p in pg.params]
    wrong = (tuple(encode(p.detach().reshape(-1, 1)) for p in pg.params), (), b"", 5, encode(pg.grad_norms))
    with pytest.raises(StudentFunctionError, match="not this one"):
        land(pg, wrong)
    assert all(bool((p == b).all()) for p, b in zip(pg.params, before, strict=True)) and pg.steps_done == 0


def test_a_run_that_fails_midway_hands_on_every_step_before_it_in_order():
    """The worker computes a run's next batch while the server reads the last one: the snapshots still come in
    order, none lost or repeated, and the failure comes after the last of them, in words."""
    from autodiff_core import TwoLayerConfig
    from autodiff_core.grading.remote import BATCH, StudentActivation, StudentFunctionError
    from autodiff_core.grading.sandbox import Limits
    from tests.grading.sandbox_tasks import FailsAt

    act = StudentActivation("yours: ReLU (fails)", RELU, "relu")
    worker = act.open(Limits(cpu_seconds=60, memory_mb=512, wall_seconds=120), call_seconds=10)
    steps = []
    try:
        with pytest.raises(StudentFunctionError, match="stopped at step 700"):
            for snap in worker.train(FailsAt(700), TwoLayerConfig(N=8, D_in=20, H=10, D_out=3, steps=1000)):
                steps.append(snap.step)
    finally:
        worker.close()
        act.close()
    assert 700 > 2 * BATCH and steps == list(range(700))  # several batches, the last ones computed ahead


def test_the_sandbox_never_shows_the_servers_tmp(monkeypatch):
    """A server started from a script in /tmp has /tmp on its path: the zygote's /tmp stays its own, empty, while
    the app's own folder is bound wherever it is (a checkout under /tmp included)."""
    import sys

    from autodiff_core.grading import sandbox

    monkeypatch.setattr(sandbox, "_WALLS", None)
    monkeypatch.setattr(sys, "path", ["/tmp", *sys.path])
    walls = sandbox.walls()
    sandbox._WALLS = None
    binds = [walls[i + 1] for i, a in enumerate(walls) if a == "--ro-bind-try"]
    assert walls, "bubblewrap cannot start here"
    assert "/tmp" not in binds and any(str(sandbox.ROOT).startswith(b) for b in binds), binds
