"""gpudash: see what accelerators a machine has, which precisions really work, and how fast.

The package root stays cheap to import: no torch, no Textual (the headless CLI depends on it).
"""

__version__ = "0.1.0"
