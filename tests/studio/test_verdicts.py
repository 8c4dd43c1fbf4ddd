"""gradcheck's verdict is drawn by one helper in lessons 1 and 4, naming the dtype gradcheck ran in."""

from tests.conftest import open_tab


def verdicts(at) -> list[str]:
    return [e.value for kind in ("success", "error") for e in at.get(kind) if e.value.startswith("gradcheck ")]

def test_lesson1_and_the_xray_give_the_same_verdict_with_its_dtype(app):
    at = app.switch_page("pages/custom_function.py").run()
    at.selectbox(key="cf_function").set_value("ReLU").run()
    assert verdicts(at) and verdicts(at)[0].startswith("gradcheck passed (float64): ")
    at.switch_page("pages/xray.py").run()
    open_tab(at, "Gradcheck lab")
    at.selectbox(key="xr_fn").set_value("ReLU").run()
    [passed] = verdicts(at)
    assert passed.startswith("gradcheck passed (float64): ")
    at.toggle(key="xr_float64").set_value(False).run()
    [verdict] = verdicts(at)
    assert "(float32): " in verdict and not at.exception  # the X-ray said "gradcheck passed." without a dtype
