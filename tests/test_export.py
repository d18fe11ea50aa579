"""`gpudash export`: the file's shape (gpudash/contracts/export.schema.json), TOML = JSON, atomic writing, messages,
bad input, replayed exports, and `--bench none` on the live CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest

from gpudash import fileio
from gpudash.actions.export import write_export
from gpudash.cli import main
from gpudash.devices import discover
from gpudash.errors import EXIT_FAILED, GpudashError
from gpudash.knowledge import arch_for
from gpudash.models import DeviceInfo
from gpudash.recommend import facts_for, recommend
from gpudash.render.export import render
from gpudash.render.toml import render as render_toml

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = REPO / "examples" / "snapshots"
H100 = str(SNAPSHOTS / "h100-80gb.json")

CONTRACT = {
    "gpudash": {"version", "generated", "device", "replayed"},
    "amp": {"dtype", "loss_scaling", "lightning_precision", "accelerate_mixed_precision", "tf32", "hf_trainer"},
    "fp8": {"available", "verified", "transformer_engine", "torchao"},
    "batch": {"size", "gradient_accumulation_steps", "effective", "method"},
    "dataloader": {"num_workers", "pin_memory"},
    "env": set(),
    "reasons": set(),
    "provenance": set(),
}


def export(tmp_path, *args, name="out.toml") -> tuple[int, Path]:
    path = tmp_path / name
    code = main([*args, "-o", str(path)])
    return code, path


def leaves(tree: dict, prefix: str = "") -> set[str]:
    out = set()
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        out |= leaves(value, dotted + ".") if isinstance(value, dict) else {dotted}
    return out


def test_contract_keys_and_reasons(tmp_path, capsys):
    code, path = export(tmp_path, "--replay", H100, "export", "--bench", "none")
    assert code == 0
    tree = tomllib.loads(path.read_text())
    for table, keys in CONTRACT.items():
        assert keys <= set(tree[table]), (table, keys - set(tree[table]))
    assert tree["amp"]["hf_trainer"] == {"bf16": True, "fp16": False, "tf32": True}
    assert tree["gpudash"]["version"] == 1
    values = {k for k in leaves({t: v for t, v in tree.items() if t not in ("gpudash", "reasons", "provenance")})}
    assert values <= set(tree["reasons"]) and values <= set(tree["provenance"])  # every value explained
    assert set(tree["provenance"].values()) <= {"measured", "spec", "replayed", "estimated"}
    text = path.read_text()
    assert 'dtype = "bfloat16"  # spec: bf16 native on Hopper' in text  # reason beside the value


def test_toml_and_json_give_the_same_tree(tmp_path):
    device = DeviceInfo(
        vendor="amd", index=0, name="AMD Radeon RX 5600 XT", gfx_target="gfx1010", memory_total_bytes=6 << 30
    )
    settings = recommend(facts_for(device, generated="2026-01-01T00:00:00+0000"))
    assert tomllib.loads(render(settings, "toml")) == json.loads(render(settings, "json")) == settings.to_tree()


def test_toml_writer_round_trips_awkward_values():
    tree = {
        "t": {
            "plain": "a",
            "quotes": 'say "hi" \\ back',
            "lines": "one\ntwo\tthree\r",
            "ctl": "\x01\x7f",
            "unicode": "µ 8060S — ✓",
            "int": -3,
            "big": 2**40,
            "float": 0.1,
            "bool": False,
            "list": ["x", 1, 2.5, True],
            "dotted.key": "quoted key",
            "sub": {"deep": {"x": 1}},
        },
        "empty": {},
    }
    text = render_toml(tree, comments={"t.plain": "a comment\nwith a newline", "t.int": "# hash"})
    assert tomllib.loads(text) == tree


def test_cli_stdout_toml_and_json(capsys):
    assert main(["--replay", H100, "export", "--bench", "none", "-o", "-"]) == 0
    toml_tree = tomllib.loads(capsys.readouterr().out)
    assert main(["--replay", H100, "export", "--bench", "none", "--format", "json", "-o", "-"]) == 0
    captured = capsys.readouterr()
    json_tree = json.loads(captured.out)  # nothing but JSON on stdout
    for tree in (toml_tree, json_tree):
        tree["gpudash"].pop("generated")
    assert toml_tree == json_tree
    assert "exported" in captured.err


def test_says_what_it_replaced(tmp_path, capsys):
    path = tmp_path / "gpudash.toml"
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(path)]) == 0
    assert f"wrote {path}" in capsys.readouterr().err
    assert main(["--replay", str(SNAPSHOTS / "mi300x.json"), "export", "--bench", "none", "-o", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"replaced {path} (was: NVIDIA H100 80GB HBM3, generated" in err
    assert tomllib.loads(path.read_text())["gpudash"]["device"] == "AMD Instinct MI300X"
    other = tmp_path / "notes.toml"
    other.write_text("hello = 1\n")
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(other)]) == 0
    assert "it was not a gpudash export" in capsys.readouterr().err


def test_failed_write_leaves_the_old_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "gpudash.toml"
    path.write_text("old = true\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio.os, "replace", broken_replace)
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(path)]) == EXIT_FAILED
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"gpudash: error: {path}: cannot write: No space left on device"
    assert path.read_text() == "old = true\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpudash.toml"]  # no temp file left behind


def test_write_export_into_a_missing_folder_raises(tmp_path):
    settings = recommend(facts_for(DeviceInfo(vendor="cpu", index=0, name="cpu")))
    with pytest.raises(GpudashError, match="does not exist"):
        write_export(settings, str(tmp_path / "nope" / "x.toml"))


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-o", "/nonexistent-folder/x.toml"],
            "-o /nonexistent-folder/x.toml: folder /nonexistent-folder does not exist",
        ),
        (["--device", "5"], "--device '5': no such device (this machine has: nvidia:0)"),
        (["--device", "amd:3"], "--device 'amd:3': no such device"),
    ],
)
def test_bad_input_one_line_exit_2(args, message, capsys, tmp_path):
    argv = ["--replay", H100, "export", "--bench", "none", *args]
    if "-o" not in args:
        argv += ["-o", str(tmp_path / "x.toml")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"gpudash: error: {message}")


def test_output_is_a_directory(tmp_path, capsys):
    assert main(["--replay", H100, "export", "--bench", "none", "-o", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["--bench", "fast"], ["--format", "yaml"]])
def test_bad_options_are_usage_errors(args):
    with pytest.raises(SystemExit) as exc:
        main(["export", *args])
    assert exc.value.code == 2


def test_bad_config_names_the_key(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[export]\nmemory_margin = 2\n")
    assert main(["--config", str(config), "--replay", H100, "export", "--bench", "none", "-o", "-"]) == 2
    assert "export.memory_margin" in capsys.readouterr().err


def test_replayed_export_is_spec_not_verified(tmp_path):
    _code, path = export(tmp_path, "--replay", str(SNAPSHOTS / "strix-halo-8060s.json"), "export", "--bench", "none")
    tree = tomllib.loads(path.read_text())
    assert tree["gpudash"]["replayed"] is True and "replayed" in tree["gpudash"]["source"]
    assert "measured" not in tree["provenance"].values()
    assert tree["provenance"]["amp.dtype"] == "spec" and "not verified: replayed" in tree["reasons"]["amp.dtype"]
    assert tree["fp8"]["verified"] is False


@pytest.mark.parametrize("selector", ["nvidia:3", "3", "cuda:3"])
def test_device_selection_on_a_multi_gpu_snapshot(tmp_path, selector):
    code, path = export(
        tmp_path, "--replay", str(SNAPSHOTS / "dgx-h100-8gpu.json"), "export", "--bench", "none", "--device", selector
    )
    tree = tomllib.loads(path.read_text())
    assert code == 0 and tree["gpudash"]["device_key"] == "nvidia:3"


def test_bench_none_on_the_live_cpu(no_vendor_libs, tmp_path):
    code, path = export(tmp_path, "export", "--bench", "none")
    tree = tomllib.loads(path.read_text())
    assert code == 0 and tree["gpudash"]["device_type"] == "cpu" and tree["gpudash"]["replayed"] is False
    # --bench none measures nothing, and a CPU gets bf16 only when measured faster: fp32, saying why (where
    # bf16 is emulated, as on a Zen 3, the tables' answer is the reason)
    cpu = next(d for d in discover(include_torch=False).devices if d.vendor == "cpu")
    why = "not measured" if arch_for(cpu).is_native("bf16") else "bf16 is emulated"
    assert tree["amp"]["dtype"] == "float32" and why in tree["reasons"]["amp.dtype"]
    assert tree["batch"]["method"] == "estimate" and tree["batch"]["size"] >= 1
    assert tree["dataloader"]["pin_memory"] is False


def test_default_export_of_a_replayed_machine_runs_checks_and_the_trace(tmp_path, capsys):
    code, path = export(tmp_path, "--replay", str(SNAPSHOTS / "rx-5600-xt.json"), "export")
    assert code == 0
    tree = tomllib.loads(path.read_text())
    assert tree["amp"]["dtype"] == "float32" and tree["routing"]["fft"] == "cpu"
    assert tree["env"]["TORCH_BLAS_PREFER_HIPBLASLT"] == "0"
    assert tree["provenance"]["batch.activation_bytes_per_sample"] == "measured"  # traced on this CPU
    assert "measured" not in {v for k, v in tree["provenance"].items() if k.startswith("amp.")}
    assert "tracing the model's memory" in capsys.readouterr().err


def test_export_never_imports_textual(tmp_path):
    code = (
        "import sys\nfrom gpudash.cli import main\n"
        f"rc = main(['--replay', {H100!r}, 'export', '--bench', 'none', '-o', {str(tmp_path / 'x.toml')!r}])\n"
        "assert rc == 0 and 'textual' not in sys.modules, sorted(m for m in sys.modules if 'textual' in m)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GPUDASH_REPLAY"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr


def test_a_live_export_remembers_what_it_measured(no_vendor_libs, tmp_path):
    """`gpudash export` measured bf16 against fp32; a later AmpConfig.auto() sees the same and answers the same."""
    from gpudash.actions.export import export_settings
    from gpudash.actions.session import Session
    from gpudash.amp import AmpConfig
    from gpudash.config import defaults
    from gpudash.measure.bench.store import saved_runs
    from gpudash.measure.probe import remembered

    config = defaults()
    config["bench"]["case_budget_s"] = 0.2
    config["model"].update(layers=1, hidden=64, heads=2, seq_len=32, vocab=128)
    session = Session(config)
    gathered = export_settings(session, device="cpu", bench="quick")
    machine = session.machine()
    assert [doc["devices"][0]["key"] for _at, doc in saved_runs(machine)] == ["cpu:0"]  # kept as a bench run
    assert "bf16" in remembered(machine)[1]["cpu:0"].results  # and the probe
    exported = gathered.settings.get("amp.dtype")
    later = AmpConfig.auto("cpu")
    assert later.dtype_name == exported.value
    assert any(exported.reason in r for r in later.reasons)  # the same reason, from the same remembered facts


def test_a_snapshot_of_this_machine_exports_with_its_recorded_cores(no_vendor_libs, tmp_path):
    from gpudash.devices import discover
    from gpudash.record import record

    machine = discover(include_torch=True)
    cpu = next(d for d in machine.devices if d.vendor == "cpu")
    snap = tmp_path / "here.json"
    snap.write_text(json.dumps(record(machine, 0, 1)))
    code, path = export(tmp_path, "--replay", str(snap), "export", "--bench", "none")
    tree = tomllib.loads(path.read_text())
    assert code == 0 and tree["gpudash"]["replayed"] is True and tree["gpudash"]["arch"] != "CPU"
    assert tree["provenance"]["dataloader.num_workers"] == "replayed"
    assert f"{cpu.logical_cores} logical cores" in tree["reasons"]["dataloader.num_workers"]
