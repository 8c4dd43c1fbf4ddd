"""A class as one room: its store (SQLite on one machine, Redis across machines) and its rules
(``classes``). Nothing here imports Streamlit."""
