"""The two_layer lesson's page through AppTest."""
