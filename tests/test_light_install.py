"""The light install (no torch): monitor, serve, fleet and info work; what needs torch says so in one line
and exits 3. CI runs the `light` tests in a second venv without torch, where the first test runs for real."""

from __future__ import annotations

import subprocess
import sys

import pytest
from servers import DGX, REPO

from gpudash import requirements
from gpudash.cli import main

pytestmark = pytest.mark.light
NEEDS_TORCH = [
    ["probe"],
    ["bench", "--precisions", "fp32"],
    ["preflight"],
    ["export", "-o", "-"],
]


@pytest.mark.skipif(requirements.torch_installed(), reason="torch is installed here; CI's light venv runs this")
@pytest.mark.parametrize("argv", NEEDS_TORCH)
def test_without_torch_measuring_commands_say_how_to_get_it(argv):
    run = subprocess.run([sys.executable, "-m", "gpudash", *argv], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert run.returncode == 3
    assert run.stderr.strip() == (
        f"gpudash: error: gpudash {argv[0]} needs PyTorch, which is not installed here: {requirements.TORCH_HINT}"
    )


@pytest.mark.parametrize("argv", NEEDS_TORCH)
def test_the_torch_check_comes_before_any_work(argv, monkeypatch, capsys):
    monkeypatch.setattr(requirements, "torch_installed", lambda: False)
    assert main(argv) == 3
    assert "needs PyTorch, which is not installed here: pip install 'gpudash[torch]'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["info", "--no-torch"],
        ["--replay", str(DGX), "probe"],  # a replay runs nothing
        ["export", "--bench", "none", "-o", "-"],
        ["--replay", str(DGX), "serve", "--textfile", "/nonexistent/x.prom"],  # gets past the torch check
    ],
)
def test_what_runs_nothing_on_a_device_does_not_need_torch(argv, monkeypatch, capsys):
    monkeypatch.setattr(requirements, "torch_installed", lambda: False)
    assert main(argv) in (0, 2)
    assert "needs PyTorch" not in capsys.readouterr().err
