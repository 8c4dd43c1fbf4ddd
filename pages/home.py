"""Home: what Autograd Studio is and where each lesson starts."""

import streamlit as st

from studio.lessons import lessons
from studio.page import require_app
from studio.room.panel import join_box, join_code_panel, teaching_safely

require_app()
st.title("Autograd Studio")
st.markdown(
    "See how PyTorch lets you define **new autograd Functions**, then train with one, live. "
    "Every chart here comes from code that runs: change a number and train again."
)
held = teaching_safely()
if held is not None:
    with st.container(border=True):
        join_code_panel(held[0])
join_box()
every = lessons()
for row in (every[i:i + 3] for i in range(0, len(every), 3)):
    for column, lesson in zip(st.columns(3), row, strict=False):
        with column, st.container(border=True):
            st.subheader(lesson.nav_title)
            st.markdown(lesson.blurb)
            st.page_link(lesson.page, label=f"Open lesson {lesson.number}")
st.caption("Settings in the sidebar (device, dtype, seed) apply to every lesson and are kept in the address "
           "bar, so a link shares them.")
