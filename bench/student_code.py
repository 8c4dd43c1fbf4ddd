"""Lesson 6's costs: how long validation takes to refuse each hostile submission (the issue asks for under
100 ms), and how long a check takes end to end in the sandbox against judging in this process.

    python bench/student_code.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autodiff_core.grading.challenges import CHALLENGES  # noqa: E402
from autodiff_core.grading.judge import check, judge  # noqa: E402
from autodiff_core.grading.sandbox import Sandbox  # noqa: E402
from autodiff_core.grading.validator import Refused, validate  # noqa: E402
from testkit.hostile import HOSTILE  # noqa: E402


def refusal_times() -> list[tuple[float, str]]:
    times = []
    for name, source in HOSTILE.items():
        start = time.perf_counter()
        try:
            validate(source)
        except Refused:
            pass
        else:
            raise AssertionError(f"{name} was accepted")
        times.append((time.perf_counter() - start, name))
    return sorted(times)


def main() -> None:
    times = refusal_times()
    ms = [t * 1000 for t, _ in times]
    print(f"validation refused {len(times)} hostile submissions: median {statistics.median(ms):.2f} ms, "
          f"slowest {ms[-1]:.2f} ms ({times[-1][1]})")
    box = Sandbox()
    start = time.perf_counter()
    check(CHALLENGES["relu"].solution, "relu", sandbox=box)
    print(f"sandbox start-up and first check: {time.perf_counter() - start:.2f} s")
    for key in ("relu", "gelu", "multiply"):
        source = CHALLENGES[key].solution
        inside, here = [], []
        for _ in range(5):  # alternate, so both see the same machine load
            t = time.perf_counter()
            check(source, key, sandbox=box)
            inside.append(time.perf_counter() - t)
            t = time.perf_counter()
            judge(source, key)
            here.append(time.perf_counter() - t)
        a, b = statistics.median(inside), statistics.median(here)
        print(f"{key:9s} check in the sandbox {a * 1000:6.0f} ms, judged in this process {b * 1000:5.0f} ms, "
              f"ratio {a / b:.1f}x")
    box.close()


if __name__ == "__main__":
    main()
