"""`gpudash preflight`: before a distributed job trains, every rank checks its own device and rank 0 says
whether the job should go on.

  launcher.py  who launched us (torchrun's variables win over srun's; neither: one process) and where
               rank 0 listens
  slurm.py     Slurm's nodelist syntax, as far as finding the first node needs it
  rank.py      one rank's work: its device, the probes and the checks, each in gpudash's child-process
               runner with a time limit, so a hung GPU costs its time limit and not the job
  collective.py  torch.distributed: a process group (gloo; NCCL for GPUs), a collective on the training
               backend, the results gathered at rank 0 and its verdict broadcast back
  verdict.py   what fails a rank: a probe or check that failed, or a difference from the other ranks
               (driver, torch, a precision that works on the same model elsewhere, a GPU two ranks share)
"""
