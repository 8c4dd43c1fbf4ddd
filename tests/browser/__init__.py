"""Headless Chromium against a real server (marked ``browser``; the helpers are in testkit.browser)."""
