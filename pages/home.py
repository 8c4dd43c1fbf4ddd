"""Home: what Autograd Studio is and where each lesson starts."""

import streamlit as st

from studio.page import require_app

LESSONS = [
    ("1 · Custom Function", "pages/custom_function.py",
     "`MyReLU` step by step: what `forward` saves in `ctx`, what `backward` gets and returns, and gradcheck's "
     "verdict."),
    ("2 · Two-layer net", "pages/two_layer.py",
     "The tutorial's net trained by hand with `MyReLU`: watch the loss fall on a log scale, with the weight and "
     "gradient norms."),
    ("3 · Logistic regression", "pages/logistic.py",
     "An `nn.Module` on two clusters: the decision boundary moves as SGD learns, and you can see what forgetting "
     "`zero_grad()` does."),
    ("4 · Autograd X-ray", "pages/xray.py",
     "Inside backward: the autograd graph, `ctx`, a gradcheck lab with Jacobians, and the classic mistakes side "
     "by side."),
    ("5 · Classification playground", "pages/playground.py",
     "The custom ReLU at work: a small network learns XOR, circles, moons and spirals, with the decision surface "
     "redrawn live."),
    ("6 · Write your own Function", "pages/write_function.py",
     "Your turn: write `forward` and `backward` for ReLU, Sigmoid, GELU and more; gradcheck judges them, and a "
     "Function that passes trains in lessons 2 and 5."),
]

require_app()
st.title("Autograd Studio")
st.markdown(
    "See how PyTorch lets you define **new autograd Functions**, then train with one, live. "
    "Every chart here comes from code that runs: change a number and train again."
)
for row in (LESSONS[:3], LESSONS[3:]):
    for column, (title, page, text) in zip(st.columns(3), row, strict=False):
        with column, st.container(border=True):
            st.subheader(title)
            st.markdown(text)
            st.page_link(page, label=f"Open lesson {title[0]}")
st.caption("Settings in the sidebar (device, dtype, seed) apply to every lesson and are kept in the address "
           "bar, so a link shares them.")
