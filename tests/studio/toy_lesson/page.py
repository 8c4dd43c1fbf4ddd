"""The toy lesson's page: the skeleton every lesson page has."""

import streamlit as st

from studio.lessons import widget
from studio.page import require_app
from studio.presets import bind_lesson, preset_picker

require_app()
st.title("99 · Toy lesson")
bind_lesson("toy_lesson")
preset_picker("toy_lesson")
widget("toy_lr")
widget("toy_size")
