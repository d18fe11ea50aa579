"""Job attribution: Slurm jobs and Kubernetes pods from real /proc/PID/cgroup line formats (cgroup v1 and
v2, the kubelet's cgroupfs and systemd drivers, three container runtimes), then the environment; a fake
/proc root; a real child of this test with Slurm's variables seen through the fake NVML in `info --json`
(schema-checked) and its text; the JOB column of the process panel."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import H100
from fakes import make_fake_pynvml
from test_process_list_work import gpu_machine
from tui_helpers import no_torch, screen_text, wait_until

from gpudash.cli import main
from gpudash.config import defaults
from gpudash.contracts import schema
from gpudash.devices import job_attribution as ja
from gpudash.devices.host_processes import HostProcesses
from gpudash.models import JobAttribution, ProcessUsage
from gpudash.render.processes import job_text
from gpudash.tui.app import create_app
from gpudash.tui.widgets.process_table import ProcessTable

POD = "3f5a7c6e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
CID = "8e2b1f6d0c3a4b5e9f7d6c5b4a3e2d1c0b9a8f7e6d5c4b3a2e1f0d9c8b7a6e5f"

SLURM_V1 = """12:memory:/slurm/uid_0/job_4242/step_0/task_1
11:devices:/slurm/uid_0/job_4242/step_0
10:freezer:/slurm/uid_0/job_4242/step_0
1:name=systemd:/system.slice/slurmd.service
"""
SLURM_V1_NODE = "5:cpuset:/slurm_node017/uid_0/job_99/step_batch/task_0\n"
SLURM_V2 = "0::/system.slice/slurmstepd.scope/job_1234567/step_0/user/task_0\n"
SLURM_V2_NODE = "0::/system.slice/node017_slurmstepd.scope/job_12/step_extern/user/task_special\n"
K8S_CGROUPFS_V1 = f"""11:memory:/kubepods/burstable/pod{POD}/{CID}
4:devices:/kubepods/burstable/pod{POD}/{CID}
"""
K8S_GUARANTEED = f"9:cpu,cpuacct:/kubepods/pod{POD}/{CID}\n"
POD_SYSTEMD = POD.replace("-", "_")
K8S_SYSTEMD_CONTAINERD = f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_SYSTEMD}.slice/cri-containerd-{CID}.scope\n"
K8S_SYSTEMD_CRIO = (
    f"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{POD_SYSTEMD}.slice/crio-{CID}.scope\n"
)
K8S_SYSTEMD_GUARANTEED_DOCKER = f"0::/kubepods.slice/kubepods-pod{POD_SYSTEMD}.slice/docker-{CID}.scope\n"


@pytest.mark.parametrize(
    "text, job_id, step",
    [
        (SLURM_V1, "4242", "0"),
        (SLURM_V1_NODE, "99", "batch"),
        (SLURM_V2, "1234567", "0"),
        (SLURM_V2_NODE, "12", "extern"),
    ],
)
def test_slurm_cgroup_layouts(text, job_id, step):
    job = ja.from_cgroup(text)
    assert (job.scheduler, job.job_id, job.step, job.sources) == ("slurm", job_id, step, ["cgroup"])
    assert job.partition is None  # never in the cgroup path
    if "uid_0" in text:
        assert job.user == "root"  # uid 0, named through the password database
    else:
        assert job.user is None  # v2's path has no uid


@pytest.mark.parametrize(
    "text",
    [K8S_CGROUPFS_V1, K8S_GUARANTEED, K8S_SYSTEMD_CONTAINERD, K8S_SYSTEMD_CRIO, K8S_SYSTEMD_GUARANTEED_DOCKER],
)
def test_kubelet_cgroup_layouts_in_both_drivers_spellings(text):
    job = ja.from_cgroup(text)
    assert (job.scheduler, job.pod_uid, job.container_id) == ("kubernetes", POD, CID)
    assert job.pod is None and job.namespace is None  # not in the cgroup: never guessed


@pytest.mark.parametrize(
    "text",
    [
        "0::/\n",  # its own cgroup namespace
        "0::/user.slice/user-1000.slice/session-3.scope\n",
        "0::/system.slice/docker-abc.scope\n",  # a container, but no pod
        "12:memory:/slurm/uid_1000\n",  # slurmd's own cgroup, no job
        "",
    ],
)
def test_other_cgroups_say_nothing(text):
    assert ja.from_cgroup(text) is None


def test_an_unknown_uid_stays_a_uid():
    job = ja.from_cgroup("4:devices:/slurm/uid_4000000123/job_7/step_0\n")
    assert job.user == "uid 4000000123"


def test_environment_completes_the_cgroup_and_stands_alone():
    job = ja.with_environment(
        ja.from_cgroup(SLURM_V2),
        {"SLURM_JOB_ID": "999", "SLURM_JOB_USER": "alice", "SLURM_JOB_PARTITION": "gpu-h100"},
    )
    assert (job.job_id, job.user, job.partition) == ("1234567", "alice", "gpu-h100")  # the cgroup's ID wins
    assert job.sources == ["cgroup", "environment"]
    alone = ja.with_environment(None, {"SLURM_JOBID": "55", "SLURM_STEP_ID": "3"})
    assert (alone.scheduler, alone.job_id, alone.step, alone.sources) == ("slurm", "55", "3", ["environment"])
    pod = ja.with_environment(
        ja.from_cgroup(K8S_SYSTEMD_CONTAINERD), {"POD_NAME": "trainer-0", "POD_NAMESPACE": "ml", "HOSTNAME": "x"}
    )
    assert (pod.pod, pod.namespace, pod.pod_uid) == ("trainer-0", "ml", POD)
    assert ja.with_environment(None, {"HOSTNAME": "trainer-0", "KUBERNETES_SERVICE_HOST": "10.0.0.1"}) is None
    assert ja.with_environment(None, {"PATH": "/bin"}) is None


def _fake_proc(root, pid: int, cgroup: str, environ: dict[str, str] | None) -> None:
    folder = root / str(pid)
    folder.mkdir(parents=True)
    (folder / "cgroup").write_text(cgroup)
    if environ is None:
        (folder / "environ").mkdir()  # unreadable as a file: the reason is said, the cgroup still counts
    else:
        (folder / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in environ.items()) + b"\0")


def test_read_from_a_fake_proc_root(tmp_path):
    _fake_proc(tmp_path, 10, SLURM_V1, {"SLURM_JOB_PARTITION": "debug"})
    _fake_proc(tmp_path, 11, K8S_CGROUPFS_V1, None)
    job, why = ja.read(10, tmp_path)
    assert (job.job_id, job.partition, why) == ("4242", "debug", None)
    job, why = ja.read(11, tmp_path)
    assert job.pod_uid == POD and why.startswith("environment: ")
    assert ja.read(12, tmp_path) == (None, "environment: No such file or directory")


def test_host_processes_fill_the_job_of_a_real_pid_from_the_proc_root(tmp_path):
    child = subprocess.Popen(["sleep", "60"])
    try:
        _fake_proc(tmp_path, child.pid, SLURM_V2, {"SLURM_JOB_USER": "bob"})
        proc = ProcessUsage(pid=child.pid)
        HostProcesses(proc=tmp_path).fill(proc)
        assert (proc.job.job_id, proc.job.user, proc.command) == ("1234567", "bob", "sleep 60")
    finally:
        child.kill()
        child.wait()


def test_job_text_in_the_panel_never_invents_a_name():
    assert job_text(JobAttribution("slurm", job_id="12", step="0")) == "slurm 12.0"
    assert job_text(JobAttribution("kubernetes", pod="t-0", namespace="ml")) == "k8s ml/t-0"
    assert job_text(JobAttribution("kubernetes", pod_uid=POD)) == "pod 3f5a7c6e"
    assert job_text(None) == ""


def test_info_json_and_text_show_a_real_processes_slurm_job(monkeypatch, capsys):
    env = dict(os.environ, SLURM_JOB_ID="777001", SLURM_JOB_USER="alice", SLURM_JOB_PARTITION="gpu")
    child = subprocess.Popen(["sleep", "60"], env=env)
    try:
        dev = dict(H100, samples=[dict(H100["samples"][0], processes=[{"pid": child.pid, "memory_used_bytes": 2**30}])])
        monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([dev]))
        monkeypatch.setitem(sys.modules, "amdsmi", None)
        assert main(["info", "--no-torch", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        import jsonschema

        jsonschema.validate(data, schema("info"))
        (proc,) = next(d for d in data["devices"] if d["vendor"] == "nvidia")["sample"]["processes"]
        assert proc["job"]["job_id"] == "777001" and proc["job"]["partition"] == "gpu"
        assert proc["job"]["user"] == "alice" and "environment" in proc["job"]["sources"]
        assert main(["info", "--no-torch"]) == 0
        text = capsys.readouterr().out
        assert f"job: slurm job 777001 (user alice, partition gpu) on nvidia:0 · pid {child.pid}" in text
    finally:
        child.kill()
        child.wait()


async def test_the_panel_shows_a_job_column_only_when_a_process_has_a_job():
    machine = gpu_machine(4242)
    sampler = machine.samplers["nvidia:0"]

    def with_job():
        sample = sampler()
        sample.processes[0].job = JobAttribution("slurm", job_id="31337", step="0", sources=["cgroup"])
        return sample

    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 24)) as pilot:
        table = app.query_one(ProcessTable)
        await wait_until(pilot, lambda: table.shown_rows)
        assert "JOB" not in [c.key.upper() for c in table.columns]
    machine.samplers["nvidia:0"] = with_job
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 24)) as pilot:
        table = app.query_one(ProcessTable)
        await wait_until(pilot, lambda: "slurm 31337.0" in screen_text(app))
        assert [c.key for c in table.columns][-2:] == ["job", "command"]


def test_redaction_replaces_a_jobs_identifiers():
    from gpudash.redaction import redact

    proc = {"pid": 5, "user": "alice", "job": {"scheduler": "kubernetes", "pod_uid": POD, "pod": "trainer-0",
            "namespace": "ml-team", "container_id": CID, "sources": ["cgroup", "environment"]}}  # fmt: skip
    job = redact({"processes": [proc]})["processes"][0]["job"]
    assert job["scheduler"] == "kubernetes" and job["sources"] == ["cgroup", "environment"]
    assert all(job[k].endswith("-redacted-1") for k in ("pod_uid", "pod", "namespace", "container_id"))
    assert "trainer-0" not in json.dumps(job) and POD not in json.dumps(job)


def test_the_job_schema_mirrors_the_record():
    import dataclasses

    for name in ("info", "snapshot"):
        assert set(schema(name)["$defs"]["job"]["properties"]) == {f.name for f in dataclasses.fields(JobAttribution)}


async def test_host_pids_from_a_container_are_said_once_with_the_fix_and_memory_stays():
    from fakes import GONE_PID

    from gpudash.devices import Machine
    from gpudash.models import DeviceInfo, Host, Runtime, Sample
    from gpudash.render.processes import CONTAINER_HINT, CONTAINER_NOTE

    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA L4", compute_capability="8.9", sources=["nvml"])
    host = HostProcesses()

    def sample() -> Sample:  # NVML's host pids, which this PID namespace does not have
        procs = [ProcessUsage(pid=GONE_PID + i, type="C", memory_used_bytes=(i + 1) * 2**30) for i in range(2)]
        for proc in procs:
            host.fill(proc)
        return Sample(memory_used_bytes=3 * 2**30, memory_total_bytes=24 * 2**30, processes=procs)

    machine = Machine(host=Host(hostname="pod"), runtime=Runtime(), devices=[gpu], samplers={gpu.key: sample})
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 24)) as pilot:
        table = app.query_one(ProcessTable)
        await wait_until(pilot, lambda: table.foreign == {GONE_PID, GONE_PID + 1})  # the second reading
        await wait_until(pilot, lambda: CONTAINER_NOTE in screen_text(app))
        memory = sorted(table.cells_of(k)[4].plain.strip() for k in table.row_keys)
        assert memory == ["1.0G", "2.0G"]  # GPU memory per pid still shown
        await wait_until(pilot, lambda: len(app.history) >= 4)  # more readings: still said only once
        told = [n.message for n in app._notifications if n.message == CONTAINER_HINT]
        assert told == [CONTAINER_HINT] and "--pid=host" in CONTAINER_HINT and "hostPID: true" in CONTAINER_HINT


async def test_a_pid_unseen_in_one_reading_only_is_not_taken_for_a_container():
    from fakes import GONE_PID

    from gpudash.devices import Machine
    from gpudash.models import DeviceInfo, Host, Runtime, Sample

    gpu = DeviceInfo(vendor="nvidia", index=0, name="NVIDIA L4", compute_capability="8.9", sources=["nvml"])
    host, readings = HostProcesses(), []

    def sample() -> Sample:  # the first reading lists a pid that is gone (it exited in between); then none
        readings.append(1)
        procs = [ProcessUsage(pid=GONE_PID, type="C", memory_used_bytes=2**30)] if len(readings) == 1 else []
        for proc in procs:
            host.fill(proc)
        return Sample(memory_used_bytes=2**30, memory_total_bytes=24 * 2**30, processes=procs)

    machine = Machine(host=Host(hostname="box"), runtime=Runtime(), devices=[gpu], samplers={gpu.key: sample})
    app = create_app(machine, defaults(), add_torch_view=no_torch)
    async with app.run_test(size=(100, 24)) as pilot:
        table = app.query_one(ProcessTable)
        await wait_until(pilot, lambda: len(readings) >= 3 and len(app.history) >= 3)
        assert table.foreign == set() and "PID namespace" not in screen_text(app)
