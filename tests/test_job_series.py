"""`gpudash serve`'s opt-in job series: real child processes carrying Slurm's and the Downward API's variables,
listed by the fake NVML on two GPUs, read through the real job attribution (/proc/PID/environ) and published
with dcgm-exporter's `hpc_job`, `pod`, `namespace` (and AMD's `job_user`, `job_partition`); off unless asked;
the bound on series with the count of what it dropped; the flag and the config key end to end over HTTP on a
replayed snapshot whose processes carry jobs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest
from conftest import H100
from fakes import make_fake_pynvml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from servers import DGX, get, gpudash_serve

from gpudash.config import defaults
from gpudash.devices import discover
from gpudash.exporter import registry_for

pytestmark = pytest.mark.light
GIB = 2**30
JOB_FAMILIES = {"gpudash_job_gpu_processes", "gpudash_job_gpu_memory_bytes", "gpudash_job_series_dropped"}


def samples(text: str) -> list:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def scraped(machine, config=None, **options) -> list:
    registry, _ = registry_for(machine, config or defaults(), hostname="node-a", **options)
    return samples(generate_latest(registry).decode())


def named(found: list, name: str) -> list:
    return [s for s in found if s.name == name]


@pytest.fixture
def children():
    """Start `sleep` children with the given extra environment; killed at the end."""
    started: list[subprocess.Popen] = []

    def start(**env: str) -> int:
        child = subprocess.Popen(["sleep", "60"], env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env})
        started.append(child)
        return child.pid

    yield start
    for child in started:
        child.kill()
        child.wait()


def two_gpus(monkeypatch, processes: list[list[dict]]):
    devices = []
    for index, procs in enumerate(processes):
        device = copy.deepcopy(H100)
        device.update(index=index, uuid=f"GPU-5d2f0c1e-aaaa-bbbb-cccc-00000000000{index}",
                      pci_bus_id=f"00000000:{17 + index}:00.0")  # fmt: skip
        device["samples"] = [dict(H100["samples"][0], processes=procs)]
        devices.append(device)
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    monkeypatch.delenv("GPUDASH_REPLAY", raising=False)
    machine = discover(include_torch=False)
    return machine


def test_job_series_carry_dcgm_exporters_job_labels(monkeypatch, children):
    slurm = {"SLURM_JOB_ID": "777001", "SLURM_JOB_USER": "alice", "SLURM_JOB_PARTITION": "gpu-h100"}
    rank0, rank1 = children(**slurm), children(**slurm)
    pod = children(POD_NAME="trainer-0", POD_NAMESPACE="ml", KUBERNETES_SERVICE_HOST="10.0.0.1")
    loner = children()  # no job: counted by gpudash_device_processes only
    machine = two_gpus(
        monkeypatch,
        [
            [{"pid": rank0, "memory_used_bytes": 3 * GIB}, {"pid": rank1, "memory_used_bytes": 5 * GIB},
             {"pid": loner, "memory_used_bytes": GIB}],
            [{"pid": pod, "memory_used_bytes": 2 * GIB}],
        ],
    )  # fmt: skip
    try:
        found = scraped(machine, job_labels=True)
    finally:
        machine.close()
    procs = {s.labels["gpu"]: s for s in named(found, "gpudash_job_gpu_processes")}
    memory = {s.labels["gpu"]: s for s in named(found, "gpudash_job_gpu_memory_bytes")}
    assert set(procs) == {"0", "1"}
    slurm_series = procs["0"]
    assert slurm_series.value == 2 and memory["0"].value == 8 * GIB  # two ranks of one job, summed; loner left out
    assert {k: slurm_series.labels[k] for k in ("scheduler", "hpc_job", "job_user", "job_partition")} == {
        "scheduler": "slurm", "hpc_job": "777001", "job_user": "alice", "job_partition": "gpu-h100"}  # fmt: skip
    assert slurm_series.labels["UUID"].endswith("0000") and slurm_series.labels["modelName"] == H100["name"]
    k8s = procs["1"].labels
    assert (k8s["scheduler"], k8s["pod"], k8s["namespace"], procs["1"].value) == ("kubernetes", "trainer-0", "ml", 1)
    assert memory["1"].value == 2 * GIB
    every_label = {k for s in found for k in s.labels}
    assert "container" not in every_label  # the container's name is the kubelet's; gpudash never guesses it
    assert not every_label & {"pid", "instance", "job"}
    assert [s.value for s in named(found, "gpudash_job_series_dropped")] == [0]
    device_procs = {s.labels["gpu"]: s.value for s in named(found, "gpudash_device_processes")}
    assert device_procs == {"0": 3, "1": 1}


def test_job_series_are_off_unless_asked(monkeypatch, children):
    pid = children(SLURM_JOB_ID="5")
    machine = two_gpus(monkeypatch, [[{"pid": pid, "memory_used_bytes": GIB}]])
    try:
        assert defaults()["serve"]["job_labels"] is False
        found = scraped(machine)
        described = {m.name for m in registry_for(machine, defaults())[1].describe()}
        asked = {m.name for m in registry_for(machine, defaults(), job_labels=True)[1].describe()}
    finally:
        machine.close()
    assert not {s.name for s in found} & JOB_FAMILIES
    assert not described & JOB_FAMILIES and asked >= JOB_FAMILIES  # name[] filtering knows them when on
    assert named(found, "gpudash_device_processes")  # the rest of the telemetry is there


def test_the_bound_keeps_the_first_pairs_in_device_order_and_counts_the_rest(monkeypatch, children):
    pids = [children(SLURM_JOB_ID=str(100 + i)) for i in range(5)]
    # GPU 0: jobs 100, 101, 102; GPU 1: jobs 103 and 100 again (a job on two GPUs is two pairs)
    machine = two_gpus(
        monkeypatch,
        [[{"pid": p, "memory_used_bytes": GIB} for p in pids[:3]],
         [{"pid": pids[3], "memory_used_bytes": GIB}, {"pid": pids[0], "memory_used_bytes": GIB}]],
    )  # fmt: skip
    config = defaults()
    config["serve"]["max_job_series"] = 3
    try:
        found = scraped(machine, config, job_labels=True)
        config["serve"]["max_job_series"] = 100
        everything = scraped(machine, config, job_labels=True)
    finally:
        machine.close()
    kept = [(s.labels["gpu"], s.labels["hpc_job"]) for s in named(found, "gpudash_job_gpu_processes")]
    assert kept == [("0", "100"), ("0", "101"), ("0", "102")]
    assert len(named(found, "gpudash_job_gpu_memory_bytes")) == 3
    assert [s.value for s in named(found, "gpudash_job_series_dropped")] == [2]
    all_pairs = {(s.labels["gpu"], s.labels["hpc_job"]) for s in named(everything, "gpudash_job_gpu_processes")}
    assert all_pairs == {("0", "100"), ("0", "101"), ("0", "102"), ("1", "100"), ("1", "103")}
    assert [s.value for s in named(everything, "gpudash_job_series_dropped")] == [0]


def _snapshot_with_jobs(tmp_path) -> str:
    data = json.loads(DGX.read_text())
    for device in data["devices"][4:6]:  # GPUs 4 and 5 list one process in every recorded reading
        for sample in device["samples"]:
            for i, proc in enumerate(sample.get("processes") or []):
                proc["job"] = {"scheduler": "slurm", "job_id": f"90{device['index']}{i}", "user": "bob",
                               "sources": ["cgroup"]}  # fmt: skip
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_flag_and_the_config_key_turn_them_on_over_http(tmp_path):
    snapshot = _snapshot_with_jobs(tmp_path)
    with gpudash_serve("--replay", snapshot, "--job-labels") as (url, _):
        text = get(url)
    series = [s for s in samples(text) if s.name == "gpudash_job_gpu_processes"]
    assert {s.labels["gpu"] for s in series} == {"4", "5"} and len(series) == 2
    assert all(s.labels["hpc_job"].startswith("90") and s.labels["job_user"] == "bob" for s in series)
    config = tmp_path / "config.toml"
    config.write_text("[serve]\njob_labels = true\nmax_job_series = 1\n")
    with gpudash_serve("--replay", snapshot, "--config", str(config)) as (url, _):
        text = get(url)
    assert len([s for s in samples(text) if s.name == "gpudash_job_gpu_processes"]) == 1
    assert [s.value for s in samples(text) if s.name == "gpudash_job_series_dropped"] == [1]
    with gpudash_serve("--replay", snapshot, "--config", str(config), "--no-job-labels") as (url, _):
        text = get(url)
    assert not {s.name for s in samples(text)} & JOB_FAMILIES


def test_a_bad_bound_is_one_line_naming_the_key(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[serve]\nmax_job_series = 0\n")
    done = subprocess.run(
        [sys.executable, "-m", "gpudash", "--config", str(config), "serve", "--replay", str(DGX)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "serve.max_job_series" in done.stderr
    assert "expected a value from 1 to 100000" in done.stderr


def test_a_scrape_reads_each_device_once_however_many_families_use_it():
    """Telemetry, MIG instances, idle and job series share the scrape's reading (Scrape.sample)."""
    machine = discover(replay=str(DGX), include_torch=False)
    reads: list[str] = []
    for key, reader in list(machine.samplers.items()):
        machine.samplers[key] = lambda key=key, reader=reader: reads.append(key) or reader()
    registry, _ = registry_for(machine, defaults(), job_labels=True)
    generate_latest(registry)
    reads.clear()
    text = generate_latest(registry).decode()
    assert sorted(reads) == sorted(d.key for d in machine.devices)  # 8 GPUs, one reading each (was 16)
    assert "gpudash_mig_instance_info" in text and "gpudash_device_allocated_idle" in text
