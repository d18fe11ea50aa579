"""`gpudash preflight`: run it under torchrun or srun before training; a bad node stops the job."""

from __future__ import annotations

import json
import sys

from gpudash.cli.arguments import add_precisions_option

# The same table as docs/fleet.md and docs/cli.md (tests/test_preflight_failures.py compares them).
EXIT_TEXT = (
    "exit codes: 0 every rank passed; 1 a rank failed, differs from its peers, or was lost (never joined, "
    "stopped answering, exited or died: named in the table of the lowest rank still alive); 2 bad option, "
    "launcher variable or master address (one that does not resolve); 3 torch is not installed, or this rank "
    "could not reach the store where the ranks meet (rank 0 under srun, the launcher under torchrun)."
)


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "preflight",
        parents=parents,
        help="check every rank's device before a distributed job trains (torchrun, srun)",
        description="Under torchrun or srun, every rank probes the precisions of its own device and runs the "
        "checks (each in a child process with a time limit), runs one all_reduce on the training backend, and "
        "rank 0 prints one table. Fails when a rank's device fails a probe or a check, or differs from the "
        "others (driver, torch, a precision that works elsewhere on the same model). Without a launcher it "
        "checks this process's device alone.",
        epilog=EXIT_TEXT + " "
        "Examples: torchrun --nproc-per-node 8 -m gpudash preflight; "
        "srun --kill-on-bad-exit=1 gpudash preflight (docs/fleet.md)",
    )
    p.add_argument("--json", action="store_true", help="print the preflight JSON document (rank 0) instead of a table")
    add_precisions_option(p, "probe", "all", old_spelling=True)
    p.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        help="time limit for each probe and each check, seconds (default: config probe.timeout_s)",
    )
    p.add_argument("--no-checks", action="store_true", help="probe only; skip the plugin checks")
    p.add_argument("--device", choices=("auto", "cpu"), default="auto", help="auto: the rank's GPU, else the CPU")
    p.add_argument(
        "--backend", choices=("auto", "gloo", "nccl"), default="auto", help="auto: nccl for GPU ranks, else gloo"
    )
    p.add_argument(
        "--wait",
        metavar="S",
        type=float,
        default=120.0,
        help="how long the ranks wait for every rank to join, seconds; later a rank still missing is named as "
        "never joined (default 120)",
    )
    p.add_argument(
        "--stall",
        metavar="S",
        type=float,
        default=30.0,
        help="a rank whose heartbeat stops this long is named as stopped answering; also each collective's "
        "timeout, seconds (default 30)",
    )
    p.add_argument(
        "--expect-gpus",
        metavar="N",
        type=int,
        help="GPUs each node must have (health check gpu.count; default: config health.expect_gpus)",
    )
    p.add_argument("--no-speed", action="store_true", help="skip the matmul rates and numerics fingerprints")
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.actions import preflight
    from gpudash.cli.arguments import chosen_precisions, positive_seconds
    from gpudash.errors import UsageError
    from gpudash.preflight.launcher import detect
    from gpudash.preflight.verdict import rank_list
    from gpudash.render.preflight import text

    args = ctx.args
    if ctx.session.replay:
        raise UsageError("--replay: preflight checks the devices this job really runs on; a snapshot has none")
    precisions = chosen_precisions(args)
    if args.expect_gpus is not None and args.expect_gpus < 0:
        raise UsageError(f"--expect-gpus: expected a number of GPUs from 0, got {args.expect_gpus}")
    from gpudash.preflight.verdict import Limits

    config = ctx.session.config
    options = preflight.Options(
        device=args.device,
        precisions=precisions,
        timeout_s=positive_seconds(args.timeout, "--timeout", ctx.session.config["probe"]["timeout_s"]),
        checks=not args.no_checks,
        backend=args.backend,
        wait_s=positive_seconds(args.wait, "--wait", 120.0),
        stall_s=positive_seconds(args.stall, "--stall", 30.0),
        plugin_dirs=ctx.session.plugin_dirs,
        limits=Limits(**config["preflight"]),
        expect_gpus=args.expect_gpus,
        health_config=config.get("health"),
        plugin_limits=config.get("plugins"),
        speed=not args.no_speed,
    )

    def show(doc: dict, code: int) -> None:  # before the other ranks learn the verdict (actions.preflight.run)
        print(json.dumps(doc, indent=2, allow_nan=False) if args.json else text(doc), flush=True)
        if not args.json and code:
            print(f"gpudash preflight: failed on rank {rank_list(doc['failed_ranks'])}", file=sys.stderr, flush=True)

    world = detect()
    _, code = preflight.run(world, options, show)
    return code
