"""Lesson 8's needs_input_grad, timed: the backward of y = x @ W when only W needs a gradient, by ``MyMatMul``
(which checks ``ctx.needs_input_grad`` and skips grad_x) and by ``MyMatMulEveryGrad`` (which computes both),
alternating on the same tensors after a warm-up; each backward's matrix products counted as it ran. The ratio is
of the medians, measured side by side in one run, as the lesson's button measures it (with one thread, as the
app runs torch).

    python bench/needs_input_grad.py
    python bench/needs_input_grad.py --n 1024 --k 1024 --m 1024 --repeats 31 --threads 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from autodiff_core.api_demos import TimingConfig, time_needs_input_grad  # noqa: E402


def main() -> None:
    defaults = TimingConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("n", "k", "m", "repeats"):
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app uses 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    t = time_needs_input_grad(TimingConfig(args.n, args.k, args.m, args.repeats))
    c = t.config
    print(f"y = x @ W, x ({c.n}, {c.k}) data, W ({c.k}, {c.m}) needing a gradient; float32 on the CPU, "
          f"{t.threads} thread(s); {c.repeats} backwards of each, alternating")
    for name, runs, products in (("MyMatMul (skips grad_x)", t.skipping, t.products[0]),
                                 ("MyMatMulEveryGrad", t.every, t.products[1])):
        print(f"  {name:<24} median {1000 * statistics.median(runs):8.3f} ms   min {1000 * min(runs):8.3f} ms   "
              f"{products} matrix product(s)")
    print(f"ratio of the medians: {t.ratio:.3f}")


if __name__ == "__main__":
    main()
