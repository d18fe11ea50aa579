"""Errors that reach the user as one line and an exit code, never as a traceback; and every exit code gpudash
gives, in one table (docs/cli.md and `gpudash --help` print it from here)."""

# Exit codes. A finding is not an error: the command did its job and found something broken.
EXIT_OK = 0
EXIT_FINDINGS = 1  # check, probe, fleet, preflight: the command ran and found something broken
EXIT_USAGE = 2  # a bad argument or input file: config, snapshot, profile (argparse uses 2 as well)
EXIT_FAILED = 3  # the command could not do its job (an output it cannot write, no device to work on)
EXIT_SIGHUP = 129  # 128 + SIGHUP: the terminal went away
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C (not for `info --watch`, where Ctrl-C is the way to stop: 0)
EXIT_SIGTERM = 143  # 128 + SIGTERM

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success; `info --watch` stopped with Ctrl-C"),
    (
        EXIT_FINDINGS,
        "findings: `check` had a CRITICAL result (a check failed; `--exit-codes nagios`: 0/1/2/3 for OK/WARN/CRITICAL/UNKNOWN); `probe` saw a precision the spec calls native fail; `fleet` found a host not up; `preflight` had a rank fail, differ or get lost (never joined, stopped answering, died); `export` found the model does not fit in memory; `bench --preset` was made for another platform",
    ),
    (
        EXIT_USAGE,
        "bad input: an argument, the config file, a snapshot or a profile, an output path gpudash does not replace "
        "(a link, device, FIFO, folder, or a read-only file without --force) (one line names it)",
    ),
    (EXIT_FAILED, "the command could not do its job: an output it cannot write (a full disk), no device to work on"),
    (EXIT_SIGHUP, "ended by SIGHUP (the terminal closed)"),
    (EXIT_INTERRUPTED, "interrupted by Ctrl-C (SIGINT)"),
    (EXIT_SIGTERM, "ended by SIGTERM"),
)


class GpudashError(Exception):
    """A problem that stops the command (an output it cannot write); printed as one line."""

    exit_code = EXIT_FAILED


class UsageError(GpudashError):
    """Bad configuration or arguments: exit code 2, like argparse."""

    exit_code = EXIT_USAGE


class RefusedOutput(UsageError):
    """An output path gpudash will not write to (a symbolic link, a directory, a device that is not a terminal):
    exit code 2, as for any other bad argument."""
