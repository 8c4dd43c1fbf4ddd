"""Home: what Autograd Studio is and where each lesson starts."""

import streamlit as st

from studio.page import require_app

require_app()
st.title("Autograd Studio")
st.markdown(
    "See how PyTorch lets you define **new autograd Functions**, then train with one, live. "
    "Every chart here comes from code that runs: change a number and train again."
)
c1, c2, c3, c4 = st.columns(4)
with c1, st.container(border=True):
    st.subheader("1 · Custom Function")
    st.markdown("`MyReLU` step by step: what `forward` saves in `ctx`, what `backward` gets and returns, "
                "and gradcheck's verdict.")
    st.page_link("pages/custom_function.py", label="Open lesson 1")
with c2, st.container(border=True):
    st.subheader("2 · Two-layer net")
    st.markdown("The tutorial's net trained by hand with `MyReLU`: watch the loss fall on a log scale, "
                "with the weight and gradient norms.")
    st.page_link("pages/two_layer.py", label="Open lesson 2")
with c3, st.container(border=True):
    st.subheader("3 · Logistic regression")
    st.markdown("An `nn.Module` on two clusters: the decision boundary moves as SGD learns, and you can "
                "see what forgetting `zero_grad()` does.")
    st.page_link("pages/logistic.py", label="Open lesson 3")
with c4, st.container(border=True):
    st.subheader("4 · Autograd X-ray")
    st.markdown("Inside backward: the autograd graph, `ctx`, a gradcheck lab with Jacobians, and the classic "
                "mistakes side by side.")
    st.page_link("pages/xray.py", label="Open lesson 4")
with st.container(border=True):
    st.subheader("5 · Classification playground")
    st.markdown("The custom ReLU at work: a small network learns XOR, circles, moons and spirals. Play, Pause, "
                "Step and Reset, with the decision surface redrawn live.")
    st.page_link("pages/playground.py", label="Open lesson 5")
st.caption("Settings in the sidebar (device, dtype, seed) apply to every lesson and are kept in the address "
           "bar, so a link shares them.")
