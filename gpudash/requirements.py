"""Optional parts of gpudash and the one line that says how to get them.

The light install (`pip install gpudash`) monitors, serves metrics and views a fleet; anything that runs
device code (probes, benchmarks, preflight, measured exports) needs PyTorch. Checking for it costs a spec
lookup, not an import.
"""

from __future__ import annotations

import importlib.util

from gpudash.errors import GpudashError

TORCH_HINT = (
    "pip install 'gpudash[torch]', or the torch build for your GPU first (https://pytorch.org/get-started/locally/)"
)


class TorchMissing(GpudashError):
    """Something needs torch and it is not installed: the command cannot do its job (exit code 3)."""


def torch_installed() -> bool:
    return importlib.util.find_spec("torch") is not None


def require_torch(what: str) -> None:
    if not torch_installed():
        raise TorchMissing(f"{what} needs PyTorch, which is not installed here: {TORCH_HINT}")
