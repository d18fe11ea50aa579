"""`gpudash` with the exit handlers installed as cli.main is to install them, for tests that send it signals.

`--dashboard ARGS` runs the dashboard as tui.app.run_app is to run it: inside lifetime.graceful, so that
SIGTERM stops the app instead of interrupting its event loop.
"""

import sys

from gpudash.cli import build_parser, main
from gpudash.lifetime import exit_code, graceful, install_exit_handlers


def run_dashboard(argv: list[str]) -> int:
    from gpudash.cli.context import Context
    from gpudash.tui.app import create_app

    ctx = Context(build_parser().parse_args(argv))
    machine = ctx.machine(include_torch=False)
    try:
        app = create_app(machine, ctx.config)
        with graceful(app.exit):
            app.run()
    finally:
        machine.close()
    return exit_code(app.return_code or 0)


if __name__ == "__main__":
    install_exit_handlers()
    if sys.argv[1:2] == ["--dashboard"]:
        sys.exit(run_dashboard(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
