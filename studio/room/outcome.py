"""What a run the class predicted did, in a question's words (``studio.room.questions`` shows it): the loss went
down, blew up, or stalled. Recorded by the teacher's page, or by the class relay when the run ends (a teacher's
reload forgets the run)."""

from __future__ import annotations

import math

from .. import lessons

STALL = 0.05  # a loss that ends less than 5% below where it started has stalled


def judge(first: float, final: float, step: int, diverged: bool, stopped: bool = False) -> dict:
    """What a run did, in a question's words: the loss went down (its final loss clearly below its first),
    blew up (diverged, or no finite loss: then it has no final loss), or stalled (otherwise). Pure."""
    if diverged or not math.isfinite(final):  # no final loss to mark: the run ended on its blow-up
        grew = f"grew to {final:.3g}" if math.isfinite(final) else "was no longer a finite number"
        kind, text, final = "up", f"It blew up: by step {step:,} the loss {grew}, and training stopped.", math.nan
    elif final < first * (1 - STALL):
        kind, text = "down", f"The loss went down, from {first:.4g} to {final:.4g} at step {step:,}."
    else:
        kind, text = "stall", f"It stalled: the loss went from {first:.4g} to {final:.4g} by step {step:,}."
    if stopped:
        text += " The run was stopped before its end."
    return {"kind": kind, "first": first, "final": final if math.isfinite(final) else None, "step": step,
            "text": text}


def outcome_of(run, snaps: list | None = None) -> dict:
    """What the teacher's finished run did, from its first and last recorded states (the lesson's loss curve):
    ``snaps``, or the run's own."""
    figures = lessons.lesson(run.lesson).run_figures
    snaps = run.view()[0] if snaps is None else snaps
    if figures is None or not snaps or run.status == "error":
        return {"kind": "", "text": "The run ended before it could tell."}
    _, first = figures.curve(snaps[0])
    step, final = figures.curve(snaps[-1])
    return judge(float(first), float(final), int(step), run.status == "diverged", run.status == "stopped")
