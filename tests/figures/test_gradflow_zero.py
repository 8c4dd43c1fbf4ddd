"""The gradient flow chart says where its log scale cannot draw: norms that are exactly 0 from some step to the last
(a net whose units died) leave the plot blank there, and a note and a dotted line say why, instead of a chart that
looks as if it had failed."""

from __future__ import annotations

from autodiff_core.figures.gradflow import gradient_flow_figure, gradient_flow_live, zero_since
from autodiff_core.playground import PlaygroundSnapshot


def run(norms_by_step: list[tuple[float, ...]]) -> list[PlaygroundSnapshot]:
    return [PlaygroundSnapshot(step, 0.7, 0.7, 0.5, 0.5, (), grad_norms=norms, dead=(0.0, 0.875))
            for step, norms in enumerate(norms_by_step)]


def notes(fig) -> list[str]:
    return [a.text for a in fig.layout.annotations]


def test_all_norms_exactly_zero_to_the_end_are_named_where_they_would_be_drawn():
    snaps = run([(0.0, 0.0, 0.0)] + [(0.2, 0.3, 0.1)] * 3 + [(0.0, 0.0, 0.0)] * 7)  # step 0 is the start
    fig = gradient_flow_figure(snaps)
    assert notes(fig) == ["every gradient exactly 0<br>from step 4 on, which<br>a log scale cannot draw"]
    [note], [line] = fig.layout.annotations, fig.layout.shapes
    assert note.yref == "y domain" and note.y < 0.2  # at the bottom of the norms' plot, where 0 would be
    assert (line.x0, line.x1, line.yref) == (4, 10, "y domain")  # along the steps the lines are missing
    spec, _ = gradient_flow_live(snaps, 3)
    assert [a["text"] for a in spec["layout"]["annotations"]] == notes(fig)  # the live chart says it too


def test_only_the_layers_at_zero_are_named():
    snaps = run([(0.0, 0.0, 0.0)] + [(0.2, 0.3, 0.1)] * 5 + [(0.0, 0.3, 0.1)] * 4)
    assert zero_since(snaps[1:]) == {0: 6}
    assert notes(gradient_flow_figure(snaps)) == ["layer 1 exactly 0<br>from step 6 on, which<br>a log scale "
                                                  "cannot draw"]


def test_a_zero_that_passes_or_no_zero_at_all_needs_no_note():
    for norms in ([(0.2, 0.3, 0.1)] * 6, [(0.2, 0.3, 0.1), (0.0, 0.0, 0.0)] + [(0.2, 0.3, 0.1)] * 4):
        fig = gradient_flow_figure(run([(0.0, 0.0, 0.0)] + norms))
        assert notes(fig) == [] and not fig.layout.shapes
        assert gradient_flow_live(run([(0.0, 0.0, 0.0)] + norms), 3)[0]["layout"]["annotations"] == []
