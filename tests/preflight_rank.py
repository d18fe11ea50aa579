"""A torchrun/srun entry point for the preflight tests: gpudash preflight, with a fault planted on one rank.

Only this test file plants anything: gpudash itself has no switch for it. PLANT_RANK names the rank (RANK
under torchrun, else SLURM_PROCID), PLANT_FAULT the fault:
- tests/probe_faults.py's form ("bf16=conversion_zeros,fp16=hang"): that rank's probe child runs
  probe_faults:run_probe, which wraps the real probe; every other rank runs the real probe untouched;
- "slow" or "bitflip": that rank's speed task runs tests/preflight_faults.py (every timed matmul call does
  twice the work; or the fingerprint's output gets one bit flipped);
- "kill" or "stop": once every rank has joined, just before its device work, the rank sends itself SIGKILL or SIGSTOP (a rank
  that dies, or one that stops answering: a hung host, a debugger, a stuck driver call);
- "kill-at-result": the rank does its device work, then sends itself SIGKILL as it would post its result;
- "end-before-store" (srun, PLANT_RANK 0, PLANT_FLAG a file path): the other ranks make PLANT_FLAG when they
  first fail to reach the store; rank 0 waits for it, then SIGKILLs itself instead of starting the store;
- "end-the-step-on-verdict" (torchrun, PLANT_RANK 1): as soon as the rank has read the verdict it SIGKILLs rank 0
  (the reporter; every rank writes its pid to PLANT_PIDS/<rank>), as `srun --kill-on-bad-exit=1` ends the step
  when a rank that read a failing verdict exits 1: the report must already be out;
- "slow-allreduce": every all_reduce of that rank on a group smaller than the world (within its node, across
  nodes) is followed by a pause three times as long as the call took, so its group's bus bandwidth is about a
  quarter of what it would be, however busy the machine.

NODES, a JSON object {rank: node name}, sets GPUDASH_PREFLIGHT_NODE for each rank named there (torchrun starts
every rank with one environment), so the ranks of one machine look like several nodes.

FAKE_NVML, a JSON object {rank: snapshot device dict}, gives each rank named there one NVIDIA GPU through
tests/fakes.py's fake pynvml (read by the real adapter in its forked driver child, as in the other tests), which
torch is made to see as cuda:0 (and the host to have its device node) so the rank chooses it (torch itself still has no CUDA here: the probe fails alike
on every rank, and the collective runs on gloo).
"""

import json
import os
import signal
import sys

rank_id = os.environ.get("RANK", os.environ.get("SLURM_PROCID"))
planted = rank_id == os.environ.get("PLANT_RANK")
fault = os.environ.get("PLANT_FAULT", "")

node = json.loads(os.environ.get("NODES") or "{}").get(rank_id)
if node is not None:
    os.environ["GPUDASH_PREFLIGHT_NODE"] = node

fake_gpu = json.loads(os.environ.get("FAKE_NVML") or "{}").get(rank_id)
if fake_gpu is not None:
    from fakes import make_fake_pynvml

    import gpudash.devices
    from gpudash.devices import torch_view
    from gpudash.models import DeviceInfo

    sys.modules["pynvml"] = make_fake_pynvml([fake_gpu])
    sys.modules["amdsmi"] = None  # type: ignore[assignment]  (None in sys.modules: no AMD view)

    def seen_by_torch(self):
        return [DeviceInfo("nvidia", 0, fake_gpu["name"], uuid=fake_gpu["uuid"], torch_index=0, sources=["torch"])]

    torch_view.TorchView.devices = seen_by_torch
    gpudash.devices.torch_could_see_gpus = lambda: True  # as if /dev/nvidia0 were there

if os.environ.get("PLANT_PIDS"):
    with open(os.path.join(os.environ["PLANT_PIDS"], str(rank_id)), "w") as pid_file:
        pid_file.write(str(os.getpid()))

if fault == "end-before-store":
    # srun: rank PLANT_RANK (0) is killed before it starts the store, once another rank waits for it (that rank
    # makes the file PLANT_FLAG at its first failed try to reach the store), as a rank 0 killed in its first
    # seconds would be; the other ranks wait for the store with the real code.
    import time
    from pathlib import Path

    from gpudash.preflight import store

    flag = Path(os.environ["PLANT_FLAG"])
    if planted:

        def killed_instead(*args, **kwargs):
            deadline = time.monotonic() + 120
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGKILL)

        store.start_host = killed_instead
    else:
        real_why_not = store._why_not

        def waiting(exc):
            flag.touch()
            return real_why_not(exc)

        store._why_not = waiting
elif planted and fault == "end-the-step-on-verdict":
    from gpudash.preflight import coordinate

    real_await = coordinate.Job.await_verdict

    def read_then_end_the_step(self):
        verdict = real_await(self)
        with open(os.path.join(os.environ["PLANT_PIDS"], "0")) as pid_file:
            os.kill(int(pid_file.read()), signal.SIGKILL)
        return verdict

    coordinate.Job.await_verdict = read_then_end_the_step
elif planted and fault == "kill-at-result":
    from gpudash.preflight import coordinate

    real_collect = coordinate.Job.collect

    def collect_or_die(self, kind, mine):
        if kind == "result":
            os.kill(os.getpid(), signal.SIGKILL)
        return real_collect(self, kind, mine)

    coordinate.Job.collect = collect_or_die
elif planted and fault in ("kill", "stop"):
    import time

    from gpudash.preflight import coordinate, rank

    real_join = coordinate.Job.join

    def join_then_wait_for_all(self, *args, **kwargs):
        # Under load a rank may die before the others have even reached the store, and torchrun then stops them
        # before anyone could name it (no one can): the fault is planted once every rank has joined.
        real_join(self, *args, **kwargs)
        world = int(os.environ.get("WORLD_SIZE") or os.environ.get("SLURM_NTASKS") or 1)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not self.channel.has([f"joined/{r}" for r in range(world)]):
            time.sleep(0.05)

    coordinate.Job.join = join_then_wait_for_all
    real = rank.check_device

    def check_then_fail(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
        return real(*args, **kwargs)

    rank.check_device = check_then_fail
elif planted and fault == "slow-allreduce":
    import time

    from gpudash.preflight import bandwidth

    real_sweep = bandwidth.bus_bandwidth

    class SlowAllReduce:
        """torch.distributed as the sweep sees it, but each all_reduce pauses three times as long as it took."""

        def __init__(self, dist):
            self.dist = dist

        def __getattr__(self, name):
            return getattr(self.dist, name)

        def all_reduce(self, *args, **kwargs):
            began = time.perf_counter()
            done = self.dist.all_reduce(*args, **kwargs)
            time.sleep(3 * (time.perf_counter() - began))
            return done

    def slow_sweep(dist, n, where, sizes, group=None):
        return real_sweep(dist if group is None else SlowAllReduce(dist), n, where, sizes, group=group)

    bandwidth.bus_bandwidth = slow_sweep
elif planted and fault in ("slow", "bitflip"):
    from gpudash.preflight import rank

    rank.SPEED_TARGET = "preflight_faults:" + ("slow_measure" if fault == "slow" else "flipped_measure")
elif planted and fault:
    from gpudash.measure import probe

    probe.TASK_TARGET = "probe_faults:run_probe"
    os.environ["GPUDASH_PROBE_FAULT"] = fault

from gpudash.cli import main  # noqa: E402  (after the planting above)

sys.exit(main(sys.argv[1:]))
