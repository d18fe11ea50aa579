"""Which commands need torch as asked, so the light install stops them with one line (exit 3) before any work.

Replayed machines run nothing, and `export --bench none` decides from the tables alone: neither needs torch.
"""

from __future__ import annotations

import argparse
from typing import Any

from gpudash.devices import replay_path
from gpudash.requirements import require_torch


def _measures(args: argparse.Namespace, config: dict[str, Any]) -> bool:
    if replay_path(getattr(args, "replay", None)):
        return False
    if args.command in ("probe", "preflight"):
        return True
    if args.command == "bench":  # --load/--compare read profiles, --preset list lists: only measuring needs torch
        return not (
            getattr(args, "load", None) or getattr(args, "compare", None) or getattr(args, "preset", None) == "list"
        )
    if args.command == "export":
        return (getattr(args, "bench", None) or config["export"]["bench"]) != "none"
    return False


def check(args: argparse.Namespace, config: dict[str, Any]) -> None:
    if _measures(args, config):
        require_torch(f"gpudash {args.command}")
