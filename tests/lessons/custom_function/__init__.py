"""The custom_function lesson's page through AppTest."""
