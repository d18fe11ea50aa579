"""gpudash: see what accelerators a machine has, which precisions really work, and how fast.

The package root stays cheap to import: no torch, no Textual (the headless CLI depends on it).
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # `gpudash.hookimpl` (the marker docs/plugins.md shows) without making every `import gpudash` load pluggy.
    if name == "hookimpl":
        from gpudash.plugins_api import hookimpl

        return hookimpl
    raise AttributeError(f"module 'gpudash' has no attribute {name!r}")
