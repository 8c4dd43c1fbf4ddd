"""Autograd Studio: `streamlit run app.py`.

This file has two roles. Streamlit runs it as the script of every browser session (``__name__`` is
``"__main__"`` then). ``streamlit run`` also imports it once to find ``app``, the server: Streamlit's
own routes plus the live feed that training charts read while a run is going (``studio/feed.py``)
and plotly.js from the installed plotly package (``studio/assets.py``).
"""

import streamlit as st

if __name__ == "__main__":
    from studio.boot import script_began, script_ended, warm_up
    from studio.lessons import lessons
    from studio.offline_notice import offline_notice
    from studio.page import student_function_stopped
    from studio.presenter import presenter_toggle, sidebar_state
    from studio.room.board import take_pick
    from studio.room.follow import lead_or_follow
    from studio.session_functions import share_with_lessons
    from studio.sidebar import sidebar
    from studio.state import remember

    script_began()  # the background warm-up waits for a quiet moment (studio/boot.py)
    share_with_lessons()  # this run's thread gets its session's Functions from lesson 6, before any lesson reads them
    st.set_page_config(page_title="Autograd Studio", page_icon="∂", layout="wide",
                       initial_sidebar_state=sidebar_state())

    page = st.navigation([st.Page("pages/home.py", title="Home", default=True),
                          *(st.Page(x.page, title=x.nav_title, url_path=x.key) for x in lessons()),
                          st.Page("pages/board.py", title="Class board", url_path="board")])
    lead_or_follow(page.url_path)  # in a class: the teacher's page leads it, a student's follows
    sidebar()
    take_pick(page.url_path)  # a run the teacher clicked on the class board: its settings, before its page draws
    presenter_toggle()
    with st.sidebar:
        offline_notice()  # the page's own words if the server stops answering
    try:
        page.run()
    except Exception as exc:
        if not student_function_stopped(exc):  # a student's Function stopped at a limit while the page drew it
            raise
    finally:
        remember()  # also when the page ended early (st.stop: a following student's page ends at the chart)
        script_ended()
    warm_up()  # once per process, in the background, after the first page is drawn
else:
    from functools import partial

    from starlette.middleware import Middleware

    from studio import assets, boot, feed, first_paint
    from studio.page import navigation_only
    from studio.room import relay

    navigation_only()

    # torch and the engine load in the background from the server's first request on; the live feed's polls
    # are answered ahead of Streamlit's own middleware (feed.FastLane), its route stays for anything else. A page's
    # HTML carries something to read until its first script run has drawn (first_paint.FirstPaint). Streamlit's
    # frontend goes out gzipped, each file compressed once (assets.CompressedBundle).
    polls = feed.ROUTES + relay.ROUTES  # the live feed and the class relay: asked many times a second
    compressor = assets.Compressor(wait=partial(boot.wait_quiet, quiet=0.0, at_most=5.0))  # between page runs
    app = st.App(__file__, routes=polls + assets.ROUTES,
                 middleware=[Middleware(boot.PreloadOnFirstRequest), Middleware(feed.FastLane, routes=polls),
                             Middleware(first_paint.FirstPaint),
                             Middleware(assets.CompressedBundle, compressor=compressor)])
