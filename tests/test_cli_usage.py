"""Issue 25, conventions: argparse's errors as one line with a "did you mean", exit 2; `gpudash tui` without a
terminal prints `gpudash info` as `gpudash` does; `gpudash completion bash|zsh|fish` scripts that complete
commands, options, choices and files in the real shells."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpudash.errors import EXIT_USAGE

REPO = Path(__file__).resolve().parent.parent
H100 = str(REPO / "examples" / "snapshots" / "h100-80gb.json")


def run(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("GPUDASH_REPLAY", "TEXTUAL_DRIVER")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gpudash", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=environment,
        cwd=REPO,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["infoo"], "gpudash: error: unknown command 'infoo' (did you mean info?); see gpudash --help"),
        (["info", "--jsn"], "gpudash: error: unknown option --jsn for `gpudash info` (did you mean --json?)"),
        (["--jsn", "info"], "gpudash: error: unknown option --jsn for `gpudash info` (did you mean --json?)"),
        (
            ["info", "--show-uid"],
            "gpudash: error: unknown option --show-uid for `gpudash info` (did you mean --show-uuid?)",
        ),
        (["--bogus"], "gpudash: error: unknown option --bogus for `gpudash`; see gpudash --help"),
        (["info", "stray"], "gpudash: error: unexpected argument 'stray' for `gpudash info`"),
        (["snapshot"], "gpudash: error: `gpudash snapshot` needs -o FILE (see gpudash snapshot --help)"),
        (
            ["snapshot", "-0", "x.json"],
            "gpudash: error: `gpudash snapshot` needs -o FILE; did you mean -o where you typed -0?",
        ),
        (["export", "--format", "tmol"], "gpudash: error: --format: invalid choice 'tmol' (did you mean toml? choose"),
        (["completion", "fsh"], "gpudash: error: SHELL: invalid choice 'fsh' (did you mean fish?"),
        (["info", "--count"], "gpudash: error: argument --count: expected one argument"),
    ],
)
def test_usage_errors_are_one_line_with_a_suggestion_and_exit_2(args, line):
    res = run(*args)
    assert res.returncode == EXIT_USAGE, res.stderr
    assert res.stderr.startswith(line), res.stderr
    assert len(res.stderr.splitlines()) == 1 and res.stdout == ""


def test_nothing_close_lists_the_commands():
    res = run("frobnicate")
    assert res.returncode == EXIT_USAGE
    assert "(commands: info, probe, bench" in res.stderr and "did you mean" not in res.stderr


def test_tui_without_a_terminal_prints_info_like_gpudash():
    plain = run("--replay", H100)
    tui = run("tui", "--replay", H100, timeout=60)
    assert tui.returncode == 0 == plain.returncode, tui.stderr
    assert (
        tui.stderr
        == plain.stderr
        == "gpudash: stdout is not a terminal: printing `gpudash info` (the dashboard needs one)\n"
    )
    assert "NVIDIA H100 80GB HBM3" in tui.stdout
    # Both print the same table (the clock line aside).
    assert tui.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]


def test_tui_global_options_reach_info():
    res = run("--replay", H100, "tui", "--no-color", "--only", "0")
    assert res.returncode == 0 and "nvidia:0" in res.stdout


# Completion ------------------------------------------------------------------------------------------------

BASH_COMPLETE = r"""
source "$1"
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gpudash; echo "${COMPREPLY[*]}"; }
complete_words gpudash in
complete_words gpudash info --js
complete_words gpudash --replay examples/snapshots/h100-8
complete_words gpudash --replay x.json exp
complete_words gpudash export --format ""
complete_words gpudash completion ""
complete_words gpudash snapshot --re
complete -p gpudash
"""


def test_bash_completion_completes_commands_options_choices_and_files(tmp_path):
    res = run("completion", "bash")
    assert res.returncode == 0 and res.stderr == ""
    script = tmp_path / "gpudash.bash"
    script.write_text(res.stdout)
    lines = subprocess.run(
        ["bash", "--norc", "-c", BASH_COMPLETE, "bash", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
        check=True,
    ).stdout.splitlines()
    assert lines[0] == "info"  # the command
    assert lines[1] == "--json"  # info's option
    assert lines[2] == "examples/snapshots/h100-80gb.json"  # --replay takes a file
    assert lines[3] == "export"  # the global option's value is skipped when finding the command
    assert lines[4].split() == ["toml", "json"]  # an option's choices
    assert lines[5].split()[:3] == ["bash", "zsh", "fish"]  # the positional's choices
    assert lines[6].split() == ["--redact", "--replay", "--readonly"]  # the command's own and the global options
    assert lines[7] == "complete -o default -F _gpudash gpudash"


def test_every_command_and_option_is_in_the_bash_script():
    from gpudash.cli import COMMANDS, build_parser

    script = run("completion", "bash").stdout
    for name in COMMANDS:
        assert f"        {name}) words=" in script
    info = next(line for line in script.splitlines() if line.strip().startswith("info) words="))
    for option in ("--watch", "--count", "--show-uuid", "--no-processes", "--redact", "--replay", "--only"):
        assert f" {option} " in info
    assert build_parser() is not None


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_fish_completion_in_fish(tmp_path):
    script = tmp_path / "gpudash.fish"
    script.write_text(run("completion", "fish").stdout)
    out = subprocess.run(
        [
            "fish",
            "--no-config",
            "-c",
            f"source {script}; complete -C 'gpudash inf'; complete -C 'gpudash info --js';"
            " complete -C 'gpudash export --format '",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.splitlines()
    assert [line.split("\t")[0] for line in out] == ["info", "--json", "json", "toml"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_zsh_completion_parses_and_defines_the_function(tmp_path):
    script = tmp_path / "_gpudash"
    script.write_text(run("completion", "zsh").stdout)
    assert script.read_text().startswith("#compdef gpudash\n")
    subprocess.run(["zsh", "-n", str(script)], check=True, timeout=30)
    res = subprocess.run(
        [
            "zsh",
            "-f",
            "-c",
            f"autoload -U compinit && compinit -u -D; source {script}; whence -w _gpudash; echo $_comps[gpudash]",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert res.stdout.split() == ["_gpudash:", "function", "_gpudash"], res.stderr
