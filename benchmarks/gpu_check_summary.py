"""summary.json and steps.tar.gz for benchmarks/gpu_check.sh, rewritten after every step.

    python gpu_check_summary.py start  --work W --out O --budget S --gpu 0|1 --gpu-line TEXT --python PY ...
    python gpu_check_summary.py step   --work W --out O --name N --file NN-name --status S --rc C --limit S
                                       --start T --end T -- COMMAND...
    python gpu_check_summary.py finish --work W --out O

The shell script keeps its state in W (run.json, steps.jsonl, steps/, state/); this module turns it into
O/summary.json and O/steps.tar.gz, each replaced atomically, so a run stopped from outside leaves the last
complete pair. Standard library only: it runs in the lent machine's Python before anything is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

STDERR_TAIL_LINES = 15
LINE_CHARS = 300


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def git_commit(root: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None  # a copy of the tree without .git
    return done.stdout.strip() or None


def stderr_tail(path: Path) -> list[str]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line[:LINE_CHARS] for line in lines[-STDERR_TAIL_LINES:]]


def devices_seen(steps_dir: Path, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The card, driver and torch as `info --json` reported them: what the landed snapshot is labelled with."""
    info = next((r for r in records if r["name"] == "info_json" and r["status"] == "ok"), None)
    if info is None:
        return None
    try:
        doc = json.loads((steps_dir / f"{info['file']}.out").read_text())
    except (OSError, ValueError):
        return None
    devices = [
        {key: d.get(key) for key in ("index", "vendor", "name", "arch", "memory_total_bytes", "driver_version")}
        for d in doc.get("devices", [])
        if isinstance(d, dict)
    ]
    return {"runtime": doc.get("runtime"), "devices": devices}


def write(work: Path, out: Path, complete: bool) -> None:
    run = json.loads((work / "run.json").read_text())
    records = []
    jsonl = work / "steps.jsonl"
    if jsonl.exists():
        records = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    counts: dict[str, int] = {}
    for record in records:
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    summary = {
        **run,
        "updated": now_iso(),
        "complete": complete,
        "counts": counts,
        "seen": devices_seen(work / "steps", records),
        "steps": records,
    }
    write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    if run["dry_run"]:
        return
    tmp = out / "steps.tar.gz.tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(work / "steps", arcname="steps")
        if (work / "state").exists():
            tar.add(work / "state", arcname="state")  # what gpudash remembered: probe matrix, bench history
    os.replace(tmp, out / "steps.tar.gz")


def start(args: argparse.Namespace) -> None:
    run = {
        "script": "benchmarks/gpu_check.sh",
        "version": 1,
        "started": now_iso(),
        "host": socket.gethostname(),
        "mode": "gpu" if args.gpu == "1" else "cpu",
        "gpu_found": args.gpu == "1",
        "nvidia_smi_list": args.gpu_line,
        "python": args.python,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "commit": git_commit(args.root),
        "budget_s": args.budget,
        "dry_run": args.dry_run == "1",
    }
    write_atomic(args.work / "run.json", json.dumps(run).encode())
    write(args.work, args.out, complete=False)


def step(args: argparse.Namespace) -> None:
    steps_dir = args.work / "steps"
    out_file = steps_dir / f"{args.file}.out"
    ran = args.status not in ("planned", "skipped")
    record = {
        "name": args.name,
        "file": args.file,
        "command": args.command,
        "status": args.status,
        "rc": args.rc if ran else None,
        "limit_s": args.limit,
        "wall_s": round(args.end - args.start, 3) if ran else None,
        "stdout_bytes": out_file.stat().st_size if out_file.exists() else None,
        "stderr_tail": stderr_tail(steps_dir / f"{args.file}.err") if ran else [],
    }
    with open(args.work / "steps.jsonl", "a") as jsonl:
        jsonl.write(json.dumps(record) + "\n")
    write(args.work, args.out, complete=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("start", "step", "finish"))
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget", type=int)
    parser.add_argument("--gpu")
    parser.add_argument("--gpu-line", default="")
    parser.add_argument("--python")
    parser.add_argument("--dry-run", default="0")
    parser.add_argument("--root", default=".")
    parser.add_argument("--name")
    parser.add_argument("--file")
    parser.add_argument("--status")
    parser.add_argument("--rc", type=int)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--start", type=float)
    parser.add_argument("--end", type=float)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)  # the step's command follows "--", options and all
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1 :]
    if args.action == "start":
        start(args)
    elif args.action == "step":
        step(args)
    else:
        write(args.work, args.out, complete=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
