"""The fleet at scale: one scrape of an 8-GPU node, and the fleet view over 128 simulated 8-GPU hosts.

    python benchmarks/fleet_scale.py [--seconds 600] [--tui-seconds 300] [--hosts 128]

1. Scrape: `gpudash serve`'s collector on the replayed 8-GPU snapshot, with a remembered probe (9 precisions
   per GPU), a 20-run benchmark history (8 GPUs x 9 precisions each) and checks planted in a temporary state
   folder (replays never save their own, so these records are synthetic, shaped like the commands' output).
   Times 300 scrapes over HTTP (`gpudash serve`'s endpoint, gpudash.exporter.http; http.client on loopback)
   after one cold scrape.
   Goal: one scrape within 10 ms.
2. Fleet engine: benchmarks/fleet_sim.py serves 128 hosts x 8 GPUs on loopback ports; a separate process runs
   the scrape source of `gpudash fleet` (gpudash.actions.fleet) round after round at its adaptive interval
   for --seconds: each round's duration and dropped hosts, the process's CPU time and its RSS after every
   round. Goal: every round within its interval, <= 5% of a core, memory flat.
3. Fleet view: the dashboard itself (`python -m gpudash --replay ... --config` with [fleet] hosts = the 128
   endpoints) in a 160x50 pseudo-terminal, switched to the Fleet tab; its CPU time over --tui-seconds after
   the first full round is on screen, and its RSS at the start and end of that window.

4. --prometheus-hosts 1024: benchmarks/fleet_sim.py --prometheus-api answers Prometheus's HTTP API for that many
   8-GPU hosts (dcgm-exporter's and gpudash's series, as a Prometheus scraping both holds them); the engine
   reads it round after round at the Fleet tab's pace (5 s) for --seconds (rounds within the interval, CPU at
   most 5 % of a core), then the Fleet tab in-process: first paint within 1 s of its key, and --key-presses
   cursor keys each answered within 100 ms while rounds run (the key's event to the repaint after the cursor
   moved; --pilot-keys: through pilot.press, which also waits for the whole process to go idle).

Diagnostics (one each, instead of the above): --heap-seconds and --tui-heap-seconds (the Python heap under
tracemalloc), --tui-cpu-seconds (the Fleet tab's CPU by thread: the UI drawing, the requests' thread),
--tui-rss-seconds [--malloc-trim] (the Fleet tab's RSS beside the allocator's arenas, the object count and RSS
by mapping: main heap, thread arenas, stacks; run it under MALLOC_ARENA_MAX=2 too), --tui-only (the real
dashboard for an hour).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
DGX = ROOT / "examples" / "snapshots" / "dgx-h100-8gpu.json"
sys.path.insert(0, str(ROOT / "benchmarks"))


# 1. One scrape ---------------------------------------------------------------------------------------------


def plant_results(machine) -> None:
    """Remembered results for the replayed machine, the size real commands would leave behind."""
    from gpudash import store
    from gpudash.contracts.validation import problems
    from gpudash.measure.bench.report import BenchReport, bench_json
    from gpudash.measure.bench.store import BENCH_HISTORY_KIND
    from gpudash.measure.probe.report import PROBE_VERSION
    from gpudash.measure.probe.store import PROBE_KIND
    from gpudash.measure.schema import PrecisionCapabilityMatrix, PrecisionTestResult
    from gpudash.plugin_manager.remembered import CHECKS_KIND, CHECKS_VERSION
    from gpudash.precisions import PRECISIONS

    # Written with the store and each kind's owner's name and layout (a replay never saves its own results).

    stamp = "2026-11-20T10:00:00+0000"
    matrices = {}
    for d in machine.devices:
        results = {
            p: PrecisionTestResult(p, True, spec="native", verified=True, verdict="verified", max_rel_error=1e-3)
            for p in PRECISIONS
        }
        matrices[d.key] = PrecisionCapabilityMatrix(d.name, device=d.key, results=results, measured_at=stamp).to_dict()
    store.save(PROBE_KIND, machine, {"version": PROBE_VERSION, "matrices": matrices})
    spread = {"p10_s": 0.27, "p90_s": 0.28, "min_s": 0.27}
    shape_entry = {"op": "matmul", "shape": [4096] * 3, "gflops": 500e3, "median_s": 0.275, "mean_s": 0.275,
                   "spread": spread, "reps": 5, "efficiency": 0.6, "budget_cut": False, "other_load": 0.0}  # fmt: skip
    for run in range(20):
        reports = {}
        for d in machine.devices:
            results = {
                p: PrecisionTestResult(p, True, measured_gflops=500e3 + run, efficiency=0.6, speedup_vs_fp32=8.0)
                for p in PRECISIONS
            }
            matrix = PrecisionCapabilityMatrix(d.name, device=d.key, results=results, measured_at=stamp)
            reports[d.key] = BenchReport(
                d.key, d.index, d.vendor, d.name, matrix,
                results=[dict(shape_entry, precision=p) for p in PRECISIONS] * 6,
                memory_bandwidth=[{"op": "copy", "status": "ok", "bytes": 1 << 30, "gbps": 2900.0, "median_s": 0.00074,
                                   "reps": 20, "spread": spread, "efficiency": 0.87}],
                median_gflops_by_precision=dict.fromkeys(PRECISIONS, 4.5e5),
            )  # fmt: skip
        # Shaped as a live run (a replay never saves one), through the bench command's own document builder.
        run_doc = dict(bench_json(machine, reports, "quick"), replayed=False, source="live")
        wrong = problems("bench", run_doc)
        if wrong:
            raise SystemExit(f"fleet_scale: the planted benchmark run no longer matches bench.schema.json: {wrong[0]}")
        store.append_history(BENCH_HISTORY_KIND, machine, run_doc)
    checks = [
        {"plugin": "p", "check": f"c{i}", "device": d.key, "status": "pass", "summary": "ok", "checked_at": stamp}
        for d in machine.devices
        for i in range(7)
    ]
    store.save(CHECKS_KIND, machine, {"version": CHECKS_VERSION, "checks": checks})


def scrape_timing(scrapes: int) -> dict:
    import http.client

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.exporter import registry_for
    from gpudash.exporter.http import MetricsApp, start

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="gpudash-bench-state-")
    machine = discover(replay=str(DGX))
    plant_results(machine)
    _, collector = registry_for(machine, defaults())
    collector.families()  # as `gpudash serve` does before it listens
    server = start(MetricsApp(collector), "127.0.0.1", 0)  # the endpoint `gpudash serve` runs
    port = server.server_address[1]

    def one() -> tuple[float, bytes]:
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        body = conn.getresponse().read()
        conn.close()
        return time.perf_counter() - start, body

    cold, body = one()
    times = sorted(one()[0] for _ in range(scrapes))
    server.shutdown()
    return {
        "cold_ms": cold * 1000,
        "median_ms": statistics.median(times) * 1000,
        "p95_ms": times[int(0.95 * len(times)) - 1] * 1000,
        "max_ms": times[-1] * 1000,
        "bytes": len(body),
        "samples": sum(1 for line in body.decode().splitlines() if line and not line.startswith("#")),
        "scrapes": scrapes,
    }


# 2. The fleet engine ---------------------------------------------------------------------------------------


def simulate(hosts: int, keep_alive: bool = False) -> tuple[subprocess.Popen, list[int]]:
    sim = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "fleet_sim.py"), "--hosts", str(hosts)]
        + (["--keep-alive"] if keep_alive else []),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ports = json.loads(sim.stdout.readline())["ports"]
    return sim, ports


def engine(ports_file: str, seconds: float, interval_s: float = 0.0, heap: bool = False) -> None:
    """Runs in its own process (--engine): rounds at the adaptive interval (or `interval_s`); prints one JSON
    line. With `heap`, tracemalloc's count of the Python heap after every round as well."""
    import tracemalloc

    from gpudash.actions import fleet as action
    from gpudash.config import defaults
    from gpudash.fleet.interval import refresh_interval

    if heap:
        tracemalloc.start()
    if ports_file.startswith("http://"):  # a Prometheus (the simulated API: --prometheus-hosts)
        spec = action.spec_from(defaults(), prometheus=ports_file, timeout_s=20.0)
    else:
        spec = action.spec_from(defaults(), hostfile=ports_file)
    source, endpoints = action.open_source(spec)
    # The Fleet tab's pace: the adaptive interval for endpoints, the configured one (or 5 s) for Prometheus.
    interval = interval_s or (refresh_interval(endpoints, spec.interval) if endpoints else spec.interval or 5.0)
    me = psutil.Process()
    rounds, rss, heaps = [], [], []
    start = time.monotonic()
    cpu0 = None
    while time.monotonic() - start < seconds:
        began = time.monotonic()
        fleet = source.round()
        s = fleet.summary()
        rounds.append({"took_s": fleet.took_s, "dropped": len(fleet.dropped), "up": s["up"], "devices": s["devices"],
                       "interval": interval})  # fmt: skip
        rss.append(me.memory_info().rss)
        if heap:
            heaps.append(tracemalloc.get_traced_memory()[0])
        if cpu0 is None:  # the first round pays for imports and the first connections: measured apart
            cpu0, t0 = me.cpu_times(), time.monotonic()
            first = rounds[0]
        if not interval_s and not endpoints and not spec.interval:
            # Prometheus: as the Fleet tab paces itself, after every round (the scrape interval, or longer while
            # rounds cost more than gpudash.fleet.interval.CPU_SHARE of a core)
            interval = rounds[-1]["interval"] = getattr(source, "interval_s", interval)
        time.sleep(max(0.0, interval - (time.monotonic() - began)))
    cpu1, t1 = me.cpu_times(), time.monotonic()
    opened = getattr(source, "connections_opened", None)
    source.close()
    used = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    print(json.dumps({"interval": interval, "rounds": rounds, "rss": rss, "first": first, "heap": heaps,
                      "cpu_pct": 100 * used / (t1 - t0), "window_s": t1 - t0, "opened": opened}))  # fmt: skip


# 3. The dashboard's Fleet tab ------------------------------------------------------------------------------


def tui(ports: list[int], seconds: float, every: float = 0.0) -> dict:
    """The Fleet tab's CPU over `seconds`, and its RSS at the start, the end and (with `every`) in between."""
    from tui_startup import TerminalRun, replay_marker  # the repo's own pty harness

    config = Path(tempfile.mkdtemp(prefix="gpudash-bench-")) / "config.toml"
    config.write_text("[fleet]\nhosts = [" + ", ".join(f'"127.0.0.1:{p}"' for p in ports) + "]\n")
    want = f"{len(ports)} hosts: {len(ports)} up".encode()
    first_row = replay_marker(DGX)
    run = TerminalRun(["--replay", str(DGX), "--config", str(config)], [first_row, want])
    run.wait_for(first_row)
    os.write(run.master, b"f")
    run.wait_for(want, timeout=60)
    proc = psutil.Process(run.proc.pid)
    time.sleep(2.0)
    before, t0, rss0 = proc.cpu_times(), time.perf_counter(), proc.memory_info().rss
    series = [(0.0, rss0)]
    while (left := seconds - (time.perf_counter() - t0)) > 0:
        time.sleep(min(every or left, left))
        series.append((time.perf_counter() - t0, proc.memory_info().rss))
        if every:
            print(f"   {series[-1][0]:6.0f} s  Fleet tab RSS {mib(series[-1][1])}", flush=True)
    after, t1, rss1 = proc.cpu_times(), time.perf_counter(), proc.memory_info().rss
    run.quit()
    used = (after.user - before.user) + (after.system - before.system)
    return {"cpu_pct": 100 * used / (t1 - t0), "window_s": t1 - t0, "rss_start": rss0, "rss_end": rss1,
            "rss_series": series}  # fmt: skip


# 4. 1,024 hosts through Prometheus's API ---------------------------------------------------------------------


def simulate_prometheus(hosts: int) -> tuple[subprocess.Popen, str, int]:
    sim = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "fleet_sim.py"), "--hosts", str(hosts), "--prometheus-api"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    said = json.loads(sim.stdout.readline())
    return sim, f"http://127.0.0.1:{said['port']}", said["series"]


def fleet_tab_prometheus(url: str, hosts: int, presses: int, pilot_keys: bool = False) -> dict:
    """The Fleet tab in-process (Textual's headless driver, 160x50) reading the simulated Prometheus: time from
    the key `f` to the tab's first paint and to the first round on screen; then, while rounds go on at the
    tab's pace, each cursor key's time from its event reaching the driver until the screen refresh after the
    table's cursor moved (`keys_s`; when each key landed, `key_at_s`, from the first round on screen).

    pilot_keys: each key through `pilot.press` instead, timed until the cursor moved, as this benchmark did
    before. pilot.press returns only once Textual's wait_for_idle has seen the whole process idle (twice, up to 1
    s each): while a round's worker thread is busy it waits for the worker, not for the key, so those figures
    count the round's work in another thread as the key's wait (docs/performance.md, "Fleet at 1,024 hosts
    through Prometheus")."""
    import asyncio

    from textual import events

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.tui.app import create_app
    from gpudash.tui.widgets.fleet_table import FleetTable

    config = defaults()
    config["fleet"]["prometheus"] = url
    config["fleet"]["timeout_s"] = 20.0
    found: dict = {}

    async def until(pilot, condition, limit: float) -> float:
        t0 = time.perf_counter()
        while not condition():
            if time.perf_counter() - t0 > limit:
                raise TimeoutError("condition not met")
            await asyncio.sleep(0.002)
        return time.perf_counter() - t0

    from gpudash.tui.screens.fleet_view import FleetView

    said = FleetView._status

    def status_then_paint(view, text: str) -> None:
        """The tab's first status line, timed once the screen refresh after it has run (its first paint)."""
        said(view, text)
        if "status_set" not in found:
            found["status_set"] = time.perf_counter()
            view.call_after_refresh(lambda: found.setdefault("painted", time.perf_counter()))

    FleetView._status = status_then_paint  # type: ignore[method-assign]

    async def watch() -> None:
        app = create_app(discover(replay=str(DGX)), config, add_torch_view=lambda machine: None)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause(3.0)  # the dashboard's own start over (measured apart: benchmarks/tui_startup.py)
            t0 = time.perf_counter()
            await pilot.press("f")  # returns once the app is idle again, which a running round delays
            status = lambda: str(app.query_one("#fleet-status").render())  # noqa: E731
            await until(pilot, lambda: "painted" in found, 30)
            found["first_paint_s"] = found["painted"] - t0
            await until(pilot, lambda: f"{hosts} hosts" in status(), 120)
            found["first_round_s"] = time.perf_counter() - t0
            table = app.query_one("#fleet-table", FleetTable)
            table.focus()
            waits, at = [], []
            shown = time.perf_counter()
            for i in range(presses):
                before = table.cursor_row
                key = "down" if i % 40 < 20 else "up"
                t1 = time.perf_counter()
                if pilot_keys:
                    await pilot.press(key)
                    await until(pilot, lambda before=before: table.cursor_row != before, 10)
                else:  # the key as a terminal's reaches the app (pilot.press's event, without its idle waits)
                    event = events.Key(key, None)
                    event.set_sender(app)
                    app._driver.send_message(event)
                    await until(pilot, lambda before=before: table.cursor_row != before, 10)
                    painted: list[float] = []
                    app.call_after_refresh(lambda painted=painted: painted.append(time.perf_counter()))
                    await until(pilot, lambda painted=painted: bool(painted), 10)
                waits.append(time.perf_counter() - t1)
                at.append(t1 - shown)
                await asyncio.sleep(0.2)
            found["keys_s"], found["key_at_s"] = waits, at
            found["rounds_seen"] = status()

    asyncio.run(watch())
    return found


def prometheus_scale(hosts: int, seconds: float, presses: int, interval: float = 0.0, pilot_keys: bool = False) -> int:
    sim, url, series = simulate_prometheus(hosts)
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--engine", url, "--seconds", str(seconds), "--interval", str(interval)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        e = json.loads(out.stdout.strip().splitlines()[-1])
        rounds = e["rounds"]
        took = sorted(r["took_s"] for r in rounds)
        late = sum(1 for r in rounds if r["took_s"] > r["interval"])
        print(f"4. {hosts} hosts x 8 GPUs through the Prometheus API (simulated: {series} series, dcgm-exporter's "
              f"and gpudash's; one instant query per metric name, the batch ones once a minute): {len(rounds)} "
              f"rounds every {min(r['interval'] for r in rounds):g}-{max(r['interval'] for r in rounds):g} s "
              f"(the last {e['interval']:g} s) over {seconds:g} s: round median {statistics.median(took):.2f} s, "
              f"max {took[-1]:.2f} s (first {e['first']['took_s']:.2f} s), {late} over the interval, "
              f"{rounds[-1]['up']} up / {rounds[-1]['devices']} devices in the last round; engine CPU "
              f"{e['cpu_pct']:.1f} % of a core over {e['window_s']:.0f} s after the first round "
              f"(goal 5 %: {'met' if e['cpu_pct'] <= 5 else 'NOT met'}); RSS last {mib(e['rss'][-1])}")  # fmt: skip
        if presses:
            t = fleet_tab_prometheus(url, hosts, presses, pilot_keys)
            keys = sorted(t["keys_s"])
            p = lambda q: keys[min(len(keys) - 1, int(q * len(keys)))] * 1000  # noqa: E731
            over = sum(1 for k in keys if k > 0.1)
            print(f"   Fleet tab (headless driver, 160x50): first paint {t['first_paint_s'] * 1000:.0f} ms after "
                  f"the key (goal 1 s: {'met' if t['first_paint_s'] <= 1 else 'NOT met'}), first round on screen "
                  f"{t['first_round_s']:.2f} s; {len(keys)} cursor keys 0.2 s apart while rounds run "
                  f"({'through pilot.press, to the cursor moved' if pilot_keys else 'key event to the repaint after the cursor moved'}): median "
                  f"{p(0.5):.0f} ms, p90 {p(0.9):.0f} ms, max {keys[-1] * 1000:.0f} ms, {over} over 100 ms")  # fmt: skip
            slow = [(round(a, 1), round(k * 1000)) for a, k in zip(t["key_at_s"], t["keys_s"]) if k > 0.1]
            if slow:
                print(f"   keys over 100 ms (s after the first round on screen, ms): {slow}")
    finally:
        sim.stdin.close()
        sim.wait(timeout=30)
    return 0


def heap_only(hosts: int, seconds: float) -> int:
    sim, ports = simulate(hosts)
    try:
        hostfile = Path(tempfile.mkdtemp(prefix="gpudash-bench-")) / "hosts"
        hostfile.write_text("".join(f"127.0.0.1:{p}\n" for p in ports))
        out = subprocess.run(
            [sys.executable, __file__, "--engine", str(hostfile), "--seconds", str(seconds), "--interval", "1",
             "--heap"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    finally:
        sim.stdin.close()
        sim.wait(timeout=30)
    e = json.loads(out.stdout.strip().splitlines()[-1])
    heap, rss = e["heap"], e["rss"]
    marks = sorted({min(len(heap) - 1, round(i * (len(heap) - 1) / 6)) for i in range(7)})
    print(f"fleet engine under tracemalloc, {hosts} hosts, {len(heap)} rounds 1 s apart over {seconds:g} s:")
    print("   Python heap after round: " + ", ".join(f"{i + 1}: {mib(heap[i])}" for i in marks))
    print("   RSS after round:         " + ", ".join(f"{i + 1}: {mib(rss[i])}" for i in marks))
    return 0


def fleet_tab_in_process(hosts: int, seconds: float, every: float, sample) -> None:
    """The Fleet tab in-process (Textual's headless test driver) over `hosts` simulated hosts, rounds 1 s apart
    (six times the real pace), calling `sample(elapsed seconds)` every `every` seconds for `seconds`."""
    import asyncio

    from gpudash.config import defaults
    from gpudash.devices import discover
    from gpudash.tui.app import create_app

    sim, ports = simulate(hosts)
    config = defaults()
    config["fleet"]["hosts"] = [f"127.0.0.1:{p}" for p in ports]
    config["fleet"]["interval"] = 1.0

    async def watch() -> None:
        app = create_app(discover(replay=str(DGX)), config, add_torch_view=lambda machine: None)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.press("f")
            start = time.monotonic()
            while time.monotonic() - start < seconds:
                await pilot.pause(every)
                sample(time.monotonic() - start)

    try:
        asyncio.run(watch())
    finally:
        sim.stdin.close()
        sim.wait(timeout=30)


def tui_heap(hosts: int, seconds: float) -> int:
    """The Fleet tab in-process, rounds 1 s apart, under tracemalloc."""
    import tracemalloc

    tracemalloc.start()
    me = psutil.Process()
    points: list[tuple[float, int, int]] = []
    fleet_tab_in_process(
        hosts,
        seconds,
        seconds / 12,
        lambda t: points.append((t, tracemalloc.get_traced_memory()[0], me.memory_info().rss)),
    )
    print(f"Fleet tab (headless driver) under tracemalloc, {hosts} hosts, rounds 1 s apart, {seconds:g} s:")
    print("   Python heap: " + ", ".join(f"{t:.0f} s {mib(h)}" for t, h, _ in points[::2]))
    print("   RSS:         " + ", ".join(f"{t:.0f} s {mib(r)}" for t, _, r in points[::2]))
    return 0


def pymalloc_arenas() -> str:
    """How many 1 MiB arenas Python's small-object allocator holds now (sys._debugmallocstats, written to the C
    stderr, read back from a temporary file)."""
    import re

    fd, path = tempfile.mkstemp()
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
    text = Path(path).read_text()
    os.unlink(path)
    found = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    return found.group(1) if found else "?"


def rss_by_mapping() -> str:
    """The process's resident memory by where it lives (/proc/self/smaps through psutil): the main heap, thread
    stacks (anonymous 8 MiB mappings, the default stack size), glibc's per-thread malloc arenas (64 MiB-aligned
    anonymous mappings), other anonymous memory (pymalloc's arenas, large blocks) and mapped files."""
    stack_size = resource.getrlimit(resource.RLIMIT_STACK)[0]
    kinds = dict.fromkeys(("heap", "stacks", "malloc arenas", "other anon", "files"), 0)
    for region in psutil.Process().memory_maps(grouped=False):
        start, end = (int(x, 16) for x in region.addr.split("-"))
        if region.path == "[heap]":
            kind = "heap"
        elif region.path and not region.path.startswith("["):
            kind = "files"
        elif start % (64 * 2**20) == 0:  # a thread arena's heap starts on a 64 MiB boundary
            kind = "malloc arenas"
        elif end - start == stack_size:
            kind = "stacks"
        else:
            kind = "other anon"
        kinds[kind] += region.rss
    return ", ".join(f"{k} {mib(v)}" for k, v in kinds.items())


def tui_rss(hosts: int, seconds: float, trim: bool) -> int:
    """The Fleet tab in-process, rounds 1 s apart, without tracemalloc: every 20 s its RSS, the small-object
    allocator's arenas and the count of Python objects the collector tracks; with `trim`, glibc's malloc_trim(0)
    after every round (memory the C allocator holds free goes back to the system)."""
    import ctypes
    import gc

    from gpudash.tui.screens import fleet_view

    if trim:
        libc, landed = ctypes.CDLL("libc.so.6"), fleet_view.FleetView._landed

        def trimmed(view, fleet):
            landed(view, fleet)
            libc.malloc_trim(0)

        fleet_view.FleetView._landed = trimmed  # type: ignore[method-assign]
    me = psutil.Process()
    print(f"Fleet tab (headless driver), {hosts} hosts, rounds 1 s apart, {seconds:g} s"
          f"{', malloc_trim after every round' if trim else ''}; MALLOC_ARENA_MAX="
          f"{os.environ.get('MALLOC_ARENA_MAX', 'unset')}", flush=True)  # fmt: skip

    def sample(t: float) -> None:
        print(f"   {t:5.0f} s  RSS {mib(me.memory_info().rss)}  pymalloc arenas {pymalloc_arenas()}  "
              f"objects {len(gc.get_objects())}\n          {rss_by_mapping()}", flush=True)  # fmt: skip

    fleet_tab_in_process(hosts, seconds, 20.0, sample)
    return 0


def tui_cpu(hosts: int, seconds: float) -> int:
    """The Fleet tab in-process, rounds 1 s apart: the CPU of each thread over `seconds` after the first 10 s
    (the UI thread draws the table; fleet-io sends the requests and parses the answers)."""
    import threading

    me = psutil.Process()
    marks: dict[str, tuple[float, dict[int, float]]] = {}

    def by_thread() -> dict[int, float]:
        return {t.id: t.user_time + t.system_time for t in me.threads()}

    names: dict[int | None, str] = {}

    def sample(t: float) -> None:
        names.update({t.native_id: t.name for t in threading.enumerate()})  # while the fleet's threads live
        if t >= 10 and "start" not in marks:
            marks["start"] = (t, by_thread())
        marks["end"] = (t, by_thread())

    fleet_tab_in_process(hosts, seconds + 10, 2.0, sample)
    (t0, c0), (t1, c1) = marks["start"], marks["end"]
    if "fleet-io" not in names.values():
        print("the fleet's request thread never ran: the Fleet tab did not start reading; run it again")
        return 1
    names[threading.main_thread().native_id] = "UI (Textual's event loop)"
    print(f"Fleet tab (headless driver), {hosts} hosts, rounds 1 s apart: CPU over {t1 - t0:.0f} s, "
          f"{100 * (sum(c1.values()) - sum(c0.get(k, 0.0) for k in c1)) / (t1 - t0):.1f} % of a core in all")  # fmt: skip
    for tid, cpu in sorted(c1.items(), key=lambda kv: -(kv[1] - c0.get(kv[0], 0.0))):
        used = cpu - c0.get(tid, 0.0)
        if used >= 0.01 * (t1 - t0) / 100:
            print(f"   {names.get(tid, f'thread {tid}')}: {100 * used / (t1 - t0):.1f} % of a core")
    return 0


def tui_only(hosts: int, seconds: float, every: float) -> int:
    print(f"the dashboard's Fleet tab over {hosts} simulated hosts x 8 GPUs for {seconds:g} s: "
          f"{platform.machine()}, {psutil.cpu_count()} logical CPUs, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)  # fmt: skip
    sim, ports = simulate(hosts)
    try:
        t = tui(ports, seconds, every)
    finally:
        sim.stdin.close()
        sim.wait(timeout=30)
    series = t["rss_series"]
    settled = [r for s, r in series if s >= min(600.0, seconds / 2)]  # after the history rings filled
    print(f"CPU {t['cpu_pct']:.2f} % of a core over {t['window_s']:.0f} s; RSS {mib(t['rss_start'])} at the start, "
          f"{mib(t['rss_end'])} at the end; from {min(600.0, seconds / 2):.0f} s on: min {mib(min(settled))}, "
          f"max {mib(max(settled))}; load average {os.getloadavg()[0]:.2f} at the end")  # fmt: skip
    return 0


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long the engine runs rounds")
    parser.add_argument("--tui-seconds", type=float, default=300.0, help="how long the Fleet tab is measured")
    parser.add_argument("--scrapes", type=int, default=300)
    parser.add_argument(
        "--heap-seconds",
        type=float,
        default=0.0,
        help="only: rounds back to back (1 s apart) for this long under tracemalloc, the Python heap over time",
    )
    parser.add_argument(
        "--tui-heap-seconds",
        type=float,
        default=0.0,
        help="only: the Fleet tab in-process, rounds 1 s apart, for this long under tracemalloc",
    )
    parser.add_argument(
        "--tui-rss-seconds",
        type=float,
        default=0.0,
        help="only: the Fleet tab in-process, rounds 1 s apart, for this long: RSS, allocator arenas, objects",
    )
    parser.add_argument(
        "--tui-cpu-seconds",
        type=float,
        default=0.0,
        help="only: the Fleet tab in-process, rounds 1 s apart, for this long: the CPU of each thread",
    )
    parser.add_argument("--malloc-trim", action="store_true", help="with --tui-rss-seconds: malloc_trim each round")
    parser.add_argument(
        "--tui-only",
        action="store_true",
        help="only part 3, the Fleet tab for --tui-seconds, with its RSS every --every seconds",
    )
    parser.add_argument("--every", type=float, default=300.0, help="with --tui-only: seconds between RSS lines")
    parser.add_argument(
        "--keep-alive",
        action="store_true",
        help="the simulated exporters keep connections open, as Go's net/http does (dcgm-exporter); "
        "by default they are `gpudash serve`'s endpoint, which closes each",
    )
    parser.add_argument(
        "--prometheus-hosts",
        type=int,
        default=0,
        help="only part 4: this many 8-GPU hosts through a simulated Prometheus API, the engine for --seconds "
        "and the Fleet tab's first paint and --key-presses cursor keys",
    )
    parser.add_argument("--key-presses", type=int, default=100, help="with --prometheus-hosts (0: no Fleet tab)")
    parser.add_argument(
        "--pilot-keys", action="store_true",
        help="with --key-presses: each key through pilot.press, which also waits for the process to go idle (the "
        "figures before issue 26's key fix were measured so)",
    )  # fmt: skip
    parser.add_argument("--engine", metavar="PORTS_FILE", help=argparse.SUPPRESS)
    parser.add_argument(
        "--interval",
        type=float,
        default=0.0,
        help="with --prometheus-hosts: seconds between rounds (as fleet.interval)",
    )
    parser.add_argument("--heap", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        engine(args.engine, args.seconds, args.interval, args.heap)
        return 0
    if args.prometheus_hosts:
        return prometheus_scale(args.prometheus_hosts, args.seconds, args.key_presses, args.interval, args.pilot_keys)
    if args.heap_seconds:
        return heap_only(args.hosts, args.heap_seconds)
    if args.tui_heap_seconds:
        return tui_heap(args.hosts, args.tui_heap_seconds)
    if args.tui_cpu_seconds:
        return tui_cpu(args.hosts, args.tui_cpu_seconds)
    if args.tui_rss_seconds:
        return tui_rss(args.hosts, args.tui_rss_seconds, args.malloc_trim)
    if args.tui_only:
        return tui_only(args.hosts, args.tui_seconds, args.every)

    print(f"gpudash fleet at scale: {platform.machine()}, {psutil.cpu_count()} logical CPUs, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f} at the start")  # fmt: skip
    s = scrape_timing(args.scrapes)
    print(f"1. one scrape of the replayed 8-GPU node with remembered results ({s['samples']} samples, "
          f"{s['bytes'] / 1024:.0f} KiB): median {s['median_ms']:.2f} ms, p95 {s['p95_ms']:.2f} ms, "
          f"max {s['max_ms']:.2f} ms over {s['scrapes']} scrapes (cold first scrape {s['cold_ms']:.1f} ms); "
          f"goal 10 ms: p95 {'met' if s['p95_ms'] <= 10 else 'NOT met'}, "
          f"slowest {'met' if s['max_ms'] <= 10 else 'NOT met'}")  # fmt: skip

    sim, ports = simulate(args.hosts, args.keep_alive)
    sim_proc = psutil.Process(sim.pid)
    try:
        hostfile = Path(tempfile.mkdtemp(prefix="gpudash-bench-")) / "hosts"
        hostfile.write_text("".join(f"127.0.0.1:{p}\n" for p in ports))
        sim_cpu0, sim_t0 = sim_proc.cpu_times(), time.monotonic()
        out = subprocess.run(
            [sys.executable, __file__, "--engine", str(hostfile), "--seconds", str(args.seconds)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        sim_cpu1, sim_t1 = sim_proc.cpu_times(), time.monotonic()
        e = json.loads(out.stdout.strip().splitlines()[-1])
        rounds, rss = e["rounds"], e["rss"]
        took = sorted(r["took_s"] for r in rounds)
        late = sum(1 for r in rounds if r["took_s"] > r["interval"])
        dropped = sum(r["dropped"] for r in rounds)
        steady = rss[len(rss) // 10 :] or rss
        sim_pct = 100 * ((sim_cpu1.user - sim_cpu0.user) + (sim_cpu1.system - sim_cpu0.system)) / (sim_t1 - sim_t0)
        print(f"2. fleet engine, {args.hosts} hosts x 8 GPUs on loopback, {len(rounds)} rounds every "
              f"{e['interval']:g} s over {args.seconds:g} s: round median {statistics.median(took) * 1000:.0f} ms, "
              f"max {took[-1] * 1000:.0f} ms, {late} over the interval, {dropped} host-rounds dropped, "
              f"{rounds[-1]['up']} up / {rounds[-1]['devices']} devices in the last round; "
              f"CPU {e['cpu_pct']:.2f} % of a core over {e['window_s']:.0f} s after the first round "
              f"(first round {e['first']['took_s'] * 1000:.0f} ms); RSS after round 1 {mib(rss[0])}, "
              f"min/max from the 10% mark on {mib(min(steady))} / {mib(max(steady))}, last {mib(rss[-1])}; "
              f"the {args.hosts} simulated exporters used {sim_pct:.1f} % of a core meanwhile; "
              f"{e['opened']} connections opened, the exporters "
              f"{'keeping' if args.keep_alive else 'closing'} them")  # fmt: skip
        marks = sorted({min(len(rss) - 1, round(i * (len(rss) - 1) / 6)) for i in range(7)})
        print("   engine RSS over time: " + ", ".join(
            f"{i * e['interval'] / 60:.0f} min {mib(rss[i])}" for i in marks))  # fmt: skip
        if args.tui_seconds > 0:
            t = tui(ports, args.tui_seconds)
            print(f"3. the dashboard's Fleet tab over the same {args.hosts} hosts, {t['window_s']:.0f} s after the "
                  f"first full round: CPU {t['cpu_pct']:.2f} % of a core; RSS {mib(t['rss_start'])} at the start "
                  f"of the window, {mib(t['rss_end'])} at its end")  # fmt: skip
    finally:
        sim.stdin.close()
        sim.wait(timeout=30)
    print(f"load average {os.getloadavg()[0]:.2f} at the end; resource max RSS of this script "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
