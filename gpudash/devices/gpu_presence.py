"""Cheap answers that let gpudash skip `import torch` (about a second) when it cannot matter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpudash.models import Runtime

_GPU_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")  # NVIDIA, ROCm, WSL


def torch_could_see_gpus() -> bool:
    """False only on Linux with no GPU device node at all: torch's view could add nothing there.
    Elsewhere (macOS, Windows) there is no cheap way to tell, so the answer is always yes."""
    if not sys.platform.startswith("linux"):
        return True
    if any(os.path.exists(n) for n in _GPU_NODES):
        return True
    try:
        return any(name.startswith("nvidia") and name[6:].isdigit() for name in os.listdir("/dev"))
    except OSError:
        return True


def amd_driver_loaded() -> bool:
    """False only on Linux without the amdgpu kernel module (or ROCm's /dev/kfd): amdsmi would find no GPU."""
    if not sys.platform.startswith("linux"):
        return True
    return os.path.exists("/sys/module/amdgpu") or os.path.exists("/dev/kfd")


def installed_torch_runtime() -> Runtime | None:
    """torch, CUDA and HIP versions read from the installed torch/version.py, without importing torch (found
    the way `import torch` would find it, which costs far less than importlib.metadata's scan)."""
    import ast
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        text = (Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text(encoding="utf-8")
        body = ast.parse(text).body
    except (OSError, SyntaxError, ValueError):
        return None
    values = {}
    for node in body:  # plain assignments like `cuda: Optional[str] = '12.4'`
        target = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and value is not None:
            try:
                values[target.id] = ast.literal_eval(value)
            except ValueError:
                pass
    if not values.get("__version__"):
        return None
    return Runtime(torch=values["__version__"], cuda=values.get("cuda"), hip=values.get("hip"))
