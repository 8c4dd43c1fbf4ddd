"""A component that draws nothing and waits on the class (``relay``'s watch route): it reruns the page only when
what the page shows of the class changed. For a student that is the room's version (the teacher's lesson,
settings, run, question); for the teacher, the class's news (submissions, answers)."""

from __future__ import annotations

import streamlit as st

from .relay import PREFIX

_WATCH_JS = """
export default function ({ data, setTriggerValue, parentElement }) {
  const s = parentElement.__watch || (parentElement.__watch = {});
  s.data = data;
  const chain = s.chain = (s.chain || 0) + 1;  // one request at a time, whatever renders happen
  const step = () => {
    if (s.chain !== chain) return;
    const d = s.data;
    fetch(`${d.url}&since=${encodeURIComponent(d.value)}`, { cache: "no-store" })
      .then((r) => (r.ok || r.status === 404 ? r.json() : Promise.reject(new Error(r.statusText))))
      .then((answer) => {
        if (s.chain !== chain) return;
        const now = Date.now();
        if (String(answer.value) !== String(s.data.value) && (s.asked !== answer.value || now - s.askedAt > 3000)) {
          // once per change (the rerun it asks for brings the new value), again if no rerun brought it
          s.asked = answer.value;
          s.askedAt = now;
          setTriggerValue("changed", answer.value);
        }
        setTimeout(step, 250);
      })
      .catch(() => setTimeout(step, 3000));  // the server is busy or restarting: ask again later
  };
  step();
  return () => { if (s.chain === chain) s.chain += 1; };
}
"""

_watcher = st.components.v2.component("autograd_studio.class_watch", html="<span hidden></span>", js=_WATCH_JS)


def watch(code: str, what: str, value: int) -> None:
    """Rerun this page when the class's ``what`` ("version" or "news") is no longer ``value``."""
    _watcher(key="studio_class_watch", data={"url": f"{PREFIX}{code}/watch?what={what}", "value": value},
             height=0, on_changed_change=lambda: None)
