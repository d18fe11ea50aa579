"""Vendor drivers contained: every NVML and amdsmi call runs in a child process, under a time limit.

A driver call can hang (a GPU falling off the bus, a wedged kernel driver) or abort the process it runs in (an
assertion in the vendor library). In gpudash's own process either would freeze `info` and the dashboard or end
them without a word. So each vendor adapter (NvmlBackend, AmdSmiBackend) runs in a process of its own:

- The child is forked when the machine is discovered, before the dashboard starts any thread. Forking costs
  about a millisecond and needs no second interpreter start or import: the child already has gpudash and the
  binding loaded (and, in the tests, the fake binding). The child imports and opens the binding itself, so the
  parent never loads the vendor library; it speaks JSON lines over two pipes: `open`, `devices`, `sample N`.
- Every request has a time limit (SAMPLE_LIMIT_S for one device's reading). The child notes the name of each
  binding call as it starts it in a small shared memory page, so a call that hangs is named: the device's
  reading becomes n/a with "driver call timed out after 2 s (in nvmlDeviceGetPowerUsage)", the child's
  process group is killed, and `info` returns. A child that dies (SIGABRT, SIGSEGV) gives the same, with the
  signal.
- The next reading after RESTART_DELAY_S starts a new child (forked from the running dashboard, whose threads
  the child never touches); after MAX_FAILURES failures the vendor's devices stay n/a, saying why, and the
  dashboard goes on with the others.
- The child dies with gpudash: it leads its own process group, which gpudash.lifetime kills on any exit, and
  asks the kernel for SIGKILL when its parent goes (Linux).

Where there is no fork (Windows), the adapters run in-process as before.
"""

from __future__ import annotations

from gpudash.devices.contained.backend import ContainedBackend, contained

__all__ = ["ContainedBackend", "contained"]
