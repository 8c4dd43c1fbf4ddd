"""What a run needs, said by its own config: ``config.footprint()`` counts numbers and flops, and the server
turns them into bytes and seconds on its device (``studio.budget.estimate``). A lesson's config declares its
footprint next to its fields, so the budget never has to recognise a lesson."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Footprint:
    """A run's peak memory and one step's work, from its config alone (nothing is allocated)."""

    numbers: float  # peak tensors, in numbers of the run's dtype
    flops: float  # one step's arithmetic
    fixed_bytes: int = 0  # on top of the numbers, whatever the dtype
    fixed_seconds: float = 0.0  # a step's overhead whatever its size (Python and torch's dispatch)
    hint: str = "Make the sizes smaller."  # what to change when the run is over a limit
    # A student's Function as the activation: the elements of its largest call, its calls a step, and the
    # steps it is called in (None: as many as the student trains)
    activation_elements: int = 0
    activation_calls: int = 1
    activation_steps: int | None = None
