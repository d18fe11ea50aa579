"""Allocated but idle (gpudash.allocation.idle): the rule over readings; `gpudash serve`'s gauges over several
scrapes of the fake NVML with a stepped clock (a GPU always held at 0%, one held but busy every third reading,
one with no process, one held only by a graphics process); the dashboard's note and marker over real readings
of the fake NVML; `gpudash info --watch` over its rounds (one `info` reading judges nothing: null); the config
keys checked in one line."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
from conftest import H100
from fakes import make_fake_pynvml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.allocation.idle import IdleRule, IdleWatch
from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for
from gpudash.models import JobAttribution, ProcessUsage, Sample
from gpudash.render.idle import IDLE_MARK, idle_note

GIB = 2**30
IDLE_FAMILIES = {"gpudash_device_allocated_idle", "gpudash_device_allocated_idle_seconds"}


def reading(util: float | None, *pids: int, kind: str = "C") -> Sample:
    procs = [ProcessUsage(pid=p, type=kind, memory_used_bytes=GIB) for p in pids]
    return Sample(utilization_pct=util, processes=procs)


def test_a_held_gpu_at_zero_is_flagged_after_the_configured_time_and_not_before():
    watch = IdleWatch(IdleRule(after_s=300, utilization_pct=1))
    for t in (0, 100, 200):
        watch.record({"nvidia:0": reading(0, 7)}, now=t)
    assert watch.stretch("nvidia:0").seconds == 200 and not watch.flagged()
    watch.record({"nvidia:0": reading(1, 7)}, now=300)  # at the threshold still counts as idle
    (flag,) = watch.flagged()
    assert (flag.key, flag.since, flag.seconds, flag.pids) == ("nvidia:0", 0, 300, (7,))
    watch.record({"nvidia:0": reading(2, 7)}, now=400)  # busy: the stretch ends
    assert watch.stretch("nvidia:0") is None and not watch.flagged() and watch.judged("nvidia:0")


@pytest.mark.parametrize(
    "sample, judged",
    [
        (reading(0), True),  # nobody holds it: idle, not allocated
        (reading(0, 7, kind="G"), True),  # a display server only
        (reading(None, 7), False),  # utilization n/a (MIG): cannot say
        (Sample(utilization_pct=0, processes=None), False),  # process list n/a
    ],
)
def test_what_is_not_allocated_and_idle(sample, judged):
    watch = IdleWatch(IdleRule(after_s=10))
    for t in (0, 20, 40):
        watch.record({"nvidia:0": sample}, now=t)
    assert watch.stretch("nvidia:0") is None and watch.judged("nvidia:0") is judged


def test_a_gap_longer_than_the_window_starts_the_stretch_again():
    watch = IdleWatch(IdleRule(after_s=300))
    watch.record({"nvidia:0": reading(0, 7)}, now=0)
    watch.record({"nvidia:0": reading(0, 7)}, now=1000)  # nobody looked for 1000 s: it may have been busy
    assert watch.stretch("nvidia:0").seconds == 0
    watch.record({"nvidia:0": reading(0, 7)}, now=1300)
    assert watch.stretch("nvidia:0").flagged


def test_the_note_names_the_gpu_its_job_and_the_rule():
    watch = IdleWatch(IdleRule(after_s=600, utilization_pct=1))
    sample = reading(0, 4242, 4243)
    sample.processes[0].job = JobAttribution("slurm", job_id="31337", step="0")
    for t in (0, 300, 600, 725):
        watch.record({"nvidia:3": sample, "nvidia:5": reading(0, 77)}, now=t)
    note = idle_note(watch.flagged(), {"nvidia:3": "3", "nvidia:5": "5"}, watch.rule)
    assert note == "! allocated but idle (≤1% busy for 10:00+): GPU 3 12:05 (slurm 31337.0); GPU 5 12:05 (pid 77)"


def _gpu(index: int, samples: list[dict]) -> dict:
    device = copy.deepcopy(H100)
    device.update(index=index, uuid=f"GPU-5d2f0c1e-aaaa-bbbb-cccc-00000000000{index}",
                  pci_bus_id=f"00000000:{17 + index}:00.0", samples=samples)  # fmt: skip
    return device


def _sample(util: int, *procs: dict) -> dict:
    return dict(H100["samples"][0], utilization_pct=util, processes=list(procs))


HELD = {"pid": 4242, "memory_used_bytes": GIB}
FOUR_GPUS = [
    _gpu(0, [_sample(0, HELD)]),  # held at 0% in every reading
    _gpu(1, [_sample(0, HELD), _sample(0, HELD), _sample(60, HELD)]),  # busy every third reading
    _gpu(2, [_sample(0)]),  # no process
    _gpu(3, [_sample(0, {"pid": 900, "memory_used_bytes": GIB, "type": "G"})]),  # a display server only
]


@pytest.fixture
def fake_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(FOUR_GPUS))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    machine = discover(include_torch=False)
    yield machine
    machine.close()


def _scrape(registry) -> dict[str, dict[str, float]]:
    """One scrape (one reading of each device): metric name -> {gpu: value}."""
    found: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            if "gpu" in s.labels:
                found.setdefault(s.name, {})[s.labels["gpu"]] = s.value
    return found


def test_serve_flags_the_gpu_held_at_zero_over_several_scrapes(fake_nvml):
    config = defaults()
    config["idle"] = {"after_s": 300.0, "utilization_pct": 1.0}
    registry, collector = registry_for(fake_nvml, config, hostname="node-a")
    now = [1_000_000.0]
    collector.clock = lambda: now[0]
    flags, seconds = [], []
    for _ in range(6):  # one reading per scrape, 120 s apart
        scrape = _scrape(registry)
        seconds.append(scrape["gpudash_device_allocated_idle_seconds"])
        flags.append(scrape["gpudash_device_allocated_idle"])
        now[0] += 120
    assert [s["0"] for s in seconds] == [0, 120, 240, 360, 480, 600]
    assert [f["0"] for f in flags] == [0, 0, 0, 1, 1, 1]  # 360 s held at 0% >= after_s 300
    assert {f["1"] for f in flags} == {0} and set(s["1"] for s in seconds) == {0, 120}  # busy every third reading
    assert all(f["2"] == 0 and f["3"] == 0 for f in flags)  # nobody holds 2; only Xorg-like graphics holds 3
    assert all(s["2"] == 0 and s["3"] == 0 for s in seconds)


def test_serve_without_telemetry_reads_no_device_for_it(fake_nvml):
    registry, collector = registry_for(fake_nvml, defaults(), telemetry=False)
    assert not IDLE_FAMILIES & set(_scrape(registry)) and not IDLE_FAMILIES & {m.name for m in collector.describe()}
    registry, collector = registry_for(fake_nvml, defaults(), telemetry=False, job_labels=True)
    assert {m.name for m in collector.describe()} >= IDLE_FAMILIES  # --job-labels reads the devices anyway
    assert set(_scrape(registry)["gpudash_device_allocated_idle"]) == {"0", "1", "2", "3"}


async def test_the_dashboard_marks_the_idle_gpu_and_says_why(fake_nvml):
    from gpudash.tui.app import create_app
    from gpudash.tui.widgets.process_table import ProcessPanel, ProcessTable

    config = defaults()
    config["ui"]["refresh_interval"] = 0.2
    config["idle"] = {"after_s": 1.0, "utilization_pct": 1.0}
    app = create_app(fake_nvml, config, add_torch_view=no_torch)
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(ProcessTable)
        await wait_until(pilot, lambda: "allocated but idle" in screen_text(app), timeout=30)
        note = str(app.query_one(ProcessPanel).query_one("#proc-note").render())
        assert "GPU 0 " in note and "(pid 4242)" in note and "GPU 1 " not in note
        gpus = {r.device_key: table.cells_of(r.key)[2].plain.strip() for r in table.shown_rows}
        assert gpus["nvidia:0"] == "0" + IDLE_MARK and gpus["nvidia:1"] == "1"
        assert table.idle_keys == {"nvidia:0"}


def test_one_info_reading_judges_nothing(fake_nvml, capsys):
    import jsonschema

    from gpudash.cli import main
    from gpudash.contracts import schema

    assert main(["info", "--no-torch", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    jsonschema.validate(data, schema("info"))
    assert data["allocated_idle"] is None
    assert main(["info", "--no-torch"]) == 0
    assert "allocated but idle" not in capsys.readouterr().out


def test_info_watch_judges_its_rounds(fake_nvml, capsys, tmp_path):
    import jsonschema

    from gpudash.cli import main
    from gpudash.contracts import schema

    config = tmp_path / "config.toml"
    config.write_text("[idle]\nafter_s = 1.0\n")
    assert main(["--config", str(config), "info", "--no-torch", "--json", "--watch", "0.4", "--count", "4"]) == 0
    rounds = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rounds) == 4
    for document in rounds:
        jsonschema.validate(document, schema("info"))
    first, last = ({d["key"]: d for d in r["allocated_idle"]["devices"]} for r in (rounds[0], rounds[-1]))
    assert first["nvidia:0"] == {"key": "nvidia:0", "seconds": 0, "flagged": False}
    assert last["nvidia:0"]["flagged"] and last["nvidia:0"]["seconds"] >= 1.0  # 3 rounds of >= 0.4 s
    assert not {"nvidia:2", "nvidia:3"} & (set(first) | set(last))  # no process; a display server only
    assert rounds[-1]["allocated_idle"]["after_s"] == 1.0
    assert main(["--config", str(config), "info", "--no-torch", "--watch", "0.4", "--count", "4"]) == 0
    text = capsys.readouterr().out
    assert "idle: nvidia:0 allocated but idle" in text and "≤1% busy for 0:01+" in text


@pytest.mark.parametrize(
    "line, problem",
    [("after_s = 0", "expected a value from 1 to 604800, got 0"), ("utilization_pct = -1", "from 0 to 50")],
)
def test_a_bad_idle_key_is_one_line_naming_it(tmp_path, line, problem):
    config = tmp_path / "config.toml"
    config.write_text(f"[idle]\n{line}\n")
    done = subprocess.run(
        [sys.executable, "-m", "gpudash", "--config", str(config), "info", "--no-torch"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert f"idle.{line.split()[0]}" in done.stderr and problem in done.stderr and "(line 2)" in done.stderr
