"""The sandbox's zygote: ``python -m autodiff_core.grading.zygote FD``, which ``Sandbox.start`` runs once per server.

It imports what the workers it forks will run (torch, the judges, a student's Function and its training runs),
pays their first-call costs once by judging reference solutions (two of lesson 6's, each of lesson 8's) and
training a few steps, and then forks
a worker per request (``sandbox.serve_forks``). It lives apart from ``sandbox.py`` so that the sandbox imports
none of its tasks: the judge imports the sandbox, and this module imports both. Only the zygote's process runs
it; the server never imports it.
"""

from __future__ import annotations

import logging
import os
import sys

import torch

from ..playground import OPTIMIZERS, Playground, PlaygroundConfig
from ..recording import every_step_then_sparser
from ..two_layer import TwoLayerConfig, train_two_layer
from .api_challenges import API_CHALLENGES
from .api_judge import judge_api
from .challenges import CHALLENGES
from .judge import judge
from .remote import plain_snapshot
from .remote_runs import PlaygroundRun
from .sandbox import serve_forks

log = logging.getLogger(__name__)


def main(fd: int) -> None:
    # No PR_SET_PDEATHSIG (nor bwrap's --die-with-parent): it fires when the *thread* that started the zygote
    # ends, a script thread. The zygote reads the end of its socket instead, which closes with the process.
    server = os.getppid()  # before the warm-up: a server that dies during it is noticed too
    torch.set_num_threads(1)
    for warm_up in WARM_UPS:  # lazy imports and first-call costs, paid once
        try:
            warm_up()
        except Exception:  # a warm-up that fails only makes the first checks slower; the zygote must live
            log.exception("the sandbox's warm-up failed")
        if os.getppid() != server:  # the server died meanwhile: so do we, without warming up the rest
            return
    serve_forks(fd, server)


def warm_up_judges() -> None:
    for key in ("relu", "multiply"):
        judge(CHALLENGES[key].solution, key)


def warm_up_lesson8() -> None:
    """Lesson 8's judges: torch.func, forward-mode AD and gradgradcheck, each first used here."""
    for key, c in API_CHALLENGES.items():
        judge_api(c.solution, key)


def warm_up_training() -> None:
    """Once, before forking: what a worker's first training run would otherwise pay before its first step (the
    trainers' and optimizers' lazy imports, first calls, a snapshot's conversion). Every worker forks with it done."""
    for snap in train_two_layer(TwoLayerConfig(N=4, D_in=3, H=2, D_out=2, steps=2)):
        plain_snapshot(snap)
    for optimizer in OPTIMIZERS:
        pg = Playground(PlaygroundConfig(optimizer=optimizer))
        run = PlaygroundRun(pg, 2)
        run.pg = pg
        for snap in every_step_then_sparser(pg.run, total=2):
            plain_snapshot(snap)
        run.state()


WARM_UPS = (warm_up_judges, warm_up_lesson8, warm_up_training)

if __name__ == "__main__":
    main(int(sys.argv[1]))
