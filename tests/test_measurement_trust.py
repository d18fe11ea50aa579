"""Measurements that stay true on a busy machine (issue 22): interleaved rounds with contention left out, spreads,
plausibility bounds, a history that never remembers a contended or implausible figure, and decisions that need a
conclusive measurement to change."""

from __future__ import annotations

import itertools
import time

import pytest
from bench_runs import keep_run

from gpudash.contracts.validation import problems
from gpudash.devices import discover
from gpudash.measure.bench import plausibility
from gpudash.measure.bench.replay import replayed_report
from gpudash.measure.bench.report import bench_json
from gpudash.measure.bench.store import append_run, remembered_speedups
from gpudash.measure.bench.tasks.clocks import CpuClock, Warm, measure_rounds
from gpudash.measure.bench.tasks.contention import Seen
from gpudash.measure.probe.tasks import timing
from gpudash.models import DeviceInfo
from gpudash.recommend import decisions
from gpudash.recommend.machine_facts import add_remembered, machine_facts
from gpudash.recommend.speed import Figure, compare

AMX = ["avx512_f", "avx512_bf16", "amx_bf16", "amx_int8", "avx512_vnni", "fma3", "avx2"]
NO_AMX = ["avx512_f", "avx512_bf16", "avx512_vnni", "fma3", "avx2"]


def cpu(features, family=25, model=0x11, vendor="AuthenticAMD") -> DeviceInfo:
    return DeviceInfo(
        vendor="cpu",
        index=0,
        name="test CPU",
        multiprocessors=2,
        logical_cores=2,
        max_clock_mhz=2600,
        cpu_features=list(features),
        extra={"cpu_vendor": vendor, "cpu_family": str(family), "cpu_model": str(model)},
    )


# Comparisons beyond the noise ---------------------------------------------------------------------------


def fig(value, low, high, when="t"):
    return Figure(value, low, high, "benchmark", when)


def test_a_comparison_is_decided_only_by_a_band_that_clears_the_threshold():
    assert compare([fig(2.0, 1.9, 2.1)], 1.1).answer is True
    assert compare([fig(0.9, 0.85, 0.95)], 1.1).answer is False
    undecided = compare([fig(1.12, 1.0, 1.2)], 1.1)
    assert undecided.answer is None and "inconclusive" in undecided.note and "1.12x" in undecided.note
    assert compare([], 1.1).answer is None and compare([], 1.1).figure is None


def test_an_inconclusive_newer_figure_never_flips_an_older_conclusive_one():
    newer, older = fig(1.08, 0.95, 1.2, "2026-11-28"), fig(1.9, 1.8, 2.0, "2026-11-20")
    got = compare([newer, older], 1.1)
    assert got.answer is True and got.figure is older
    assert got.note.startswith("unconfirmed: the newer measurement (1.08x") and "2026-11-28" in got.note


# Plausibility -----------------------------------------------------------------------------------------


def test_ratio_bounds_follow_the_isa_the_cpu_reports():
    amx = plausibility.ratio_bound(cpu(AMX, 6, 143, "GenuineIntel"), "bf16")
    assert amx is not None and amx[0] == pytest.approx(1024 / 64 * plausibility.RATIO_MARGIN)
    zen4 = plausibility.ratio_bound(cpu(NO_AMX), "bf16")
    assert zen4 is not None and zen4[0] == pytest.approx(2 * plausibility.RATIO_MARGIN)
    emulated = plausibility.ratio_bound(cpu(["avx2", "fma3"]), "bf16")
    assert emulated is not None and emulated[0] == plausibility.RATIO_MARGIN and "emulated" in emulated[1]


def test_the_issue_s_13x_bf16_on_avx512_bf16_without_amx_is_implausible():
    why = plausibility.beyond_ratio(cpu(NO_AMX), "bf16", 13.2)
    assert why is not None and why.startswith("implausible: bf16 measured 13.20x fp32, beyond the 2.60x")
    assert plausibility.beyond_ratio(cpu(NO_AMX), "bf16", 1.96) is None
    assert plausibility.beyond_ratio(cpu(AMX, 6, 143, "GenuineIntel"), "bf16", 13.2) is None  # AMX allows it


def test_a_figure_above_a_datasheet_peak_is_implausible_an_estimate_is_not_judged(h100_snapshot):
    machine = discover(replay=str(h100_snapshot))
    gpu = next(d for d in machine.devices if d.vendor == "nvidia")
    assert plausibility.above_peak(gpu, "bf16", 1_500_000.0).startswith("implausible: bf16 measured 1,500,000.0")
    assert plausibility.above_peak(gpu, "bf16", 700_000.0) is None
    assert plausibility.above_peak(cpu(NO_AMX), "fp32", 1e9) is None  # CPU peaks are estimates from the clock


# Timing rounds ----------------------------------------------------------------------------------------


class Watch:
    """Reports the rounds listed in `busy` (0-based) as contended."""

    def __init__(self, busy) -> None:
        self.busy, self.round = set(busy), -1

    def restart(self) -> None:
        self.round += 1

    def seen(self) -> Seen:
        if self.round in self.busy:
            return Seen(0.6, 0.0, "other processes took 60% of the CPU")
        return Seen(0.0, 0.0)


def _call(log, name, seconds=0.0005):
    def run():
        log.append(name)
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return run


def _warm():
    return Warm(reps=1, first_s=0.0005, estimate_s=0.0005, spent_s=0.0005)


def test_precisions_are_timed_in_alternating_blocks_and_contended_rounds_are_left_out():
    log: list[str] = []
    calls = {"fp32": (_call(log, "fp32"), _warm()), "bf16": (_call(log, "bf16"), _warm())}
    got = measure_rounds(calls, CpuClock(), measure_s=0.02, case_budget_s=5.0, watch=Watch(busy={0, 2}))
    switches = sum(1 for a, b in itertools.pairwise(log) if a != b)
    assert switches >= 7  # at least 8 rounds, each a block of fp32 then a block of bf16
    for t in got.values():
        assert t.clean is not None and 0 < len(t.clean) < len(t.times)  # rounds 0 and 2 were dropped
        assert not t.contended and t.contention == "other processes took 60% of the CPU"
        assert t.summary()["reps"] == len(t.clean) and t.summary()["timed_reps"] == len(t.times)


def test_a_case_contended_in_every_round_is_marked_so_after_its_retries():
    log: list[str] = []
    calls = {"fp32": (_call(log, "fp32"), _warm())}
    got = measure_rounds(calls, CpuClock(), measure_s=0.01, case_budget_s=5.0, watch=Watch(busy=range(10_000)))
    t = got["fp32"]
    assert t.contended and t.clean == [] and t.summary()["contended"] is True
    assert sum(t.times) >= 0.01 * 3  # it kept trying for the retry time before giving up


def test_paired_probe_timing_drops_rounds_whose_thread_was_descheduled():
    slow = {"n": 0}

    def sometimes_waits():
        slow["n"] += 1
        if slow["n"] % 3 == 0:
            time.sleep(0.003)  # off the CPU: wall time without thread CPU time, as when descheduled

    def busy():
        end = time.perf_counter() + 0.0005
        while time.perf_counter() < end:
            pass

    pair = timing.paired(sometimes_waits, busy, "cpu", budget_s=0.05)
    assert pair.basis == "wall time of undisturbed rounds" and pair.undisturbed is not None
    assert pair.undisturbed < pair.rounds and pair.first_median_s < 0.002

    always = timing.paired(lambda: time.sleep(0.002), busy, "cpu", budget_s=0.02)
    assert always.basis == "thread CPU time" and always.undisturbed == 0


# What is remembered and decided from ----------------------------------------------------------------


def _keep(machine, device, speed: float, when: str, **bf16_details):
    """A bench run of fp32 and bf16 with bf16 at `speed` x fp32, its bf16 record's details as given."""
    doc = bench_json(machine, {device.key: replayed_report(device, ["fp32", "bf16"], "quick", None)}, "quick")
    entry = doc["devices"][0]
    entry.update(measured_at=when, provenance="measured", replayed=False)
    doc.update(replayed=False, source="live")
    entry["speedup_vs_fp32"] = {"bf16": speed}
    for p in ("fp32", "bf16"):
        entry["precisions"][p].update(supported=True, measured_gflops=100.0, failure_reason=None)
        entry["precisions"][p]["details"] = {"reliable": True}
    entry["precisions"]["bf16"]["details"].update(bf16_details, speedup_range=[speed * 0.95, speed * 1.05])
    entry["precisions"]["bf16"]["speedup_vs_fp32"] = speed
    assert problems("bench", doc) == []
    append_run(machine, doc)


@pytest.fixture
def here(no_vendor_libs, native_bf16_cpu):
    """The CPU with native bf16 (conftest.native_bf16_cpu), whose AMP rule reads a measured speed."""
    machine = discover(include_torch=True)
    device = next(d for d in machine.devices if d.vendor == "cpu")
    return machine, device


def _dtype(machine, device) -> tuple[str, str]:
    facts = add_remembered(machine_facts(machine, device), machine)
    choice = decisions.amp_dtype(facts)
    return choice.dtype, choice.reason


def test_a_contended_figure_is_never_remembered_and_the_one_before_stands(here):
    machine, device = here
    _keep(machine, device, 2.0, "2026-11-20T00:00:00+0000")
    _keep(machine, device, 0.48, "2026-11-28T00:00:00+0000", reliable=False, unreliable_reason="contended: x")
    matrix = remembered_speedups(machine, device)
    assert matrix.speedup_vs_fp32["bf16"] == 2.0
    assert any("0.48x" in line and "contended" in line for line in matrix.results["bf16"].details["passed_over"])
    dtype, reason = _dtype(machine, device)
    assert dtype == "bfloat16" and "2.0x fp32" in reason


def test_an_implausible_figure_is_never_remembered(here):
    machine, device = here
    bound = plausibility.ratio_bound(device, "bf16")
    assert bound is not None
    _keep(machine, device, bound[0] * 2, "2026-11-28T00:00:00+0000")  # recorded as reliable, but impossible
    matrix = remembered_speedups(machine, device)
    assert matrix is not None and "bf16" not in matrix.speedup_vs_fp32
    dtype, reason = _dtype(machine, device)
    assert dtype == "float32" and "no reliable measurement" in reason and "implausible" in reason


def test_a_run_kept_before_reliability_was_recorded_is_judged_by_its_load(here):
    """The issue's run: fp32's best case measured while other processes took 86 % of the CPU, bf16 at 0.48x."""
    machine, device = here
    doc = bench_json(machine, {device.key: replayed_report(device, ["fp32", "bf16"], "quick", None)}, "quick")
    entry = doc["devices"][0]
    entry["measured_at"] = "2026-11-27T00:00:00+0000"
    entry.update(provenance="measured", replayed=False)
    doc.update(replayed=False, source="live")
    entry["speedup_vs_fp32"] = {"bf16": 0.48}
    for p in ("fp32", "bf16"):
        entry["precisions"][p].update(supported=True, measured_gflops=100.0, failure_reason=None)
        assert "reliable" not in (entry["precisions"][p].get("details") or {})
    entry["results"] = [
        {
            "precision": "fp32",
            "op": "matmul",
            "shape": [256, 256, 256],
            "gflops": 171.4,
            "median_s": 0.0002,
            "mean_s": 0.0002,
            "spread": {"p10_s": 0.0002, "p90_s": 0.0002, "min_s": 0.0002},
            "reps": 10,
            "efficiency": None,
            "budget_cut": False,
            "other_load": 0.86,
        }
    ]
    assert problems("bench", doc) == []
    append_run(machine, doc)
    matrix = remembered_speedups(machine, device)
    assert matrix is not None and "bf16" not in matrix.speedup_vs_fp32
    assert "86%" in matrix.results["bf16"].details["passed_over"][0]
    keep_run(machine, device, {"bf16": 0.48}, when="2026-11-26T00:00:00+0000")  # a quiet old run is still used
    assert _dtype(machine, device)[0] == "float32"


def test_serve_publishes_the_reliable_figure_and_says_the_newest_was_not(here):
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from gpudash.config import defaults
    from gpudash.exporter import registry_for

    machine, device = here
    _keep(machine, device, 2.0, "2026-11-20T00:00:00+0000")
    _keep(machine, device, 0.48, "2026-11-28T00:00:00+0000", reliable=False, unreliable_reason="contended: x")
    registry, _ = registry_for(machine, defaults(), telemetry=False)
    samples = [s for f in text_string_to_metric_families(generate_latest(registry).decode()) for s in f.samples]

    def value(name, precision):
        return next(s.value for s in samples if s.name == name and s.labels.get("precision") == precision)

    assert value("gpudash_bench_speedup_vs_fp32", "bf16") == 2.0  # the contended 0.48x is not the device's figure
    assert value("gpudash_bench_newest_reliable", "bf16") == 0.0
    assert value("gpudash_bench_newest_reliable", "fp32") == 1.0


def test_the_export_reason_says_which_newer_measurement_was_left_out(here):
    machine, device = here
    _keep(machine, device, 2.0, "2026-11-20T00:00:00+0000")
    _keep(machine, device, 13.2 if "amx_bf16" not in device.cpu_features else 60.0, "2026-11-28T00:00:00+0000")
    dtype, reason = _dtype(machine, device)
    assert dtype == "bfloat16" and "2.0x fp32" in reason
    assert "left out as unreliable: 2026-11-28T00:00:00+0000" in reason and "implausible" in reason


class FakeNvml:
    """What GpuWatch reads: the device's compute processes and its clock-event reasons."""

    def __init__(self, pids=(1,), reasons=0) -> None:
        self.pids, self.reasons = list(pids), reasons

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        return [type("P", (), {"pid": pid, "usedGpuMemory": 1 << 30})() for pid in self.pids]

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self.reasons


def test_gpu_rounds_with_another_process_or_a_slowdown_are_contended_the_power_cap_is_not():
    from gpudash.measure.bench.tasks.contention import GpuWatch

    def seen(nvml):
        watch = GpuWatch(nvml, handle=object())
        watch.restart()
        return watch.seen().reason

    assert seen(FakeNvml(pids=[4242])) is None  # ours alone (in a container NVML shows a host PID)
    assert seen(FakeNvml(pids=[4242, 7])) == "1 other process ran on the GPU"
    assert seen(FakeNvml(reasons=0x4)) is None  # the software power cap a full matmul reaches
    assert seen(FakeNvml(reasons=0x1 | 0x40)) == "the GPU's clocks were pulled down (hardware thermal slowdown)"
    assert "hardware power brake" in seen(FakeNvml(reasons=0x80))


def test_a_round_is_contended_only_beyond_what_whole_clock_ticks_can_add(monkeypatch):
    """/proc/stat and os.times() count whole ticks: over 50 ms on 2 CPUs one tick is a 10 % share by itself."""
    from gpudash.measure.bench.tasks import contention

    clock = {"now": 100.0, "busy": 50.0, "own": 10.0}
    monkeypatch.setattr(contention.host_counters, "logical_cpus", lambda: 2)
    monkeypatch.setattr(contention.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(contention, "_cpu_seconds", lambda: (clock["busy"], 0.0))
    monkeypatch.setattr(contention, "_own_seconds", lambda: clock["own"])
    monkeypatch.setattr(contention, "TICK_S", 0.01)

    def round_with(others_s: float, wall_s: float = 0.05):
        watch = contention.OtherLoad()
        clock["now"] += wall_s
        clock["own"] += 0.05
        clock["busy"] += 0.05 + others_s
        return watch.seen()

    one_tick = round_with(0.01)
    assert one_tick.others == pytest.approx(0.1) and one_tick.reason is None
    half = round_with(0.05)
    assert half.reason == "other processes took 50% of the CPU"
    assert round_with(0.06, wall_s=0.5).reason is None  # 6 % over 0.5 s: below the 10 % limit
    assert round_with(0.3, wall_s=0.5).reason == "other processes took 30% of the CPU"


def test_rounds_that_each_pass_but_together_show_a_neighbour_are_not_quiet():
    """A neighbour taking a third of 2 CPUs hides in one short round's clock ticks, not in their mean."""

    class EachPasses(Watch):
        def seen(self) -> Seen:
            return Seen(0.33, 0.0, None, span_s=0.5)

    log: list[str] = []
    calls = {"fp32": (_call(log, "fp32"), _warm()), "bf16": (_call(log, "bf16"), _warm())}
    got = measure_rounds(calls, CpuClock(), measure_s=0.02, case_budget_s=5.0, watch=EachPasses(busy=()))
    for t in got.values():
        assert t.contended and t.contention == "other processes took 33% of the CPU"
        assert t.other_load == pytest.approx(0.33)
