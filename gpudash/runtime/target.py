"""The device a run-time helper answers for, and the recommender's facts about it: live or replayed.

Facts are built as `gpudash export` builds them, by gpudash.recommend.machine_facts: the device and its
architecture, the machine's runtime, the config, the host's cores, the free device memory on a live machine.
The export runs probes, benchmarks and checks before deciding; a run-time helper runs none of them unless
asked (`checks=True`), so its answers are the export's `--bench none` answers, plus any check results given.
The machine is discovered once per process (and replay file); GPUDASH_REPLAY applies as everywhere.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from gpudash.devices import Machine, discover, replay_path
from gpudash.models import DeviceInfo
from gpudash.recommend import Facts
from gpudash.recommend.machine_facts import available_memory, machine_facts

_machines: dict[str | None, Machine] = {}
_targets: dict[tuple[str, str | None, bool], Target] = {}
_lock = threading.Lock()


@dataclass
class Target:
    machine: Machine
    device: DeviceInfo
    facts: Facts
    torch_device: str | None  # "cpu" or "cuda:N" (ROCm GPUs too); on a replay, what the GPU would be called

    @property
    def replayed(self) -> bool:
        return self.machine.replayed

    @property
    def label(self) -> str:
        return f"{self.device.key} ({self.device.name}, {self.machine.label})"


def machine(replay: str | None = None) -> Machine:
    """The live machine (discovered once per process) or a replayed snapshot."""
    path = replay_path(replay)
    with _lock:
        if path not in _machines:
            _machines[path] = discover(replay=path, include_torch=True)
        return _machines[path]


def select_device(found: Machine, device: Any = None) -> DeviceInfo:
    """None: the first GPU, else the CPU (the export's default). Otherwise a torch device ("cuda:1", "cpu",
    torch.device, an int ordinal) or a gpudash key ("nvidia:0"). Raises UsageError naming the choices."""
    from gpudash.errors import GpudashError
    from gpudash.measure.device_names import find_device

    if not found.devices:
        raise GpudashError("no devices found on this machine")
    if device is None or device == "":
        return next((d for d in found.devices if d.vendor != "cpu"), found.devices[0])
    if isinstance(device, int) and not isinstance(device, bool):
        device = f"cuda:{device}"
    text = str(device)
    if text == "cuda":
        gpus = [d for d in found.devices if d.vendor != "cpu"]
        text = gpus[0].key if gpus else text
    return find_device(found, text)


def torch_device_of(found: Machine, device: DeviceInfo) -> str | None:
    if device.vendor == "cpu":
        return "cpu"
    if device.torch_index is not None:
        return f"cuda:{device.torch_index}"
    return f"cuda:{device.index}" if found.replayed else None  # live but torch does not see it


def run_checks_for(found: Machine, device: DeviceInfo, config: dict[str, Any]) -> list[Any]:
    """Every plugin check on this device, each in a child process (the export's checks step)."""
    from gpudash.plugin_manager import make_plugin_manager, run_checks

    pm = make_plugin_manager(config["plugin_dirs"])
    pm.limits = config["plugins"]  # the user's [plugins] limits for the checks' children
    return list(run_checks(found, pm, devices=[device]))


def resolve(
    device: Any = None, *, replay: str | None = None, config: dict[str, Any] | None = None, checks: Any = None
) -> Target:
    """The target device and its facts. `checks`: None (the spec tables only), True (run the plugin checks
    now, in child processes), or check results already at hand (CheckResults or their dicts, e.g. the
    "results" of `gpudash check --json`)."""
    from gpudash.config import load_config

    found = machine(replay)
    dev = select_device(found, device)
    config = load_config() if config is None else config
    if checks is True:
        checks = run_checks_for(found, dev, config)
    facts = machine_facts(
        found,
        dev,
        config=config,
        checks=None if checks is None or checks is False else list(checks),
        memory_available_bytes=available_memory(found, dev),
        bench_mode="none",
    )
    return Target(found, dev, facts, torch_device_of(found, dev))


def cached(device: Any = None, *, replay: str | None = None, checks: Any = None) -> Target:
    """resolve() once per process for the same device, replay and checks (None or True) with the config
    file's settings: for answers that do not change while a program runs (routing, the system summary)."""
    if not (checks is None or checks is True):
        return resolve(device, replay=replay, checks=checks)
    key = (repr(device), replay_path(replay), checks is True)
    with _lock:
        found = _targets.get(key)
    if found is None:
        found = resolve(device, replay=replay, checks=checks)
        with _lock:
            found = _targets.setdefault(key, found)
    return found
