"""`gpudash info` as text: every field gpustat and nvitop show, n/a with its reason, MIG instances as rows, the
process table, and a layout that fits the terminal (one line per GPU at any width, as gpustat; COLUMNS in a pipe)."""

import re
import sys

import pytest
from conftest import H100, MI300X
from fakes import GONE_PID, load_example, make_fake_amdsmi, make_fake_pynvml, real_pynvml

from gpudash.actions.info import info
from gpudash.actions.session import Session
from gpudash.cli import main
from gpudash.render.info import elapsed, key_ranges, render

REPO_SNAPSHOTS = "examples/snapshots"


def text(monkeypatch, capsys, devices, *args, amd=None, **fake):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, **fake))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi(amd) if amd else None)
    assert main(["info", *args]) == 0
    return capsys.readouterr().out


def row(out, key):
    return next(line for line in out.splitlines() if line.startswith(f"[{key}]"))


def cells(out, key):
    """A device row as {column: text}, read by the header's column positions."""
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("device ") and " temp " in line)
    names = header.split()
    starts = [header.index(f" {n}") + 1 if i else 0 for i, n in enumerate(names)]
    line = row(out, key)
    return {
        n: line[s : (starts[i + 1] if i + 1 < len(starts) else None)].strip()
        for i, (n, s) in enumerate(zip(names, starts))
    }


def test_every_reading_in_one_row(monkeypatch, capsys):
    sample = dict(
        H100["samples"][0],
        fan_speed_pct=55,
        encoder_utilization_pct=9,
        decoder_utilization_pct=3,
        performance_state="P2",
        power_limit_w=650.0,
        mig_mode="disabled",
    )
    out = text(monkeypatch, capsys, [dict(H100, samples=[sample])], cuda=12040)
    assert "driver 550.54.15" in out.splitlines()[0] and "CUDA driver 12.4" in out.splitlines()[0]
    gpu = cells(out, "nvidia:0")
    assert gpu == {
        "device": "[nvidia:0]",
        "name": "NVIDIA H100 80GB HBM3",
        "arch": "Hopper 9.0",
        "temp": "41C",
        "fan": "55%",
        "perf": "P2",
        "util": "35%",
        "enc": "9%",
        "dec": "3%",
        "power": "180 / 650 W",
        "memory": "1.0 / 79.6 GiB",
        "native": "fp64 fp32 tf32 fp16 bf16 fp8 int8",
    }
    cpu = cells(out, "cpu:0")  # nothing a CPU has no such thing for: blank, not n/a
    assert (cpu["fan"], cpu["perf"], cpu["enc"], cpu["dec"]) == ("", "", "", "")


@pytest.mark.parametrize(
    "field, column, word",
    [
        ("fan_speed_pct", "fan", "fan"),
        ("temperature_c", "temp", "temp"),
        ("utilization_pct", "util", "util"),
        ("encoder_utilization_pct", "enc", "enc"),
        ("performance_state", "perf", "perf"),
        ("power_w", "power", "power"),
    ],
)
def test_a_field_the_driver_cannot_give_is_na_with_its_reason(monkeypatch, capsys, field, column, word):
    from fakes import FIELD_CALLS

    errors = {(0, FIELD_CALLS[field]): real_pynvml.NVMLError_NotSupported()}
    out = text(monkeypatch, capsys, [dict(H100, samples=[dict(H100["samples"][0], fan_speed_pct=20)])], errors=errors)
    assert cells(out, "nvidia:0")[column].startswith("n/a")
    assert f"n/a: {word} on nvidia:0: NotSupported" in out.splitlines()


def test_amd_fields_nvml_alone_has_say_why(monkeypatch, capsys):
    out = text(monkeypatch, capsys, [], amd=[MI300X], init_error=real_pynvml.NVMLError_LibraryNotFound())
    gpu = cells(out, "amd:0")
    assert (gpu["arch"], gpu["perf"], gpu["enc"], gpu["dec"]) == ("CDNA3 gfx942", "n/a", "n/a", "n/a")
    lines = out.splitlines()
    assert "n/a: perf on amd:0: NVIDIA only (P-states)" in lines
    assert any(line.startswith("n/a: enc on amd:0: amdsmi reports one multimedia activity") for line in lines)


def test_mig_instances_are_rows_and_their_processes_are_listed_under_them(monkeypatch, capsys):
    out = text(monkeypatch, capsys, load_example("dgx-h100-8gpu.json")["devices"], "--show-uuid")
    lines = out.splitlines()
    at = lines.index(row(out, "nvidia:7"))
    migs = [line for line in lines[at + 1 : at + 12] if line.lstrip().startswith("└ mig")]
    assert [m.split()[2] for m in migs] == ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]
    assert "29.7 / 39.5 GiB" in migs[0] and "GI 2 CI 0" in migs[0]
    assert any("MIG-d87d8248-9cec-57ca-bba9-0f10fc256dbe" in line for line in lines[at:])
    processes = [line.split() for line in lines if line.startswith("nvidia:7/mig")]
    assert [(p[0], p[1]) for p in processes] == [
        ("nvidia:7/mig0", "88140"),
        ("nvidia:7/mig2", "90007"),
        ("nvidia:7/mig3", "90311"),
    ]
    assert "n/a: util on nvidia:7: NotSupported" in lines
    graphics = next(line.split() for line in lines if line.startswith("nvidia:0 ") and " G " in line)
    assert graphics[1] == "2871"  # Xorg, a graphics process, listed


def test_process_table_has_nvitops_columns(monkeypatch, capsys):
    import os

    me = {"pid": os.getpid(), "memory_used_bytes": 3 * 2**30, "type": "C+G", "utilization_pct": 71}
    gone = {"pid": GONE_PID, "memory_used_bytes": 5 * 2**20}
    out = text(monkeypatch, capsys, [dict(H100, samples=[dict(H100["samples"][0], processes=[me, gone])])])
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("device ") and " pid " in line)
    assert header.split() == [
        "device",
        "pid",
        "type",
        "user",
        "gpu",
        "mem",
        "sm",
        "cpu",
        "host",
        "mem",
        "time",
        "command",
    ]
    mine = next(line for line in lines if line.startswith("nvidia:0") and f" {os.getpid()} " in line)
    assert " C+G " in mine and " 3.0 GiB " in mine and " 71% " in mine and "python" in mine  # this process
    theirs = next(line.split() for line in lines if line.startswith("nvidia:0") and f" {GONE_PID} " in line)
    assert theirs[2:6] == ["C", "n/a", "5", "MiB"]  # gone from the host: the driver's fields only
    assert any(
        line.startswith("n/a: process user, cpu, host mem, time, command of 1 process: no such process")
        for line in lines
    )
    assert "n/a: process cpu of 1 process: needs a second reading" in lines  # one reading: no CPU% yet


def test_show_all_adds_what_nvitop_shows_besides(monkeypatch, capsys):
    out = text(monkeypatch, capsys, [dict(H100, samples=[dict(H100["samples"][0], mig_mode="disabled")])], "-a")
    detail = out.splitlines()[out.splitlines().index(row(out, "nvidia:0")) + 1].split()
    assert detail[0] == H100["uuid"]
    joined = " ".join(detail)
    for part in (
        "bus 00000000:17:00.0",
        "persistence enabled",
        "display off",
        "compute default",
        "uncorrected ECC 0",
        "MIG disabled",
    ):
        assert part in joined, part


def test_lost_gpu_row_says_lost_and_why(monkeypatch, capsys):
    second = dict(H100, index=1, uuid="GPU-2", pci_bus_id="00000000:18:00.0")
    out = text(monkeypatch, capsys, [H100, second], errors={(1, "handle"): real_pynvml.NVMLError_GpuIsLost()})
    lost = row(out, "nvidia:1")
    assert "lost (GpuIsLost)" in lost and "GPU lost: GpuIsLost: the GPU has fallen off the bus" in lost
    assert not any(line.startswith("n/a:") and "nvidia:1" in line for line in out.splitlines())  # the row says it


def replayed(name):
    return info(Session.load(replay=f"{REPO_SNAPSHOTS}/{name}"))


@pytest.mark.parametrize(
    "name, width", [("dgx-h100-8gpu.json", 80), ("dgx2-v100-16gpu.json", 80), ("dgx-h100-8gpu.json", 120)]
)
def test_a_narrow_terminal_gets_one_line_a_gpu_and_nothing_wider_than_itself(name, width):
    data = replayed(name)
    lines = render(data, width=width).splitlines()
    assert all(len(line) <= width for line in lines)
    gpu_rows = [line for line in lines if line.startswith("[nvidia:")]
    assert len(gpu_rows) == len(data["devices"])
    for line in gpu_rows:  # gpustat's density: the readings on the device's own line, the next is another row
        assert re.search(r" \d+C +n/a +P0 +(\d+%|n/a) ", line), line
        following = lines[lines.index(line) + 1]
        assert following.startswith(("[nvidia:", "  └ mig", "+ left out")), following


# The fake 8-GPU NVML (the DGX H100 example's devices served by the fake pynvml), as a user runs it in a pipe.
@pytest.mark.parametrize(
    ("columns", "left_out", "header"),
    [
        ("80", "arch, native, enc, dec", ["device", "name", "temp", "fan", "perf", "util", "power", "memory"]),
        ("120", "arch", ["device", "name", "temp", "fan", "perf", "util", "enc", "dec", "power", "memory", "native"]),
    ],
)
def test_info_in_a_pipe_honours_columns_one_line_a_gpu(monkeypatch, capsys, columns, left_out, header):
    monkeypatch.setenv("COLUMNS", columns)
    out = text(monkeypatch, capsys, load_example("dgx-h100-8gpu.json")["devices"])
    lines = out.splitlines()
    assert all(len(line) <= int(columns) for line in lines), max(lines, key=len)
    table = lines.index(next(line for line in lines if line.startswith("device ")))
    assert lines[table].split() == header
    rows = lines[table + 1 : table + 9]
    assert [r.split()[0] for r in rows] == [f"[nvidia:{i}]" for i in range(8)]  # eight lines, eight GPUs
    assert rows[4].split()[1:4] == ["H100", "80GB", "HBM3"]  # the name without NVIDIA, the key says it
    assert re.search(r" \d+/700W +\d+\.\d/79\.6GiB", rows[4]), rows[4]  # short forms, meaning kept
    assert f"+ left out at {columns} columns: {left_out} (widen, set COLUMNS, or --json)" in lines
    # Sentences wrap at spaces rather than lose their end: the driver versions are all there.
    header_text = " ".join(line.strip() for line in lines[:table])
    assert "driver 550.54.15" in header_text and "CUDA driver 12.4" in header_text


def test_info_in_a_pipe_without_columns_keeps_everything(monkeypatch, capsys):
    monkeypatch.delenv("COLUMNS", raising=False)
    out = text(monkeypatch, capsys, load_example("dgx-h100-8gpu.json")["devices"])
    assert "left out" not in out and "…" not in out
    assert next(line for line in out.splitlines() if line.startswith("device ")).split()[-1] == "native"
    monkeypatch.setenv("COLUMNS", "not a number")  # ignored, as shells leave it
    assert text(monkeypatch, capsys, load_example("dgx-h100-8gpu.json")["devices"]).count("left out") == 0


def test_a_wide_terminal_or_a_pipe_gets_one_line_a_gpu():
    data = replayed("dgx2-v100-16gpu.json")
    for out in (render(data), render(data, width=160)):
        lines = out.splitlines()
        assert next(line for line in lines if line.startswith("device ")).split()[:4] == [
            "device",
            "name",
            "arch",
            "temp",
        ]
        gpu_rows = [line for line in lines if line.startswith("[nvidia:")]
        assert len(gpu_rows) == 16 and all(re.search(r"\d+C ", line) for line in gpu_rows)
    assert all(len(line) <= 160 for line in render(data, width=160).splitlines())


def test_colour_marks_load_and_stays_out_of_alignment():
    data = replayed("dgx-h100-8gpu.json")
    plain, coloured = render(data, when=0), render(data, when=0, color=True)
    assert "\x1b[" not in plain and "\x1b[" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain  # same text, same columns
    busy = next(line for line in coloured.splitlines() if line.startswith("\x1b[1;36m[nvidia:4]"))
    assert "\x1b[31m88%\x1b[0m" in busy  # heavy load in red (nvitop's 75% threshold)


def test_small_pieces():
    assert key_ranges([{"vendor": "nvidia", "index": i} for i in (0, 1, 2, 5, 7, 6)]) == "nvidia:0-2,5-7"
    assert (elapsed(65), elapsed(3 * 3600 + 5), elapsed(4 * 86400 + 3600)) == ("1:05", "3:00:05", "4d 01h")


def test_text_from_a_driver_or_a_snapshot_cannot_drive_the_terminal(tmp_path, capsys):
    import json

    from conftest import snapshot_dict

    hostile = dict(
        H100,
        name="GPU\x1b[2J\x1b]0;owned\x07",
        samples=[dict(H100["samples"][0], unavailable={"power_w": "x\x1b[31m"})],
    )
    snap = snapshot_dict(hostile)
    snap["host"]["hostname"] = "node\x1b[H"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(snap))
    assert main(["--replay", str(path), "info"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "GPU\\x1b[2J\\x1b]0;owned\\x07" in out and out.startswith("node\\x1b[H")


@pytest.mark.parametrize(
    ("example", "last", "mamf"), [("dgx-h100-8gpu.json", "[nvidia:7]", True), ("rtx-3060.json", "[nvidia:0]", False)]
)
def test_info_on_an_nvidia_machine_imports_neither_torch_nor_the_peak_tables(example, last, mamf):
    """The text is drawn from the vendor library alone: no torch (seconds on a GPU machine), no Textual, and
    no amdsmi on a machine without the amdgpu driver; it still names torch's version, read from its files. The
    peak tables load only for a device whose name may be a part with a published MAMF (knowledge/mamf.py: the
    part is identified by the tables' matching; about 9 ms on the 8-GPU replay)."""
    import os
    import subprocess
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(tests)!r})\n"
        "from fakes import load_example, make_fake_pynvml\n"
        f"sys.modules['pynvml'] = make_fake_pynvml(load_example({example!r})['devices'])\n"
        "from gpudash.cli import main\n"
        "code = main(['info'])\n"
        "from gpudash.devices.gpu_presence import amd_driver_loaded\n"
        "heavy = ('torch', 'textual', 'gpudash.knowledge.peaks') + (() if amd_driver_loaded() else ('amdsmi',))\n"
        "print('LOADED', [m for m in heavy if m in sys.modules], file=sys.stderr)\n"
        "raise SystemExit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_REPLAY"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, cwd=tests)
    assert res.returncode == 0, res.stderr
    assert ("LOADED ['gpudash.knowledge.peaks']" if mamf else "LOADED []") in res.stderr
    assert ("MAMF on nvidia:0-7: " in res.stdout) is mamf
    assert last in res.stdout and " torch 2." in res.stdout.splitlines()[0]
