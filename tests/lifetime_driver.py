"""`gpudash` with the exit handlers installed, as cli.main will install them: for tests that send it signals."""

import sys

from gpudash.cli import main
from gpudash.lifetime import install_exit_handlers

if __name__ == "__main__":
    install_exit_handlers()
    sys.exit(main(sys.argv[1:]))
