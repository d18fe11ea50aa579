"""gpudash_build_info and gpudash_machine_info: which gpudash answers, on what, live or replayed."""

from __future__ import annotations

import platform

from gpudash import __version__
from gpudash.exporter.family import Family, info
from gpudash.exporter.scrape import Scrape


def families(scrape: Scrape) -> list[Family]:
    build = info("gpudash_build_info", "gpudash's version and the Python running it (value 1)")
    build.add({"version": __version__, "python": platform.python_version()}, 1)
    machine = scrape.machine
    runtime = machine.runtime
    host = info(
        "gpudash_machine_info",
        "The machine gpudash describes: live or replayed from a snapshot, driver, torch and gpudash versions (value 1)",
    )
    host.add(
        {
            "hostname": scrape.hostname,
            "source": machine.label,
            "replayed": "true" if machine.replayed else "false",
            "driver_version": runtime.driver or "",
            "torch_version": runtime.torch or "",
            "cuda_version": runtime.cuda or "",
            "hip_version": runtime.hip or "",
            "gpudash_version": __version__,  # beside the host's name, so a fleet can tell versions apart per host
        },
        1,
    )
    return [build, host]
