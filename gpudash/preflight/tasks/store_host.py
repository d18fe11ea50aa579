"""The ranks' TCPStore under srun, in a process of its own that rank 0 starts (gpudash/preflight/store.py).

Under srun no launcher keeps a store for the job (torchrun's agent does), so rank 0 starts this process and
connects to it like every other rank. It outlives rank 0: when rank 0 dies, the store still answers, this
process says so in the store (`gone/0`, "died: ..."), and the lowest surviving rank prints the table naming
rank 0. After SIGTERM, SIGINT or SIGHUP it stays TERM_AFTER_S more (Slurm ending the step signals every process, and
the ranks still alive need the store for their last words); otherwise it ends on its own once no rank needs it: each rank has left (`left/<rank>`, Channel.close), or went silent (its
heartbeat still for --stall and a margin), or never joined within --wait and a margin. Started as

    python -c CHILD_COMMAND '{"port": ..., "world_size": ..., "stall_s": ..., "wait_s": ...}'

it writes one line to stdout: "ready", or "error: <why>" when it cannot listen.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import sys
import time
from datetime import timedelta
from typing import Any

MARGIN_S = 5.0  # beyond --stall / --wait before a silent rank no longer counts as needing the store
POLL_S = 0.5
# After a SIGTERM (Slurm ending the step, or a user's Ctrl-C): the ranks, signalled too, have gpudash's 5 s of
# unwinding (lifetime.UNWIND_LIMIT_S) to post their last words; then this process ends, still within Slurm's
# KillWait (30 s by default) before its SIGKILL.
TERM_AFTER_S = 8.0


def serve(port: int, world_size: int, stall_s: float, wait_s: float, prefix: str) -> int:
    signalled: list[float] = []

    def note(signum, frame) -> None:  # the step is ending: the ranks get TERM_AFTER_S for their last words
        signalled.append(time.monotonic())

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, note)
    parent = os.getppid()
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
    import torch.distributed as dist

    try:
        raw = dist.TCPStore("0.0.0.0", port, None, True, timeout=timedelta(seconds=30), wait_for_workers=False)
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        print(f"error: {lines[0] if lines else type(exc).__name__}", flush=True)
        return 1
    store: Any = dist.PrefixStore(prefix, raw)  # Any: set() takes the pickled bytes the ranks read
    print("ready", flush=True)
    sys.stdout.close()
    beats: dict[int, tuple[int, float]] = {}
    parent_gone = False

    def has(key: str) -> bool:
        return bool(store.check([key]))

    while True:
        now = time.monotonic()
        if not parent_gone and os.getppid() != parent:
            parent_gone = True  # rank 0 ended: said why (gone/0) and left, or died without a word
            if not has("left/0") and not has("gone/0"):
                store.set("gone/0", pickle.dumps("died: its process ended without a word (seen by the store it "
                                                 "started under srun): killed or crashed"))  # fmt: skip
        needed = []
        for r in range(world_size):
            if has(f"left/{r}") or (r == 0 and parent_gone):
                continue
            count = int(store.add(f"hb/{r}", 0))
            last = beats.get(r)
            if last is None or last[0] != count:
                beats[r] = last = (count, now)
            limit = (stall_s if count else wait_s) + MARGIN_S
            if now - last[1] <= limit:
                needed.append(r)
        if not needed or (signalled and now - signalled[0] > TERM_AFTER_S):
            return 0
        time.sleep(POLL_S)


def main() -> int:
    args = json.loads(sys.argv[1])
    return serve(int(args["port"]), int(args["world_size"]), float(args["stall_s"]), float(args["wait_s"]),
                 str(args["prefix"]))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
