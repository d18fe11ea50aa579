"""Headless paths never import Textual or torch, and the TUI never imports torch at start-up.

Checked in a fresh interpreter (subprocess): a static import graph cannot see imports deferred into
functions, and this test process has long since imported both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

TUI_MODULES = ("textual", "textual_plotext", "plotext", "rich")
HEAVY = ("torch",)


def loaded_after(code: str, watch: tuple[str, ...]) -> list[str]:
    """Run `code` in a fresh interpreter; return which of `watch` ended up in sys.modules."""
    script = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        print(json.dumps(sorted(m for m in {watch!r} if m in sys.modules)))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GPUDASH_REPLAY": ""},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_headless_modules_import_neither_textual_nor_torch():
    code = "import gpudash.cli, gpudash.info, gpudash.devices, gpudash.record, gpudash.history, gpudash.knowledge\n"
    assert loaded_after(code, TUI_MODULES + HEAVY) == []


def test_the_public_apis_import_neither_textual_nor_torch():
    # Training code and plugins import these; torch comes when a function needs it, Textual never.
    code = "import gpudash.amp, gpudash.apply, gpudash.ops, gpudash.rocm, gpudash.runtime, gpudash.plugins_api, gpudash.hookspecs\n"
    assert loaded_after(code, TUI_MODULES + HEAVY) == []


def test_no_module_outside_the_tui_imports_textual():
    # Every module, including ones added later and child-side tasks (which may import torch), and the
    # built-in plugins. gpudash.tui is never imported, not even to list its modules; __main__ would run the CLI.
    code = """
        import importlib, pkgutil

        def walk(name, skip):
            package = importlib.import_module(name)
            for info in pkgutil.iter_modules(package.__path__, name + "."):
                if info.name in skip:
                    continue
                if info.ispkg:
                    walk(info.name, skip)
                else:
                    importlib.import_module(info.name)

        # gpudash.web serves the TUI through textual-serve, which brings rich (never Textual: tests/test_web.py).
        walk("gpudash", {"gpudash.tui", "gpudash.web", "gpudash.__main__"})
        walk("gpudash_plugins", set())
        assert "gpudash.measure.probe.tasks.matmul" in __import__("sys").modules  # the walk reached the leaves
    """
    assert loaded_after(code, TUI_MODULES) == []


def test_actions_and_render_import_neither_textual_nor_torch():
    """Every face calls the actions and draws with render; a headless face must not pay for Textual."""
    from pathlib import Path

    import gpudash

    root = Path(gpudash.__file__).parent
    names = [f"gpudash.{d}.{p.stem}" for d in ("actions", "render") for p in sorted((root / d).glob("[!_]*.py"))]
    assert len(names) > 10
    assert loaded_after(f"import {', '.join(names)}\n", TUI_MODULES + HEAVY) == []


def test_help_imports_neither_textual_nor_torch():
    code = """
        import contextlib, io
        import gpudash.cli
        with contextlib.redirect_stdout(io.StringIO()) as out:
            try:
                gpudash.cli.main(["--help"])
            except SystemExit as exc:
                assert exc.code == 0, exc.code
        assert "usage: gpudash" in out.getvalue()
    """
    assert loaded_after(code, TUI_MODULES + HEAVY) == []


def test_the_tui_does_not_import_torch_to_build_its_first_frame():
    code = """
        from gpudash.devices import discover
        from gpudash.tui.app import create_app
        from gpudash.tui.widgets import DeviceCard, PrecisionBadges
        from gpudash.tui.screens.dashboard import DashboardView
        from gpudash.tui.screens.help import HelpScreen
        app = create_app(discover(include_torch=False))
        assert "textual" in __import__("sys").modules
    """
    assert loaded_after(code, HEAVY) == []
