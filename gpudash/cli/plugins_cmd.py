"""`gpudash plugins`: every plugin found, where it came from, its hooks, what it provides, and load errors."""

from __future__ import annotations

import json
import os
from pathlib import Path


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "plugins",
        parents=parents,
        help="list plugins, their hooks and load errors",
        description="List the plugins found through the 'gpudash' entry points and the "
        "plugin directories, loaded or not, with the reason when not. "
        "GPUDASH_LOAD_PLUGINS=a,b loads only those (empty: none).",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table (errors still go to stderr)")
    p.set_defaults(func=run)


def plugin_manager_for(ctx, on_error="stderr"):
    """The plugin manager for a command, after checking each plugin directory names a real folder."""
    from gpudash.errors import UsageError
    from gpudash.plugin_manager import make_plugin_manager, report_to_stderr

    for folder in getattr(ctx.args, "plugins_dir", None) or []:
        if not Path(folder).expanduser().is_dir():
            raise UsageError(f"--plugins-dir {folder}: not a directory")
    for folder in ctx.config["plugin_dirs"]:
        if not Path(folder).expanduser().is_dir():
            raise UsageError(f"config key plugin_dirs: {folder} is not a directory")
    return make_plugin_manager(ctx.plugin_dirs, on_error=report_to_stderr if on_error == "stderr" else on_error)


def run(ctx) -> int:
    from gpudash.plugin_manager import LOAD_ENV, list_plugins

    records = list_plugins(plugin_manager_for(ctx))
    if ctx.args.json:
        print(
            json.dumps(
                {"version": 1, "load_plugins_env": os.environ.get(LOAD_ENV), "plugins": [r.to_dict() for r in records]},
                indent=2,
            )
        )
    else:
        print(render(records, os.environ.get(LOAD_ENV)))
    return 0


def provides_text(provides: dict[str, list[str]]) -> str:
    parts = []
    for kind in ("checks", "benchmarks", "kernels"):
        count = len(provides.get(kind) or [])
        if count:
            parts.append(f"{count} {kind[:-1] if count == 1 else kind}")
    return ", ".join(parts) or "-"


def origin_text(record) -> str:
    return f"{record.source} ({record.origin})"


def render(records, load_env: str | None) -> str:
    from gpudash import formatting as fmt

    if not records:
        why = f" (GPUDASH_LOAD_PLUGINS={load_env!r})" if load_env is not None else ""
        return f"no plugins found{why}"
    rows = [
        [
            r.name,
            r.version or "-",
            origin_text(r),
            ", ".join(r.hooks) or "-",
            provides_text(r.provides),
            "loaded" if r.loaded and not r.errors else "loaded, with errors" if r.loaded else "FAILED",
        ]
        for r in records
    ]
    lines = fmt.table(rows, ["name", "version", "from", "hooks", "provides", "status"]).splitlines()
    out = [lines[0]]
    for line, record in zip(lines[1:], records):
        out.append(line)
        out.extend(f"  error: {e}" for e in record.errors)
    if load_env is not None:
        out.append(f"GPUDASH_LOAD_PLUGINS={load_env!r}: only the plugins named there were loaded")
    return "\n".join(out)
