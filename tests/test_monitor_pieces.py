"""The monitor's headless pieces: compact figures, the process table's rows, sort and filter, identical-device
groups, round chart ticks, the host's load, and signalling a process (a real child; a real permission
error from a process that dropped root)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from gpudash.actions.host import HostMonitor
from gpudash.actions.processes import identify, refusal, signal_process
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import Machine, discover
from gpudash.devices.host_load import CPU_FIRST_READING, HostLoadReader
from gpudash.models import DeviceInfo, Host, MigInstance, ProcessUsage, Runtime, Sample
from gpudash.render import axes, monitor
from gpudash.render import processes as proc_text
from gpudash.render.groups import frozen, group_devices

GIB = 1024**3
DGX = os.path.join(os.path.dirname(__file__), "..", "examples", "snapshots", "dgx-h100-8gpu.json")


def test_compact_figures():
    assert monitor.size(None) == "n/a" and monitor.size(512 * 1024) == "512K" and monitor.size(37 * 1024**2) == "37M"
    assert monitor.size(int(60.8 * GIB)) == "60.8G" and monitor.size(123 * GIB) == "123G"
    assert monitor.used_of(int(61.2 * GIB), 80 * GIB) == "61/80G"
    assert monitor.used_of(GIB // 2, 80 * GIB) == "0.5/80G"
    assert monitor.used_of(int(61.2 * GIB), int(79.6 * GIB), wide=True) == "61.2/79.6 GiB"
    assert monitor.used_of(None, None) == "n/a"
    assert (
        monitor.power(312.4, 700) == "312/700W"
        and monitor.power(90, None) == "90W"
        and monitor.power(None, 700) == "n/a"
    )
    assert [monitor.elapsed(s) for s in (52, 3600 * 3 + 25 * 60 + 7, 4 * 86400 + 3600, None)] == [
        "0:52",
        "3:25:07",
        "4d 01h",
        "n/a",
    ]
    assert monitor.short_name("NVIDIA H100 80GB HBM3") == "H100 80GB HBM3"
    assert monitor.short_name("Tesla V100-SXM3-32GB") == "V100-SXM3-32GB"
    assert monitor.clip("abcdef", 4) == "abc…" and monitor.clip("abc", 4) == "abc"
    assert monitor.ranges([0, 1, 2, 3, 5, 7, 8]) == "0-3,5,7-8"
    assert monitor.precision_mark({"fp8": "native", "bf16": "native"}) == "fp8"
    assert monitor.precision_mark({"fp8": "emulated", "bf16": "absent", "fp16": "native"}) == "fp16"
    assert monitor.precision_mark({}) == "n/a"


def test_device_labels_follow_nvidia_smi_and_name_two_vendors_apart():
    nv = [DeviceInfo(vendor="nvidia", index=i, name="g") for i in range(2)]
    cpu = DeviceInfo(vendor="cpu", index=0, name="c")
    assert monitor.device_labels([*nv, cpu]) == {"nvidia:0": "0", "nvidia:1": "1", "cpu:0": "cpu"}
    amd = DeviceInfo(vendor="amd", index=0, name="a")
    assert monitor.device_labels([nv[0], amd]) == {"nvidia:0": "nv0", "amd:0": "amd0"}


def _rows():
    gpus = [DeviceInfo(vendor="nvidia", index=i, name="g") for i in range(3)]
    mig = [MigInstance(index=0, gpu_instance_id=2, compute_instance_id=0), MigInstance(index=1, gpu_instance_id=9)]
    samples = {
        "nvidia:0": Sample(
            processes=[
                ProcessUsage(pid=30, user="bob", memory_used_bytes=4 * GIB, utilization_pct=80, command="python b.py"),
                ProcessUsage(pid=10, user="alice", memory_used_bytes=8 * GIB, utilization_pct=None, type="G"),
            ]
        ),
        "nvidia:1": Sample(
            processes=[ProcessUsage(pid=20, user="carol", memory_used_bytes=GIB, gpu_instance_id=9, cpu_pct=12.5)],
            mig_instances=mig,
        ),
        "nvidia:2": Sample(unavailable={"processes": "NotSupported"}),
    }
    return gpus, samples, proc_text.process_rows(gpus, samples, monitor.device_labels(gpus))


def test_process_rows_label_mig_devices_and_say_which_gpus_are_na():
    _, _, (rows, missing) = _rows()
    assert [(r.proc.pid, r.gpu) for r in rows] == [(30, "0"), (10, "0"), (20, "1:1")]
    assert missing == {"2": "NotSupported"}
    carol = rows[2]
    assert proc_text.cells(carol) == ["20", "carol", "1:1", "n/a", "1.0G", "n/a", "12.5", "n/a", "n/a", "n/a"]


def test_sort_keys_keep_na_last_and_ties_stable():
    _, _, (rows, _) = _rows()
    by = lambda key, reverse=False: [r.proc.pid for r in proc_text.sort_rows(rows, key, reverse)]  # noqa: E731
    assert by("gpu_mem") == [10, 30, 20]
    assert by("gpu_mem", reverse=True) == [20, 30, 10]
    assert by("sm") == [30, 10, 20]  # n/a last, in GPU order
    assert by("sm", reverse=True) == [30, 10, 20]  # ...whichever the direction
    assert by("pid") == [10, 20, 30] and by("user") == [10, 30, 20] and by("gpu") == [10, 30, 20]


def test_filter_matches_every_word_anywhere():
    _, _, (rows, _) = _rows()
    assert [r.proc.pid for r in proc_text.filter_rows(rows, "python")] == [30]
    assert [r.proc.pid for r in proc_text.filter_rows(rows, "BOB b.py")] == [30]
    assert [r.proc.pid for r in proc_text.filter_rows(rows, "gpu1:1")] == [20]
    assert proc_text.filter_rows(rows, "bob carol") == []
    assert len(proc_text.filter_rows(rows, "  ")) == 3


def test_identical_devices_group_and_different_ones_do_not():
    docs = [{"key": f"nvidia:{i}", "vendor": "nvidia", "index": i, "name": "NVIDIA H100 80GB HBM3"} for i in range(8)]
    for d in docs:
        d["precisions"] = {"bf16": {"verdict": "verified"}}
    docs[5]["precisions"] = {"bf16": {"verdict": "failed"}}
    groups = group_devices(docs, lambda d: frozen(d["precisions"]))
    assert [g.label for g in groups] == ["nvidia:0-4,6-7 (7x H100 80GB HBM3)", "nvidia:5"]
    assert groups[0].keys[:2] == ["nvidia:0", "nvidia:1"]


def test_round_ticks_and_labels():
    assert axes.nice_ticks(778.1) == [0, 200, 400, 600, 800]
    assert axes.nice_ticks(1978900) == [0, 500000, 1000000, 1500000, 2000000]
    assert [axes.short_number(v) for v in (0, 250, 1500, 2_000_000)] == ["0", "250", "1.5k", "2M"]
    assert axes.power_of_two_ticks(300, 2500) == [256, 512, 1024, 2048, 4096]
    assert [axes.size_label(v) for v in (512, 4096, 16384)] == ["512", "4k", "16k"]


def test_host_load_has_no_cpu_share_until_its_second_reading():
    reader = HostLoadReader()
    first = reader.read()
    assert first.cpu_pct is None and first.unavailable["cpu_pct"] == CPU_FIRST_READING
    assert first.memory_total_bytes and 0 < first.memory_used_bytes <= first.memory_total_bytes
    time.sleep(0.2)
    second = reader.read()
    assert second.cpu_pct is not None and 0 <= second.cpu_pct <= 100 and "cpu_pct" not in second.unavailable
    assert second.load_average is not None and len(second.load_average) == 3


def test_a_replayed_machine_has_no_host_load():
    assert HostMonitor(Session(defaults(), replay=DGX)).read() is None


# Signals -----------------------------------------------------------------------------------------


def _live_session(**kw) -> Session:
    machine = Machine(host=Host(hostname="here"), runtime=Runtime(), devices=[])
    return Session(defaults(), machine=machine, **kw)


@pytest.fixture
def sleeper():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_signal_reaches_the_process_identified(sleeper):
    session = _live_session()
    target = identify(session, sleeper.pid)
    assert target.allowed and target.name == "sleep" and target.command == "sleep 60"
    assert target.create_time == psutil.Process(sleeper.pid).create_time()
    outcome = signal_process(session, sleeper.pid, signal.SIGTERM, create_time=target.create_time)
    assert outcome.sent and outcome.message == f"SIGTERM sent to pid {sleeper.pid}"
    assert sleeper.wait(timeout=10) == -signal.SIGTERM
    gone = signal_process(session, sleeper.pid, signal.SIGKILL, create_time=target.create_time)
    assert not gone.sent and "has already exited" in gone.message
    assert identify(session, sleeper.pid).why_not == f"pid {sleeper.pid} has exited"


def test_a_reused_pid_gets_nothing(sleeper):
    session = _live_session()
    started = psutil.Process(sleeper.pid).create_time()
    outcome = signal_process(session, sleeper.pid, signal.SIGKILL, create_time=started - 30)  # another process's
    assert not outcome.sent and "now belongs to another process" in outcome.message
    assert sleeper.poll() is None


def test_replayed_and_readonly_sessions_never_signal(sleeper):
    replayed = Session(defaults(), machine=discover(replay=DGX, include_torch=False))
    assert refusal(replayed).startswith("replayed: these pids belong to dgx-h100-example")
    started = psutil.Process(sleeper.pid).create_time()
    for session in (replayed, _live_session(readonly=True)):
        assert not identify(session, sleeper.pid).allowed
        outcome = signal_process(session, sleeper.pid, signal.SIGKILL, create_time=started)
        assert not outcome.sent and "not sent" in outcome.message
    assert sleeper.poll() is None
    assert "read-only" in refusal(_live_session(readonly=True))


CHILD = """
import json, os, signal, sys
from gpudash.actions.processes import identify, signal_process
from gpudash.actions.session import Session
from gpudash.config import defaults
from gpudash.devices import Machine
from gpudash.models import Host, Runtime
pid, started = int(sys.argv[1]), float(sys.argv[2])
session = Session(defaults(), machine=Machine(host=Host(), runtime=Runtime(), devices=[]))
os.setgid(65534); os.setuid(65534)  # nobody: root's process is no longer ours
print(json.dumps([identify(session, pid).why_not, signal_process(session, pid, signal.SIGTERM, create_time=started).message]))
"""


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root to drop to another user")
def test_permission_errors_are_one_line(sleeper):
    import json

    started = psutil.Process(sleeper.pid).create_time()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(sleeper.pid), repr(started)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    why_not, message = json.loads(out.stdout)
    assert why_not == f"pid {sleeper.pid} belongs to root: only its owner or root may signal it"
    assert message == f"SIGTERM not sent to pid {sleeper.pid}: not permitted (Operation not permitted)"
    assert sleeper.poll() is None
