"""Streamlit glue shared by the lesson pages: start-up, sidebar, live runner and live chart.

The engine (``autodiff_core``) knows nothing of Streamlit; everything UI-specific lives here.
"""
