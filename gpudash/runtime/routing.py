"""Which device an operation should run on: the export's [routing] rule, applied at run time.

`get_optimal_device("fft")` is "cpu" where the tables or a check route FFTs to the CPU (RDNA1, where an RX 5600
XT training report saw system hangs in FFTs, or any device whose check results carry {"routing": {"fft":
"cpu"}}), and the device itself everywhere else: on NVIDIA and on the other AMD GPUs FFTs stay on the GPU.
The rule is gpudash.recommend.env.routing_settings, the one `gpudash export` writes under [routing].
"""

from __future__ import annotations

from typing import Any

from gpudash.runtime.target import Target, cached, resolve


def routes(target: Target) -> dict[str, tuple[str, str]]:
    """operation -> (device, why) for every operation routed away from the device."""
    from gpudash.recommend import env

    return {op: (str(s.value), s.reason) for op, s in env.routing_settings(target.facts).items()}


def device_for(target: Target, operation: str) -> tuple[str, str]:
    """(torch device for `operation`, why)."""
    routed = routes(target).get(operation.lower())
    here = target.torch_device or "cpu"
    if routed is not None:
        return routed
    if target.torch_device is None:
        return "cpu", f"torch does not see {target.device.key}: the CPU is the only device it can run on"
    return here, f"no rule routes {operation!r} away from {target.device.key}"


def get_optimal_device(
    operation: str = "default",
    device: Any = None,
    *,
    replay: str | None = None,
    checks: Any = None,
    config: dict[str, Any] | None = None,
) -> str:
    """The torch device ("cpu", "cuda:0") to run `operation` ("fft", "matmul", "transformer", ...) on, for the
    training device `device` (default: the first GPU, else the CPU). `checks` as for
    gpudash.runtime.target.resolve: None uses the tables only, True runs the plugin checks now."""
    target = (
        cached(device, replay=replay, checks=checks)
        if config is None
        else resolve(device, replay=replay, checks=checks, config=config)
    )
    return device_for(target, operation)[0]


def optimize_tensor_for_operation(tensor: Any, operation: str, device: Any = None, **kwargs: Any) -> Any:
    """`tensor` on the device `operation` should run on (a copy only when it must move)."""
    return tensor.to(get_optimal_device(operation, device, **kwargs))
