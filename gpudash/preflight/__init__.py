"""`gpudash preflight`: before a distributed job trains, every rank checks its own device and rank 0 says
whether the job should go on.

  launcher.py  who launched us (torchrun's variables win over srun's; neither: one process), where
               rank 0 listens, and which node this rank is on
  slurm.py     Slurm's nodelist syntax, as far as finding the first node needs it
  rank.py      one rank's work: its device, the probes and the checks, each in gpudash's child-process
               runner with a time limit, so a hung GPU costs its time limit and not the job
  store.py     the ranks' out-of-band channel: a TCPStore with a heartbeat per rank, every request bounded
  coordinate.py  the phases over the store (join, results, collectives, verdict), each bounded; a rank that
               never joins, goes quiet, exits or dies is named, and the lowest rank alive reports
  collective.py  a process group (gloo; NCCL for GPUs) for the collectives, under a deadline; a group per
               node and one across nodes (a rank's node: launcher.node_name)
  bandwidth.py   all_reduce: the sum checked, bus bandwidth over a sweep of sizes (nccl-tests' busbw)
  verdict.py   what fails a rank: a probe or check that failed, or a difference from the other ranks
               (driver, torch, a precision that works on the same model elsewhere, a GPU two ranks share)
"""
