"""The xray lesson's page through AppTest."""
