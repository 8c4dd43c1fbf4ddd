"""The class board: every run and verdict the class sent, live, for the teacher who started the class."""

import streamlit as st

from studio.lessons import lessons
from studio.page import require_app
from studio.room import board, board_view
from studio.room.panel import UNAVAILABLE, classes, teaching_safely

require_app()
st.title("Class board")
held = teaching_safely()
try:
    subs = classes().submissions(held[0]) if held is not None else []
except Exception:  # the store failed: the sidebar says so too
    held, subs = None, None
    st.caption(UNAVAILABLE)
if held is None and subs is not None:
    st.markdown("Start a class (in the sidebar) to see its board here: the runs your students send, live.")
elif held is not None:
    shown = board_view.names_toggle(*held)
    st.caption(board.sent_line(subs) if subs else "Nothing sent yet. Students press **Send to class** under a "
               "finished run, or under the verdict on a Function they wrote.")
    sent = [x for x in lessons() if any(e.get("lesson") == x.key for e in subs)]
    titles = [x.nav_title for x in sent]
    opened = st.session_state.get(board.TAB)  # a lesson's first run adds a tab: the one open stays open
    tabs = st.tabs(titles, key=board.TAB, on_change="rerun", default=opened if opened in titles else None) \
        if sent else []
    for tab, lesson in zip(tabs, sent, strict=True):
        with tab:
            if len(sent) > 1:
                st.caption(board.sent_line([e for e in subs if e.get("lesson") == lesson.key]))
            board_view.section(lesson.key, subs, shown)
