"""The logistic lesson's page through AppTest."""
