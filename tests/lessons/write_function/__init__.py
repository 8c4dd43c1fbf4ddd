"""The write_function lesson's page through AppTest."""
