"""The sandbox's limits: memory, CPU and wall-clock time stop hostile work with a clear message, the
server goes on serving others meanwhile, and every challenge's reference solution passes inside it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autodiff_core.grading.challenges import CHALLENGES
from autodiff_core.grading.judge import check
from autodiff_core.grading.sandbox import Limits, Sandbox, SandboxError
from tests.conftest import process_alive
from tests.grading import sandbox_tasks as tasks

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sandbox():
    box = Sandbox(Limits(cpu_seconds=2, memory_mb=512, wall_seconds=60), max_parallel=2)
    box.run(tasks.answer, 1)  # started and warm
    yield box
    box.close()


def test_a_task_runs_and_returns_its_value(sandbox):
    assert sandbox.run(tasks.answer, 21) == 42


@pytest.mark.parametrize("task", [tasks.allocate_10_gb, tasks.allocate_10_gb_python])
def test_allocating_10_gb_is_stopped_at_the_memory_limit(sandbox, task):
    with pytest.raises(SandboxError, match="more than 512 MB of memory"):
        sandbox.run(task)


def test_a_loop_that_never_ends_is_killed_at_the_cpu_limit(sandbox):
    with pytest.raises(SandboxError, match="more than 2 s of CPU time"):
        sandbox.run(tasks.spin_forever)


def test_waiting_forever_is_killed_at_the_wall_clock_limit(sandbox):
    with pytest.raises(SandboxError, match="ran longer than 2 s"):
        sandbox.run(tasks.sleep_forever, limits=Limits(wall_seconds=2))


def test_the_worker_cannot_write_files(sandbox, tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(SandboxError):
        sandbox.run(tasks.write_a_file, str(path))
    assert not path.exists() or path.stat().st_size == 0


def test_other_students_are_served_while_one_submission_spins(sandbox):
    """A spinning worker holds its own process, not the server: another check runs and finishes meanwhile."""
    outcome = {}

    def spin():
        try:
            sandbox.run(tasks.spin_forever)
        except SandboxError as exc:
            outcome["spin"] = str(exc)

    spinner = threading.Thread(target=spin)
    spinner.start()
    verdict = check(CHALLENGES["relu"].solution, "relu", sandbox=sandbox)
    still_spinning = spinner.is_alive()
    spinner.join(120)
    assert verdict.passed and still_spinning
    assert "CPU time" in outcome["spin"]


@pytest.mark.parametrize("key", list(CHALLENGES))
def test_every_reference_solution_passes_in_the_sandbox(sandbox, key):
    verdict = check(CHALLENGES[key].solution, key, sandbox=sandbox)
    assert verdict.passed, (verdict.headline, verdict.reasons, verdict.notes)


def test_a_stopped_check_becomes_a_verdict_with_the_reason():
    class Stopped:
        def run(self, *args, **kwargs):
            raise SandboxError("Your code used more than 2 s of CPU time and was stopped.")

    verdict = check(CHALLENGES["relu"].solution, "relu", sandbox=Stopped())
    assert not verdict.passed and verdict.headline == "Your code was stopped."
    assert verdict.reasons == ("Your code used more than 2 s of CPU time and was stopped.",)


def test_an_error_in_student_code_comes_back_with_its_line(sandbox):
    source = CHALLENGES["relu"].solution.replace("grad_input = grad_output.clone()",
                                                 "grad_input = grad_output.clone()\n        y = later + 1\n"
                                                 "        later = 2")
    verdict = check(source, "relu", sandbox=sandbox)
    assert verdict.error_line == 11 and verdict.reasons[0].startswith("Line 11: ")


def test_a_dead_zygote_is_started_again(sandbox):
    os.kill(sandbox._proc.pid, 9)
    sandbox._proc.wait(10)
    assert sandbox.run(tasks.answer, 2) == 4


def test_an_answer_that_would_run_code_in_the_server_is_dropped(sandbox, monkeypatch):
    ran = []
    monkeypatch.setattr(os, "system", lambda command: ran.append(command))
    with pytest.raises(SandboxError, match="should not have"):
        sandbox.run(tasks.answer_with_code)
    assert not ran


def test_the_zygote_leaves_with_the_server():
    """A server that dies without closing its sandbox leaves no process behind."""
    script = ("import os; from autodiff_core.grading.sandbox import Sandbox; box = Sandbox(); "
              "print(box.run(abs, -3), box._proc.pid, flush=True); os._exit(0)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    value, pid = out.stdout.split()
    assert value == "3"
    for _ in range(100):
        if not process_alive(int(pid)):
            break
        time.sleep(0.1)
    assert not process_alive(int(pid))


def _second_wall():
    from autodiff_core.grading.sandbox import walls

    if not walls():
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap is missing or cannot start: scripts/install-test-deps.sh installs it")
        pytest.skip("no bubblewrap here: the sandbox has its rlimits only")


def test_the_worker_sees_no_file_of_the_server(sandbox, tmp_path):
    _second_wall()
    secret = tmp_path / "secret.txt"
    secret.write_text("the teacher's notes")
    assert tasks.read_a_file(str(secret)) == "the teacher's notes"  # here, the file is there
    with pytest.raises(SandboxError, match="check failed: FileNotFoundError"):
        sandbox.run(tasks.read_a_file, str(secret))


def test_the_worker_has_no_network(sandbox):
    import socket

    _second_wall()
    server = socket.create_server(("127.0.0.1", 0))
    try:
        port = server.getsockname()[1]
        assert tasks.connect(port) == "connected"  # from here, it answers
        with pytest.raises(SandboxError, match="check failed: ConnectionRefusedError"):
            sandbox.run(tasks.connect, port)
    finally:
        server.close()


@pytest.mark.parametrize("when", ["warm", "warming up"])
def test_the_zygote_dies_with_the_server(when):
    """However the server dies (here: SIGKILL, no atexit), even while its sandbox helper is still warming up
    (lesson 6 opened a second before), the helper does not outlive it."""
    first = "box.run(sandbox_tasks.answer, 1)" if when == "warm" else "box.start()"
    code = ("import sys, time; from autodiff_core.grading.sandbox import Sandbox; "
            f"from tests.grading import sandbox_tasks; box = Sandbox(); {first}; "
            "print(box._proc.pid, flush=True); time.sleep(60)")
    server = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        helper = int(server.stdout.readline())
        children = _descendants(helper)
        server.kill()
        server.wait(10)
        deadline = time.monotonic() + 10
        while any(process_alive(p) for p in [helper, *children]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(process_alive(p) for p in [helper, *children])
    finally:
        server.kill()


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out] + [q for p in out for q in _descendants(int(p))]
