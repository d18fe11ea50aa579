"""One answer per machine: the export, AmpConfig.auto(), the adaptive dispatcher and the ROCm checks agree.

Each row is a machine: every example snapshot (replayed, as GPUDASH_REPLAY and `--replay` give it), two more
snapshots built from public data for parts the examples lack (RDNA3, a GTX 16xx), and this machine's CPU live,
once with nothing remembered and once after a benchmark measured bf16 faster. Each column asks the same
question, "which precision does training use here", through a different path:

  export      gpudash.actions.export.export_settings (what `gpudash export` writes): amp.dtype
  amp         gpudash.amp.AmpConfig.auto() with the replay set (live: on this machine)
  dispatcher  the adaptive matmul's kernel for a float32 matmul that needs a backward pass (training), on the
              Device a plugin is given (live: the Device of a real CPU tensor, and a real matmul on it)
  check       the ROCm known-issues check's advice (details["amp_dtype"]), where it names a precision

A path that decided by its own rule (the dispatcher's old "bf16 wherever native", the check's old "prefer fp16
on RDNA3", an AmpConfig that ignored the replay or the remembered benchmark) would split a row.
"""

from __future__ import annotations

import json

import pytest
import torch
from bench_runs import keep_run
from conftest import snapshot_dict
from fakes import EXAMPLES

from gpudash import amp
from gpudash.actions.export import export_settings, select_device
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.plugin_manager.runs import plugin_device
from gpudash.plugins_api import local_device
from gpudash_plugins.adaptive_kernels import Dispatcher
from gpudash_plugins.adaptive_kernels.kernels import BUILTIN_KERNELS
from gpudash_plugins.rocm_checks.table_checks import KnownIssues

SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
EXAMPLE_SNAPSHOTS = sorted(p.name for p in EXAMPLES.glob("*.json"))
RDNA3 = {
    "vendor": "amd",
    "index": 0,
    "name": "AMD Radeon RX 7900 XTX",
    "compute_capability": None,
    "gfx_target": "gfx1100",
    "memory_total_bytes": 24 << 30,
    "multiprocessors": 96,
    "samples": [{}],
}
GTX_1660 = {
    "vendor": "nvidia",
    "index": 0,
    "name": "NVIDIA GeForce GTX 1660 SUPER",
    "compute_capability": "7.5",
    "gfx_target": None,
    "memory_total_bytes": 6 << 30,
    "multiprocessors": 22,
    "samples": [{}],
}
BUILT = {
    "rx-7900-xtx.json": (RDNA3, {"torch": "2.7.1+rocm6.4", "cuda": None, "hip": "6.4.43482", "driver": "6.12"}),
    "gtx-1660-super.json": (GTX_1660, {"torch": "2.5.1+cu124", "cuda": "12.4", "hip": None, "driver": "550.120"}),
}


def _snapshot(name: str, tmp_path) -> str:
    if name in BUILT:
        device, runtime = BUILT[name]
        path = tmp_path / name
        path.write_text(json.dumps(snapshot_dict(device, runtime=runtime)))
        return str(path)
    return str(EXAMPLES / name)


def answers(session: Session, dispatcher_device, machine_arg=None) -> dict[str, str]:
    """Each path's answer for the session's machine's default device (the first GPU, else the CPU)."""
    gathered = export_settings(session, bench="none")
    out = {"export": SHORT[gathered.settings.value("amp.dtype")]}
    out["amp"] = SHORT[amp.AmpConfig.auto(machine=machine_arg).dtype_name]
    kernel = Dispatcher(BUILTIN_KERNELS).choose(dispatcher_device, (64, 256), (128, 256), requires_grad=True)
    out["dispatcher"] = kernel.precision
    if dispatcher_device.vendor == "amd":
        result = KnownIssues().run(dispatcher_device)
        if "amp_dtype" in result.details:  # the check names a precision here: its advice must agree
            out["check"] = SHORT[result.details["amp_dtype"]]
    return out


@pytest.mark.parametrize("name", [*EXAMPLE_SNAPSHOTS, *BUILT])
def test_one_answer_per_replayed_machine(name, tmp_path, monkeypatch):
    path = _snapshot(name, tmp_path)
    monkeypatch.setenv("GPUDASH_REPLAY", path)  # AmpConfig.auto() answers for the replayed machine
    session = Session(defaults(), replay=path)
    machine = session.machine()
    device = plugin_device(select_device(machine, None), machine)  # what a plugin is given
    got = answers(session, device)
    assert len(set(got.values())) == 1, got
    # an explicit machine argument gives the same answer as the environment
    monkeypatch.delenv("GPUDASH_REPLAY")
    assert SHORT[amp.AmpConfig.auto(machine=path).dtype_name] == got["amp"]


EXPECTED = {  # the answers themselves, from the vendor facts (test_recommend.py has the reasons)
    "a100-80gb.json": "bf16",
    "dgx-h100-8gpu.json": "bf16",
    "dgx2-v100-16gpu.json": "fp16",  # Volta: fp16 tensor cores, no bf16
    "h100-80gb.json": "bf16",
    "mi300x.json": "bf16",
    "rtx-3060.json": "bf16",
    "rx-5600-xt.json": "fp32",  # RDNA1: no matrix units, AMP reported unstable
    "strix-halo-8060s.json": "fp16",  # RDNA3.5: bf16 cautioned, spec only
    "rx-7900-xtx.json": "fp16",  # RDNA3: bf16 cautioned, spec only
    "gtx-1660-super.json": "fp32",  # TU116: no tensor cores
}


def test_every_example_snapshot_is_covered_with_its_expected_answer(tmp_path, monkeypatch):
    assert set(EXAMPLE_SNAPSHOTS) | set(BUILT) == set(EXPECTED)
    for name, want in EXPECTED.items():
        monkeypatch.setenv("GPUDASH_REPLAY", _snapshot(name, tmp_path))
        assert SHORT[amp.AmpConfig.auto().dtype_name] == want, name
    rdna1 = discover(replay=_snapshot("rx-5600-xt.json", tmp_path))
    advice = KnownIssues().run(plugin_device(rdna1.devices[0], rdna1))
    assert advice.details["amp_dtype"] == "float32" and advice.remediation.startswith("Train in fp32")
    rdna3 = discover(replay=_snapshot("rx-7900-xtx.json", tmp_path))
    advice = KnownIssues().run(plugin_device(rdna3.devices[0], rdna3))
    assert advice.remediation.startswith("Train with fp16 autocast and a GradScaler")
    assert "caution from the tables" in advice.remediation and "pytorch/pytorch/pull/189394" in advice.remediation


def _live_row(no_vendor_libs) -> dict[str, str]:
    session = Session(defaults())
    here = local_device("cpu")  # the Device the dispatcher builds for a real CPU tensor
    got = answers(session, here)
    # and a real training matmul through the dispatcher on this CPU
    x = torch.randn(32, 64, requires_grad=True)
    w = torch.randn(48, 64)
    _, kernel = Dispatcher(BUILTIN_KERNELS).matmul_with_info(x, w)
    got["dispatcher (ran)"] = {k.name: k.precision for k in BUILTIN_KERNELS}[kernel]
    return got


def test_one_answer_on_this_cpu_live(no_vendor_libs):
    got = _live_row(no_vendor_libs)
    assert len(set(got.values())) == 1, got


def test_one_answer_on_this_cpu_after_a_remembered_benchmark(no_vendor_libs, native_bf16_cpu):
    """What `gpudash bench` (or an export) measured is read by every path: they all move together (on a CPU
    with native bf16, where a measurement can make bf16 the answer)."""
    machine = discover(include_torch=True)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    keep_run(machine, cpu, {"bf16": 1.8})
    got = _live_row(no_vendor_libs)
    assert set(got.values()) == {"bf16"}, got
