"""Tasks for tests/grading/test_sandbox.py: hostile work that validation would never let through, run in the
sandbox directly to show its limits hold. Imported by name in the sandbox's worker, so it stays tiny."""

import time


def allocate_10_gb():
    import torch

    return torch.ones(10 * 2**30 // 4).sum().item()  # 10 GB of float32


def allocate_10_gb_python():
    return len(bytearray(10 * 2**30))


def spin_forever():
    while True:
        pass


def sleep_forever():
    while True:
        time.sleep(1)


def write_a_file(path):
    with open(path, "w") as f:
        f.write("x" * 10)
    return "written"


def answer(x):
    return x * 2


class Payload:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def answer_with_code():
    """What a worker that escaped the validator might send back: a pickle that runs a command when loaded."""
    return Payload()


def read_a_file(path):
    with open(path) as f:
        return f.read()


def connect(port):
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return "connected"


class FailsAt:
    """A run (``link.train``'s trainer) that trains lesson 2 and raises at step ``step``."""

    def __init__(self, step: int) -> None:
        self.step = step

    def __call__(self, config):
        from autodiff_core import train_two_layer

        for snap in train_two_layer(config):
            if snap.step == self.step:
                raise RuntimeError(f"stopped at step {self.step}")
            yield snap
