"""Errors that reach the user as one line and an exit code, never as a traceback."""


class GpudashError(Exception):
    """A problem the user can fix (bad input, missing file); printed as one line."""

    exit_code = 1


class UsageError(GpudashError):
    """Bad configuration or arguments: exit code 2, like argparse."""

    exit_code = 2


class RefusedOutput(UsageError):
    """An output path gpudash will not write to (a symbolic link, a directory, a device that is not a terminal):
    exit code 2, as for any other bad argument."""
