"""Cheap answers that let gpudash skip `import torch` (about a second) when it cannot matter."""

from __future__ import annotations

import ast
import glob
import os
import sys
from importlib import metadata
from pathlib import Path

from gpudash.models import Runtime

_GPU_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")  # NVIDIA, ROCm, WSL


def torch_could_see_gpus() -> bool:
    """False only on Linux with no GPU device node at all: torch's view could add nothing there.
    Elsewhere (macOS, Windows) there is no cheap way to tell, so the answer is always yes."""
    if not sys.platform.startswith("linux"):
        return True
    return any(os.path.exists(n) for n in _GPU_NODES) or bool(glob.glob("/dev/nvidia[0-9]*"))


def installed_torch_runtime() -> Runtime | None:
    """torch, CUDA and HIP versions read from the installed files, without importing torch."""
    try:
        dist = metadata.distribution("torch")
        text = Path(str(dist.locate_file("torch/version.py"))).read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, OSError):
        return None
    values = {}
    for node in ast.parse(text).body:  # plain assignments like `cuda: Optional[str] = '12.4'`
        target = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            try:
                values[target.id] = ast.literal_eval(value)
            except ValueError:
                pass
    return Runtime(torch=values.get("__version__") or dist.version, cuda=values.get("cuda"), hip=values.get("hip"))
