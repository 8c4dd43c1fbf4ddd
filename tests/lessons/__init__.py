"""Each lesson's page through AppTest, one folder a lesson (named by its key in studio.lessons)."""
