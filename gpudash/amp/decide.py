"""gpudash's decisions for one device, for code that is not a training loop: the adaptive dispatcher (which
precision a matmul kernel may use) and the checks (what to tell the user to train in).

Both take what gpudash.amp takes (None, "cpu", "cuda:N", a torch.device, a gpudash key) or a plugin's
gpudash.plugins_api.Device, and answer through gpudash.recommend.decisions with the same facts as
AmpConfig.auto() and `gpudash export`, so a kernel never computes in another precision than training
autocasts to, and a check never advises another dtype than the export writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpudash.amp.evidence import gather


def kernel_precision(device: Any = None, machine: Any = None):
    """gpudash.recommend.decisions.KernelChoice for `device`: `precision` ("bf16", "fp16" or "fp32") a matmul of
    a training step may compute in, `fp8` whether a scaled fp8 kernel may run (inference), and why."""
    from gpudash.recommend import decisions

    return decisions.kernel_precision(gather(device, machine=machine).facts)


def precision_advice(device: Any = None, broken: Mapping[str, str] | None = None, machine: Any = None):
    """gpudash.recommend.decisions.Advice for `device`: the dtype to train in and one sentence saying why.

    `broken` names precisions the caller (a check) just found broken on the device, with its finding; the
    advice then treats them as a failing check would be treated by `gpudash export`.
    """
    from gpudash.recommend import decisions

    ev = gather(device, machine=machine)
    facts = ev.facts
    if broken:
        found = [
            {
                "plugin": "caller",
                "check": f"{precision} found broken",
                "device": ev.device.key,
                "status": "fail",
                "summary": why,
                "details": {"precision": precision, "provenance": "measured"},
            }
            for precision, why in broken.items()
        ]
        facts.checks = [*(facts.checks or []), *found]
    return decisions.precision_advice(facts)
