"""Which Slurm job or Kubernetes pod a GPU process belongs to, from /proc/PID/cgroup, then its environment.

What is readable from where (nothing here is guessed):
- Slurm job ID and step: the cgroup path. cgroup v1 `/slurm[_<node>]/uid_<uid>/job_<id>/step_<step>/...`
  (slurmd's task/cgroup plugin); cgroup v2 `/system.slice/[<node>_]slurmstepd.scope/job_<id>/step_<step>/...`.
  The job's user: SLURM_JOB_USER from the environment, else the v1 path's uid_<uid> (named through the
  password database when this machine knows the uid). Partition: SLURM_JOB_PARTITION only.
- Kubernetes pod UID and container ID: the kubelet's cgroup path. cgroupfs driver
  `/kubepods[/burstable|/besteffort]/pod<uid>/<container id>`; systemd driver
  `/kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid with _>.slice/<runtime>-<id>.scope`
  (cri-containerd-, crio-, docker-). Pod name and namespace are not in the cgroup: only the kubelet (its
  pod-resources API, as dcgm-exporter uses) or the process's environment knows them. gpudash reads the
  Downward API variables POD_NAME and POD_NAMESPACE when the pod spec sets them; HOSTNAME is not read as
  the pod name, since the pod spec can set another hostname. The container's name is the kubelet's only.
- A process in its own cgroup namespace sees `0::/` and tells nothing; nor does another user's environ.
"""

from __future__ import annotations

import pwd
import re
from pathlib import Path

from gpudash.models import JobAttribution

PROC = Path("/proc")
_SLURM_V1 = re.compile(r"/slurm(?:_[^/]+)?/uid_(?P<uid>\d+)/job_(?P<job>\d+)(?:/step_(?P<step>[^/]+))?")
_SLURM_V2 = re.compile(r"/(?:[^/]+_)?slurmstepd\.scope/job_(?P<job>\d+)(?:/step_(?P<step>[^/]+))?")
_UID = r"[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}"
_K8S_CGROUPFS = re.compile(rf"/kubepods(?:/[a-z]+)?/pod(?P<pod>{_UID})(?:/(?P<cid>[0-9a-f]{{12,}}))?")
_K8S_SYSTEMD = re.compile(
    rf"/kubepods[^/]*\.slice/(?:[^/]+\.slice/)*kubepods(?:-[a-z]+)?-pod(?P<pod>{_UID})\.slice"
    r"(?:/(?:[a-z-]+-)?(?P<cid>[0-9a-f]{12,})\.scope)?"
)
SLURM_ENV = {"SLURM_JOB_ID": "job_id", "SLURM_JOBID": "job_id", "SLURM_STEP_ID": "step",
             "SLURM_JOB_USER": "user", "SLURM_JOB_PARTITION": "partition"}  # fmt: skip
POD_ENV = {"POD_NAME": "pod", "POD_NAMESPACE": "namespace"}
ENVIRON_BYTES = 1 << 20  # a process environment is at most a few hundred KiB; never read more


def from_cgroup(text: str) -> JobAttribution | None:
    """The job or pod named by a /proc/PID/cgroup file's lines ("hierarchy:controllers:path"), or None."""
    for line in text.splitlines():
        path = line.split(":", 2)[-1]
        if match := _SLURM_V1.search(path) or _SLURM_V2.search(path):
            found = match.groupdict()
            uid = found.get("uid")
            return JobAttribution(
                scheduler="slurm",
                job_id=found["job"],
                step=found.get("step"),
                user=_user_of(int(uid)) if uid is not None else None,
                sources=["cgroup"],
            )
        if match := _K8S_SYSTEMD.search(path) or _K8S_CGROUPFS.search(path):
            return JobAttribution(
                scheduler="kubernetes",
                pod_uid=match.group("pod").replace("_", "-"),
                container_id=match.group("cid"),
                sources=["cgroup"],
            )
    return None


def with_environment(job: JobAttribution | None, environ: dict[str, str]) -> JobAttribution | None:
    """`job` completed (or found) from the process's environment; the cgroup's word wins where both say."""
    slurm = {field: environ[name] for name, field in SLURM_ENV.items() if environ.get(name)}
    pod = {field: environ[name] for name, field in POD_ENV.items() if environ.get(name)}
    if job is None:
        if slurm.get("job_id"):
            job = JobAttribution(scheduler="slurm", sources=[])
        elif pod and environ.get("KUBERNETES_SERVICE_HOST"):
            job = JobAttribution(scheduler="kubernetes", sources=[])
        else:
            return None
    found = slurm if job.scheduler == "slurm" else pod
    added = False
    for field, value in found.items():
        if getattr(job, field) is None or (field == "user" and getattr(job, field).startswith("uid ")):
            setattr(job, field, value)
            added = True
    if added:
        job.sources.append("environment")
    return job


def read(pid: int, proc: Path = PROC) -> tuple[JobAttribution | None, str | None]:
    """(the process's job or pod, why the environment was not read or None); never raises."""
    try:
        job = from_cgroup((proc / str(pid) / "cgroup").read_text(errors="replace"))
    except OSError:
        job = None
    try:
        with open(proc / str(pid) / "environ", "rb") as f:
            raw = f.read(ENVIRON_BYTES)
    except PermissionError:
        return job, "environment: permission denied (another user's process)"
    except OSError as exc:
        return job, f"environment: {exc.strerror or exc}"
    environ = dict(entry.split("=", 1) for entry in raw.decode(errors="replace").split("\0") if "=" in entry)
    return with_environment(job, environ), None


def _user_of(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"  # a uid this machine's password database does not know (LDAP on the head node)
