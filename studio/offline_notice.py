"""The page's own words when the server stops answering. Streamlit's client says "Streamlit server is not
responding. Are you connected to the internet?", which a classroom without internet reads as the wrong
problem. A component mounted once per page (it draws nothing) watches the page and puts in this sentence
instead, whenever Streamlit shows its connection message."""

from __future__ import annotations

import json

import streamlit as st

MESSAGE = "The server is not answering. Your settings are in the address bar; reload when it is back."
STREAMLIT_SAYS = (
    "Streamlit server is not responding. Are you connected to the internet?",
    "Is Streamlit still running? If you accidentally stopped Streamlit, just restart it in your terminal:",
)

_JS = """
const MESSAGE = __MESSAGE__, THEIRS = __THEIRS__;

function reword(node) {
  // Streamlit's sentence, wherever its dialog or status puts it; the "streamlit run" line under it goes too.
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const text = t.nodeValue.trim();
    if (THEIRS.includes(text)) {
      t.nodeValue = MESSAGE;
      const box = t.parentElement && t.parentElement.parentElement;
      box && box.querySelectorAll("pre, code").forEach((c) => { if (/streamlit run/.test(c.textContent)) c.remove(); });
    }
  }
}

export default function () {
  if (window.__studioOfflineNotice) return;
  window.__studioOfflineNotice = new MutationObserver((changes) => {
    for (const change of changes) {
      change.addedNodes.forEach((n) => { const el = n.nodeType === 1 ? n : n.parentNode; if (el) reword(el); });
      if (change.type === "characterData" && change.target.parentNode) reword(change.target.parentNode);
    }
  });
  window.__studioOfflineNotice.observe(document.body, { childList: true, subtree: true, characterData: true });
  reword(document.body);
}
""".replace("__MESSAGE__", json.dumps(MESSAGE)).replace("__THEIRS__", json.dumps(list(STREAMLIT_SAYS)))

_component = st.components.v2.component("autograd_studio.offline_notice", html="<span hidden></span>", js=_JS)


def offline_notice() -> None:
    """Mount the watcher (once per page; later calls keep it)."""
    _component(key="studio_offline_notice")
