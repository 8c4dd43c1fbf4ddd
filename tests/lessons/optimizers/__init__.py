"""Lesson 7's page through AppTest."""
