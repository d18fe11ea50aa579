"""`python -m gpudash`: the same command as the `gpudash` script, with the same plugins.

`python -m` puts the working directory first on sys.path; gpudash itself is imported by now, so that entry
goes, and a `plugins/` package, a `json.py` or a `*.dist-info` lying there is never imported or listed.
"""

import os
import sys

if sys.path and os.path.realpath(sys.path[0] or ".") == os.path.realpath(os.getcwd()):
    del sys.path[0]

from gpudash.cli import main

raise SystemExit(main())
