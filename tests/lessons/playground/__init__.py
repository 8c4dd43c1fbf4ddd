"""The playground lesson's page through AppTest."""
