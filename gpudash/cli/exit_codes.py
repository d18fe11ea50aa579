"""Each command's exit codes, for its `--help` epilog. docs/cli.md ("Exit codes by command") has the same rows,
and tests/test_exit_code_table.py runs every one of them and compares the code with that table.

The general meaning of each code is gpudash.errors.EXIT_CODES; this is what each code means for one command.
`preflight` keeps its own text (gpudash.cli.preflight_cmd.EXIT_TEXT), compared with the same table.
"""

from __future__ import annotations

SIGNALS = "129, 130, 143 ended by SIGHUP, Ctrl-C (SIGINT) or SIGTERM"

BY_COMMAND: dict[str, tuple[tuple[str, str], ...]] = {
    "info": (
        ("0", "the devices were printed, or --watch was stopped with Ctrl-C"),
        ("2", "bad option, config or snapshot, or an --only index the machine lacks"),
        ("3", "standard output could not take the output (a full disk, a closed pipe's writer)"),
    ),
    "probe": (
        ("0", "no precision the spec calls native failed (a replayed machine runs nothing)"),
        ("1", "a precision the spec calls native failed"),
        ("2", "bad option, config or snapshot"),
        ("3", "torch is not installed"),
    ),
    "bench": (
        ("0", "measured, or a profile loaded or compared, or the presets listed"),
        ("1", "--preset was made for another platform"),
        ("2", "bad option, config, snapshot or profile, or an output path gpudash does not replace"),
        ("3", "torch is not installed, or the profile cannot be written"),
    ),
    "check": (
        ("0", "nothing CRITICAL (warnings, UNKNOWN and skipped checks leave it 0)"),
        ("1", "a result is CRITICAL (a check failed)"),
        ("2", "bad option, config or snapshot"),
        ("0/1/2/3", "with --exit-codes nagios: the worst result is OK/WARN/CRITICAL/UNKNOWN"),
    ),
    "export": (
        ("0", "the settings were written"),
        ("1", "the model does not fit in memory even at a batch of one (the file is still written)"),
        ("2", "bad option, config or snapshot, or an output path gpudash does not replace"),
        ("3", "torch is not installed (a measured export), or the file cannot be written"),
    ),
    "snapshot": (
        ("0", "the snapshot was written (Ctrl-C during --seconds stops recording early)"),
        ("2", "bad option, config or snapshot, or an output path gpudash does not replace (a missing folder)"),
        ("3", "the file cannot be written (permission denied, a full disk)"),
    ),
    "plugins": (
        ("0", "the plugins were listed (plugins that failed to load are listed, not an error)"),
        ("2", "bad option or config, or an empty --plugins-dir"),
    ),
    "serve": (
        ("0", "stopped by Ctrl-C or SIGTERM, or the textfile was written"),
        ("2", "bad option, config, web config, certificate or key"),
        ("3", "cannot listen (address in use, not permitted) or write the textfile"),
    ),
    "fleet": (
        ("0", "every host is up (answering, with its GPUs, none lost)"),
        (
            "1",
            "a host is stale or unreachable, degraded (a lost GPU, fewer GPUs than expected) or empty (no device "
            "series, not expected to have none)",
        ),
        ("2", "bad option (a --filter term, a --sort key), config or hostfile"),
        ("3", "Prometheus cannot be read (no answer, or not Prometheus's API): there is no fleet to show"),
    ),
    "completion": (
        ("0", "the script was printed"),
        ("2", "a shell other than bash, zsh or fish"),
    ),
    "tui": (
        ("0", "the dashboard was quit (with stdout not a terminal: gpudash info was printed)"),
        ("2", "bad option, config or snapshot"),
    ),
    "web": (
        ("0", "stopped by Ctrl-C or SIGTERM"),
        ("2", "bad option or config"),
        ("3", "cannot listen (address in use, not permitted)"),
    ),
}


def epilog(command: str, before: str = "") -> str:
    """`before` (examples, a pointer to the docs) and then the command's exit codes, in one paragraph."""
    codes = "; ".join(f"{code} {meaning}" for code, meaning in BY_COMMAND[command])
    text = f"exit codes: {codes}; {SIGNALS} (docs/cli.md)."
    return f"{before} {text}" if before else text
