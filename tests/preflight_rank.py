"""A torchrun entry point for the preflight tests: gpudash preflight, with a fault planted on one rank.

PLANT_RANK names the rank, PLANT_FAULT the fault in tests/probe_faults.py's form ("bf16=conversion_zeros,
fp16=hang"). On that rank the probe's child runs probe_faults:run_probe, which wraps the real probe; every
other rank runs the real probe untouched.
"""

import os
import sys

if os.environ.get("RANK") == os.environ.get("PLANT_RANK"):
    from gpudash.measure import probe

    probe.TASK_TARGET = "probe_faults:run_probe"
    os.environ["GPUDASH_PROBE_FAULT"] = os.environ["PLANT_FAULT"]

from gpudash.cli import main

sys.exit(main(sys.argv[1:]))
