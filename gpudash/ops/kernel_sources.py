"""Where kernels come from: every loaded plugin's `register_kernels` hook, from every plugin source.

The plugin API only describes kernels; finding them needs the plugin manager, which sits above the API, so the
gathering lives here. Entry points are always read; one-file plugins come from the plugin directories: those
named with `use_plugin_dirs(...)` (or passed to `collect_kernels`), else the config file's `plugin_dirs` key
($GPUDASH_CONFIG or the user config file; the CLI's --plugins-dir reaches the child processes that run
benchmarks). GPUDASH_LOAD_PLUGINS applies. Cached per process and set of directories.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudash.plugins_api import Kernel

_generation = 0  # bumped by use_plugin_dirs: dispatchers built before it are rebuilt


def collect_kernels(op: str | None = None, plugin_dirs: list[str] | tuple[str, ...] | None = None) -> list[Kernel]:
    """Kernels every loaded plugin registers, for one operation ("matmul") or all. Load errors go to stderr;
    a plugin directory that does not exist, or a bad config file, raises gpudash.errors.UsageError."""
    from gpudash.plugin_manager import kernels_from_plugins

    return [k for k in kernels_from_plugins(plugin_dirs) if op is None or k.op == op]


def use_plugin_dirs(*dirs: str | os.PathLike[str]) -> None:
    """Take one-file kernel plugins from these directories in this process (the config file's `plugin_dirs`
    no longer counts); with no argument, go back to the config file. The default dispatchers pick this up on
    their next call."""
    global _generation
    from gpudash.plugin_manager import use_kernel_plugin_dirs

    use_kernel_plugin_dirs(list(dirs) if dirs else None)
    _generation += 1


def generation() -> int:
    return _generation
