"""Which devices and dtypes exist here, and how a user's choice resolves.

Every trainer takes device and dtype as plain strings ("cpu", "cuda:0", "float32") so a config stays
frozen, hashable and easy to put in a URL. This module turns those strings into torch objects, or
raises an error a student can read.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


class DeviceUnavailableError(ValueError):
    """The requested device does not exist on this machine; the message lists the ones that do."""


@dataclass(frozen=True)
class DeviceInfo:
    """One usable device: ``id`` goes into configs, ``label`` is what a person sees."""

    id: str
    label: str
    kind: str  # "cpu", "cuda" or "mps"


DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}


def available_devices() -> list[DeviceInfo]:
    """Every device torch can use here: the CPU, each CUDA GPU by name, and Apple's MPS."""
    devices = [DeviceInfo("cpu", "CPU", "cpu")]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            devices.append(DeviceInfo(f"cuda:{i}", f"GPU {i}: {torch.cuda.get_device_name(i)}", "cuda"))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append(DeviceInfo("mps", "Apple GPU (MPS)", "mps"))
    return devices


def has_gpu() -> bool:
    """True when any accelerator (CUDA or MPS) is usable."""
    return any(d.kind != "cpu" for d in available_devices())


def resolve_device(name: str) -> torch.device:
    """Turn ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or ``"mps"`` into a device that exists, or explain why not."""
    ids = [d.id for d in available_devices()]
    text = str(name).strip().lower()
    if text == "cuda" and any(i.startswith("cuda:") for i in ids):
        text = "cuda:0"
    if text not in ids:
        raise DeviceUnavailableError(
            f"Device {name!r} is not available on this machine. Available: {', '.join(ids)}."
        )
    return torch.device(text)


def resolve_dtype(name: str) -> torch.dtype:
    """Turn ``"float32"`` or ``"float64"`` into a torch dtype, or raise ``ValueError`` naming the choices."""
    try:
        return DTYPES[str(name)]
    except KeyError:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {name!r}.") from None


def synchronize(device: torch.device) -> None:
    """Wait for queued work on ``device`` to finish, so that timings measure the work itself."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()
