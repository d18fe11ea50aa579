"""Fleet soak: does memory stay flat over hundreds of rounds with the fleet's frozen garbage collection?

    python benchmarks/fleet_gc_soak.py [--hosts 128] [--seconds 900] [--interval 1] [--every 60]
                                       [--before REV ...] [--mode tab|engine] [--reclaim-every S]

gpudash.fleet.gc_pause freezes what survives each round (gc.freeze) so that no full collection walks the
fleet's long-lived objects; a reference cycle that becomes garbage after being frozen is then never collected
unless something unfreezes it. This runs the fleet for --seconds against benchmarks/fleet_sim.py --prometheus-api
(--hosts 8-GPU hosts, one simulated Prometheus shared by all runs) in processes side by side under the same load:
this checkout's code, and the code at each --before (default 64c4a2c^, before refreeze; `git archive` into a
temporary folder, first on PYTHONPATH). --mode tab: the dashboard's Fleet tab in-process (Textual's
headless driver, 160x50), rounds every --interval s; --mode engine: the Prometheus source's rounds back to back at
--interval (what the Fleet tab's worker and `gpudash fleet` call).

Every --every seconds each prints: rounds so far, RSS, len(gc.get_objects()) (what the collector tracks and can
walk), gc.get_freeze_count() (of those, frozen), and the full collections so far with the longest one's time
(gc.callbacks; a full collection holds the GIL: the UI thread waits for it). At the end each unfreezes and runs one
full collection: the objects it finds unreachable are the cyclic garbage the run had left behind (with the
largest types by count).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def child(url: str, mode: str, seconds: float, interval: float, every: float, label: str, reclaim: float) -> int:
    """One run, in its own process: prints one JSON line per sample and one at the end."""
    import gc

    import psutil

    import gpudash

    me = psutil.Process()
    rounds = [0]
    start = time.monotonic()
    full: list[float] = []  # each full collection's duration
    began = [0.0]

    def timed(phase: str, info: dict) -> None:
        if info["generation"] == 2:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                full.append(time.perf_counter() - began[0])

    gc.callbacks.append(timed)

    def sample(final: bool = False) -> None:
        point = {"label": label, "t": round(time.monotonic() - start, 1), "rounds": rounds[0],
                 "rss": me.memory_info().rss, "objects": len(gc.get_objects()), "frozen": gc.get_freeze_count(),
                 "full": len(full), "full_max_ms": round(1000 * max(full, default=0.0))}  # fmt: skip
        if final:
            gc.callbacks.remove(timed)
            gc.set_debug(gc.DEBUG_SAVEALL)  # what the full collection finds unreachable, kept to be counted
            gc.unfreeze()
            t0 = time.perf_counter()
            point["unreachable"] = gc.collect()
            point["collect_ms"] = round(1000 * (time.perf_counter() - t0))
            kinds: dict[str, int] = {}
            for o in gc.garbage:
                kinds[type(o).__qualname__] = kinds.get(type(o).__qualname__, 0) + 1
            point["kinds"] = sorted(kinds.items(), key=lambda kv: -kv[1])[:8]
            gc.set_debug(0)
            gc.garbage.clear()
            point["rss_after"] = me.memory_info().rss
        print(json.dumps(point), flush=True)

    print(json.dumps({"label": label, "gpudash": gpudash.__file__}), flush=True)
    if mode == "engine":
        from gpudash.actions import fleet as action
        from gpudash.config import defaults

        spec = action.spec_from(defaults(), prometheus=url, timeout_s=20.0)
        source, _ = action.open_source(spec)
        due = start + every
        while time.monotonic() - start < seconds:
            began = time.monotonic()
            source.round()
            rounds[0] += 1
            if time.monotonic() >= due:
                sample()
                due += every
            time.sleep(max(0.0, interval - (time.monotonic() - began)))
        source.close()
        sample(final=True)
        return 0

    import asyncio

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.tui.app import create_app
    from gpudash.tui.screens import fleet_view
    from gpudash.tui.screens.fleet_view import FleetView

    if reclaim and hasattr(fleet_view, "RECLAIM_EVERY_S"):
        fleet_view.RECLAIM_EVERY_S = reclaim  # type: ignore[attr-defined]
    landed = FleetView._landed

    def counted(view, *args) -> None:
        rounds[0] += 1
        landed(view, *args)

    FleetView._landed = counted  # type: ignore[method-assign]
    config = defaults()
    config["fleet"]["prometheus"] = url
    config["fleet"]["timeout_s"] = 20.0
    config["fleet"]["interval"] = interval

    async def watch() -> None:
        app = create_app(discover(replay=str(DGX)), config, add_torch_view=lambda machine: None)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("f")
            while time.monotonic() - start < seconds:
                await asyncio.sleep(min(every, max(0.0, seconds - (time.monotonic() - start))))
                sample()
            sample(final=True)

    asyncio.run(watch())
    return 0


def tree_at(rev: str) -> Path:
    where = Path(tempfile.mkdtemp(prefix="gpudash-soak-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "gpudash", "plugins"], capture_output=True,
                             check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=900.0)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between rounds (as fleet.interval)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between samples")
    parser.add_argument("--mode", choices=("tab", "engine"), default="tab")
    parser.add_argument(
        "--before",
        action="append",
        metavar="REV",
        help="the code to compare, repeatable (default 64c4a2c^; '' for none)",
    )
    parser.add_argument(
        "--reclaim-every", type=float, default=0.0, metavar="S",
        help="this checkout's Fleet tab reclaims this often instead of fleet_view.RECLAIM_EVERY_S",
    )  # fmt: skip
    parser.add_argument("--child", nargs=2, metavar=("URL", "LABEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], args.mode, args.seconds, args.interval, args.every, args.child[1],
                     args.reclaim_every)  # fmt: skip

    from fleet_scale import simulate_prometheus

    print(f"fleet soak, --mode {args.mode}: {args.hosts} hosts x 8 GPUs through the simulated Prometheus API, rounds "
          f"every {args.interval:g} s for {args.seconds:g} s; {os.cpu_count()} CPUs, Python "
          f"{sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} at the start", flush=True)  # fmt: skip
    sim, url, _ = simulate_prometheus(args.hosts)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    runs = {f"now ({head.stdout.strip() or '?'} + working tree)": os.environ.get("PYTHONPATH", "")}
    for rev in args.before if args.before is not None else ["64c4a2c^"]:
        if rev:
            runs[rev] = str(tree_at(rev))
    procs = {}
    try:
        for label, path in runs.items():
            env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
            extra = []
            if label.startswith("now"):
                env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), path) if p)
                extra = ["--reclaim-every", str(args.reclaim_every)]
            cmd = [sys.executable, __file__, "--child", url, label, "--mode", args.mode, "--seconds",
                   str(args.seconds), "--interval", str(args.interval), "--every", str(args.every), *extra]  # fmt: skip
            procs[label] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
        finals = {}
        for label, proc in procs.items():
            for line in proc.stdout or ():
                p = json.loads(line)
                if "gpudash" in p:
                    print(f"   {label}: gpudash from {Path(p['gpudash']).parent}", flush=True)
                    continue
                print(f"   {label[:12]:>12} {p['t']:6.0f} s  rounds {p['rounds']:4d}  RSS {mib(p['rss'])}  objects "
                      f"{p['objects']:8d}  frozen {p['frozen']:8d}  full collections {p['full']} (longest {p['full_max_ms']} ms)",
                      flush=True)  # fmt: skip
                if "unreachable" in p:
                    finals[label] = p
            proc.wait()
        for label, p in finals.items():
            print(f"   {label}: at the end, unfrozen, one full collection ({p['collect_ms']} ms) found "
                  f"{p['unreachable']} unreachable objects {p['kinds']}; RSS after it {mib(p['rss_after'])}")  # fmt: skip
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        if sim.stdin:
            sim.stdin.close()
        sim.wait(timeout=30)
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "benchmarks"))
    raise SystemExit(main())
