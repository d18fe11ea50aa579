"""Operations for training code that adapt to the device: the kernels every plugin registers.

`collect_kernels(op)` gathers the `register_kernels` hook of every loaded plugin (entry points and plugin
directories; GPUDASH_LOAD_PLUGINS applies), cached per process. The plugin API only describes kernels; finding
them needs the plugin manager, which sits above the API, so the gathering lives here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudash.plugins_api import Kernel


def collect_kernels(op: str | None = None) -> list[Kernel]:
    """Kernels every loaded plugin registers, for one operation ("matmul") or all. Load errors go to stderr."""
    from gpudash.plugin_manager import kernels_from_plugins

    return [k for k in kernels_from_plugins() if op is None or k.op == op]
