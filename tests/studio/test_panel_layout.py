"""The buttons under a finished run sit side by side from the left, with no empty slot among them."""

from tests.studio.test_app import train_at_full_speed


def test_lesson_3_buttons_leave_no_gap_where_lesson_2_has_its_png(app):
    app.switch_page("pages/logistic.py").run()
    train_at_full_speed(app, "logistic")
    labels = []
    for col in app.columns:
        found = [b.label for b in col.get("download_button")] + [b.label for b in col.button]
        labels.append(found[0] if len(found) == 1 else None)
    row = next(i for i, label in enumerate(labels) if label == "CSV")
    assert labels[row:row + 6] == ["CSV", "JSON", "HTML", "Pin as reference", "Clear ghosts", None]


def test_the_accuracy_axis_labels_stand_off_the_curve_end_marker():
    import numpy as np

    from autodiff_core.figures import logistic_replay_spec

    spec = logistic_replay_spec([], np.zeros((2, 2)), np.array([0, 1]), 10)
    assert spec["layout"]["yaxis3"]["ticklabelstandoff"] >= 8  # "100%" clear of the 13 px dot on the edge
