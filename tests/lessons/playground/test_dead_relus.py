"""The "Dead ReLUs" preset through AppTest: after a few steps the page says, in one warning, why the loss sits near
22 and the accuracy near a coin's, and the gradient flow chart names the steps its log scale cannot draw."""

from __future__ import annotations

import json

from autodiff_core.figures.playground import caption


def test_the_dead_relus_preset_says_why_it_is_stuck(new_app):
    at = new_app()
    at.query_params["preset"] = "dead-relus"
    at.run()
    at.switch_page("pages/playground.py").run()
    assert at.session_state["pg_lr"] == 10.0 and not at.exception
    for _ in range(10):
        at.button(key="pg_step").click().run()
    last = at.session_state["pg_session"].history[-1]
    assert last.step == 10 and last.grad_norms == (0.0, 0.0, 0.0)
    [warning] = [w.value for w in at.warning if "exactly 0" in w.value]
    assert f"test {last.test_accuracy:.1%}" in warning and f"{last.train_loss:.3g}" in warning  # as beside it
    assert f"test accuracy {last.test_accuracy:.1%}" in caption(last)  # the chart's caption shows the same
    [flow] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.proto.id.endswith("pg_gradflow")]
    [note] = flow["layout"]["annotations"]
    assert note["text"].startswith("every gradient exactly 0<br>from step ") and "log scale cannot draw" in note["text"]
