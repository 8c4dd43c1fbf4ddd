"""gradcheck's verdict names inputs the way the charts label them (x[1] = 0), never as a bare index list
("Inputs [1]") that reads like the value 1, which is itself one of the inputs."""

import torch

from autodiff_core import gradcheck_report


def test_a_point_on_the_kink_is_named_by_element_and_value():
    report = gradcheck_report("ReLU", torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64))
    assert not report.passed and report.near_kink == (1,)
    assert "The input x[1] = 0 sits on a kink" in report.message
    assert "[1]" not in report.message.replace("x[1]", "").replace("out[1]", "")
    i, j = report.worst
    assert f"d out[{i}] / d x[{j}]" in report.message


def test_several_points_on_a_kink_are_listed_in_words():
    report = gradcheck_report("ReLU", torch.tensor([0.0, 1.0, 0.0], dtype=torch.float64))
    assert "The inputs x[0] = 0 and x[2] = 0 sit on a kink" in report.message


def test_lesson1_kink_preset_says_which_input(app):
    app.switch_page("pages/custom_function.py").run()
    app.text_input(key="cf_input").input("-1, 0, 1").run()
    app.text_input(key="cf_grad_output").input("1, 1, 1").run()
    assert "x[1] = 0 sits on a kink" in app.error[0].value
    assert "Inputs [" not in app.error[0].value
