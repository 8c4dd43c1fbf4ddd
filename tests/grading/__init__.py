"""Lesson 6 at the engine level: the validator, the judge, the sandbox, the challenges, student isolation."""
