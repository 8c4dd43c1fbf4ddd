"""Playground cost: one training step plus one decision-surface frame, against the step alone, measured
side by side in one process; then painted states per second of the live surface in headless Chromium.

    python bench/playground_frame.py [--rounds 21] [--no-browser]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autodiff_core.playground import Playground, PlaygroundConfig  # noqa: E402


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def compare(pg: Playground, rounds: int) -> None:
    step = pg.step

    def step_and_frame():
        pg.step()
        pg.snapshot()

    step(), step_and_frame()
    ratios, a, b = [], [], []
    for i in range(rounds):
        pair = (step, step_and_frame) if i % 2 == 0 else (step_and_frame, step)
        t = {fn: per_call(fn, 50) for fn in pair}
        a.append(t[step])
        b.append(t[step_and_frame])
        ratios.append(t[step_and_frame] / t[step])
    grid = pg.config.grid
    print(f"grid {grid}x{grid}: step {statistics.median(a) * 1e3:.2f} ms, step + surface frame "
          f"{statistics.median(b) * 1e3:.2f} ms, ratio {statistics.median(ratios):.2f}")


def engine(rounds: int) -> None:
    torch.set_num_threads(1)
    for grid in (32, 64):
        compare(Playground(PlaygroundConfig(grid=grid)), rounds)


def browser() -> None:
    from playwright.sync_api import sync_playwright

    from testkit.browser import launch, open_page, painted_rate, sample_live, set_speed, streamlit_server

    with streamlit_server() as url, sync_playwright() as p:
        b = launch(p)
        page = open_page(b.new_context(viewport={"width": 1300, "height": 900}), f"{url}/playground")
        set_speed(page, "200")  # 20 surface states a second (one every 10 steps)
        page.get_by_role("button", name="Play").click()
        time.sleep(2)
        rate, distinct, blank = painted_rate(sample_live(page, seconds=5)[0])
        b.close()
    print(f"browser: {rate:.1f} painted surface states/s ({distinct} distinct sampled, {blank} blank samples)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    engine(args.rounds)
    if not args.no_browser:
        browser()
