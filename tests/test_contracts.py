"""The JSON contracts: real command output validated against the schemas in gpudash/contracts/.

Every document gpudash writes or reads as JSON (the snapshot file, the JSON of info, probe, bench, bench
--compare, check and plugins, the export tree in TOML and JSON, the calibration profile) has a JSON Schema
there. These tests run the commands on this machine's CPU and on the replayed example snapshots, validate what
they print, check that the schemas mirror the dataclasses and readers they describe, and show that a broken
document is rejected, so a schema that stopped saying anything would fail here.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import H100, MI300X
from fakes import load_example, make_fake_amdsmi, make_fake_pynvml, real_pynvml
from jsonschema import Draft202012Validator

from gpudash import contracts
from gpudash.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "examples" / "snapshots").glob("*.json"))
EXAMPLE_IDS = [p.stem for p in EXAMPLES]
SAMPLES = Path(__file__).resolve().parent / "plugin_samples"

# A one-file plugin whose check and benchmark report figures that are not finite (NaN, inf): JSON has no
# such numbers, so gpudash must turn them into null rather than print invalid JSON or crash.
NONFINITE_PLUGIN = """
from gpudash.plugins_api import Benchmark, BenchResult, Check, hookimpl


class NanRatio(Check):
    name = "nan_ratio"
    needs_device = False

    def run(self, device):
        return self.warned("a ratio that is not a number", details={"ratio": float("nan"), "worst": [float("-inf")]})


class InfRate(Benchmark):
    name = "inf_rate"

    def run(self, device, budget_s):
        return [BenchResult("fp32", "noop", [1], float("inf"), 0.0, efficiency=float("nan"))]


@hookimpl
def register_checks(register):
    register(NanRatio())


@hookimpl
def register_benchmarks(register):
    register(InfRate())
"""


# A one-file plugin whose checks break the check contract in the small ways a hurried plugin might: a summary
# of None, an environment variable name that is not one, details that are not an object; a version that is
# not a string.
SLOPPY_PLUGIN = """
from gpudash.plugins_api import Check, CheckResult, hookimpl

__version__ = (1, 2)


class NoSummary(Check):
    name = "no_summary"
    needs_device = False

    def run(self, device):
        return CheckResult("", "", "", "pass", None, remediation=None)


class BadEnvName(Check):
    name = "bad_env_name"
    needs_device = False

    def run(self, device):
        return self.warned("set a variable", env={"NOT A NAME": "1"})


class ListDetails(Check):
    name = "list_details"
    needs_device = False

    def run(self, device):
        return CheckResult("", "", "", "pass", "fine", details=[1, 2])


@hookimpl
def register_checks(register):
    register(NoSummary(), BadEnvName(), ListDetails())
"""


# ------------------------------------------------------------------------------------------------ helpers


def strict_json(text: str):
    """json.loads, but NaN and Infinity (which Python writes and reads, and JSON does not have) fail."""

    def reject(token: str):
        raise AssertionError(f"not strict JSON: {token} in the output")

    return json.loads(text, parse_constant=reject)


@functools.cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(contracts.schema(name))


def problems(name: str, doc) -> list[str]:
    """Where and why `doc` breaks contract `name`, one line each ("" path = the top)."""
    out = []
    for error in validator(name).iter_errors(doc):
        where = "/".join(str(p) for p in error.absolute_path)
        out.append(f"{where}: {error.message[:300]}")
    return out


def assert_valid(name: str, doc):
    found = problems(name, doc)
    assert not found, f"output breaks the {name} contract:\n" + "\n".join(found[:20])
    return doc


def cli_json(capsys, *args: str, expect: int = 0):
    """Run gpudash in this process and parse its stdout as strict JSON (`expect`: the exit code; `check` exits
    1 when a check failed or errored, with the whole document printed all the same)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == expect, err
    return strict_json(out)


def replay(example: Path | str) -> list[str]:
    path = example if isinstance(example, Path) else REPO / "examples" / "snapshots" / f"{example}.json"
    return ["--replay", str(path)]


def export_leaves(tree: dict, prefix: str = "") -> set[str]:
    """Dotted names of the exported values (the [gpudash] header, reasons and provenance are not values)."""
    out = set()
    for key, value in tree.items():
        if not prefix and key in ("gpudash", "reasons", "provenance"):
            continue
        dotted = f"{prefix}{key}"
        out |= export_leaves(value, dotted + ".") if isinstance(value, dict) else {dotted}
    return out


def assert_export(tree: dict) -> dict:
    assert_valid("export", tree)
    leaves = export_leaves(tree)
    assert leaves <= set(tree["reasons"]), f"values without a reason: {sorted(leaves - set(tree['reasons']))}"
    assert set(tree["reasons"]) == set(tree["provenance"])
    return tree


def clean_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GPUDASH_REPLAY", "GPUDASH_LOAD_PLUGINS", "GPUDASH_CONFIG")}
    env.update(XDG_CONFIG_HOME=str(root / "config"), XDG_STATE_HOME=str(root / "state"))
    return env


def gpudash(env: dict[str, str], *args: str) -> str:
    res = subprocess.run([sys.executable, "-m", "gpudash", *args], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


# ------------------------------------------------------------------------------------------------ the schemas


def test_each_contract_has_one_valid_schema_file():
    files = sorted(p.name.removesuffix(".schema.json") for p in Path(contracts.__file__).parent.glob("*.schema.json"))
    assert files == sorted(contracts.NAMES)
    for name in contracts.NAMES:
        schema = contracts.schema(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"urn:gpudash:contract:{name}"
    with pytest.raises(KeyError, match="no contract named 'nope'"):
        contracts.schema("nope")


def props(name: str, *path: str) -> set[str]:
    node = contracts.schema(name)
    for part in path:
        node = node[part]
    return set(node["properties"])


def fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_schemas_mirror_the_records_they_describe():
    """A field added to a record (or a value to an enum) without its schema, or the other way round, fails here:
    add it to the schema named in the message (and to docs/ARCHITECTURE.md if it is a new contract)."""
    from gpudash import models
    from gpudash.measure import schema as records
    from gpudash.measure.calibration.profile import CalibrationMetadata
    from gpudash.plugin_manager import BenchmarkRun, PluginRecord
    from gpudash.plugins_api import ERROR, STATUSES, CheckResult
    from gpudash.precisions import PRECISIONS
    from gpudash.recommend.settings import PROVENANCES

    sample = fields(models.Sample)
    assert props("snapshot", "$defs", "sample") == sample, "snapshot.schema.json $defs/sample"
    assert props("info", "$defs", "sample") == sample, "info.schema.json $defs/sample"
    assert props("snapshot", "$defs", "process") == fields(models.ProcessUsage)
    for name in ("snapshot", "info"):
        assert props(name, "$defs", "mig_instance") == fields(models.MigInstance), f"{name} $defs/mig_instance"
    # An `unavailable` map names the field it explains (plus a few documented extras): every field can be n/a.
    defs = contracts.schema("snapshot")["$defs"]
    for cls, keys in (
        (models.Sample, defs["sample_unavailable"]),
        (models.ProcessUsage, defs["process"]["properties"]["unavailable"]),
        (models.MigInstance, defs["mig_instance"]["properties"]["unavailable"]),
    ):
        assert fields(cls) - {"unavailable"} <= set(keys["propertyNames"]["enum"]), cls.__name__
    assert set(defs["runtime"]["properties"]["unavailable"]["propertyNames"]["enum"]) <= fields(models.Runtime)
    assert contracts.schema("snapshot")["$defs"]["status"]["enum"] == [models.OK, models.LOST]
    for name in ("snapshot", "info"):
        assert props(name, "$defs", "host") == fields(models.Host)
        assert props(name, "$defs", "runtime") == fields(models.Runtime)
    # record.py writes every DeviceInfo field but sources, plus torch's view and the samples; of `extra` only
    # the CPU facts the architecture tables need.
    assert props("snapshot", "$defs", "device") == fields(models.DeviceInfo) - {"sources"} | {
        "torch",
        "samples",
        "health_counters",
    }
    assert fields(models.DeviceInfo) - {"extra"} <= props("info", "$defs", "device")
    for name in ("bench", "profile"):
        assert props(name, "$defs", "precision_result") == fields(records.PrecisionTestResult)
    assert props("profile", "$defs", "matrix") == fields(records.PrecisionCapabilityMatrix)
    assert props("profile", "properties", "metadata") == fields(CalibrationMetadata)
    assert props("check", "$defs", "check_result") == fields(CheckResult) | {"id", "severity", "evidence", "action"}
    assert props("plugins", "$defs", "record") == fields(PluginRecord)
    assert props("bench", "$defs", "plugin_run") == fields(BenchmarkRun)

    for name in ("snapshot", "info", "probe", "bench", "profile", "bench-compare"):
        assert contracts.schema(name)["$defs"]["precision"]["enum"] == list(PRECISIONS), name
    for name in ("snapshot", "info", "probe", "bench", "profile", "export"):
        assert contracts.schema(name)["$defs"]["vendor"]["enum"] == list(models.VENDORS), name
    verdicts = {records.VERIFIED, records.FAILED, records.SLOW_REFERENCE, records.NOT_RUN}
    probe_result = contracts.schema("probe")["$defs"]["precision_result"]["properties"]
    assert set(probe_result["verdict"]["enum"]) == verdicts
    check_status = contracts.schema("check")["$defs"]["check_result"]["properties"]["status"]["enum"]
    assert check_status == [*STATUSES, ERROR]
    provenance = contracts.schema("export")["properties"]["provenance"]["additionalProperties"]["enum"]
    assert set(provenance) == set(PROVENANCES)
    from gpudash.knowledge import peaks

    peak_kinds = [peaks.SPEC, peaks.DERIVED, peaks.ESTIMATED]

    def peak_enums(node):  # every enum that says where a theoretical peak came from
        if isinstance(node, dict):
            for key, value in node.items():
                if (key == "peak_provenance" or (key == "provenance" and "too_low" in node)) and "enum" in value:
                    yield value["enum"]
                yield from peak_enums(value)

    for name in ("bench", "profile"):
        found = [e for d in contracts.schema(name)["$defs"].values() for e in peak_enums(d.get("properties", {}))]
        assert found and all(e == peak_kinds for e in found), name


def test_definitions_shared_between_contracts_are_the_same():
    """The schemas are self-contained files, so a definition two of them need is written twice: keep it equal."""
    shared = ("precision", "vendor", "device_key", "support_level", "timestamp", "source", "host", "runtime")
    for name in (*shared, "status", "unknown_value", "mig_mode", "sample_unavailable", "mig_instance"):
        copies = {
            c: contracts.schema(c)["$defs"][name] for c in contracts.NAMES if name in contracts.schema(c)["$defs"]
        }
        assert len(copies) > 1 and all(d == next(iter(copies.values())) for d in copies.values()), name
    for name in ("precision_result", "spread", "bandwidth", "peak_info"):
        assert contracts.schema("bench")["$defs"][name] == contracts.schema("profile")["$defs"][name], name
    snapshot, info = contracts.schema("snapshot")["$defs"], contracts.schema("info")["$defs"]
    assert snapshot["sample"]["properties"] == info["sample"]["properties"]
    assert snapshot["process"] == info["process"]
    assert {k: v for k, v in snapshot["sample"].items() if k != "required"} == {
        k: v for k, v in info["sample"].items() if k != "required"
    }


# ------------------------------------------------------------------------------------------------ snapshot


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_example_snapshots_follow_the_snapshot_contract(example):
    assert_valid("snapshot", strict_json(example.read_text()))


def test_recorded_snapshots(no_vendor_libs, capsys):
    live = assert_valid("snapshot", cli_json(capsys, "snapshot", "-o", "-", "--seconds", "0"))
    assert "origin" not in live and [d["vendor"] for d in live["devices"]] == ["cpu"]
    again = assert_valid(
        "snapshot", cli_json(capsys, *replay("dgx-h100-8gpu"), "snapshot", "-o", "-", "--seconds", "0")
    )
    assert again["origin"].startswith("re-recorded from a replay") and len(again["devices"]) == 8


def test_info_and_snapshot_of_a_live_machine_with_faked_gpus(monkeypatch, capsys):
    """The real NVML and amdsmi adapters, driven by fake bindings: processes, clocks and power included."""
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100]))
    monkeypatch.setitem(sys.modules, "amdsmi", make_fake_amdsmi([MI300X]))
    info = assert_valid("info", cli_json(capsys, "info", "--json", "--no-torch"))
    assert {d["vendor"] for d in info["devices"]} == {"nvidia", "amd", "cpu"}
    nvidia = next(d for d in info["devices"] if d["vendor"] == "nvidia")
    assert nvidia["sample"]["processes"][0]["pid"] == 4242
    snapshot = assert_valid("snapshot", cli_json(capsys, "snapshot", "-o", "-", "--seconds", "0"))
    assert {d["vendor"] for d in snapshot["devices"]} == {"nvidia", "amd", "cpu"}
    # This torch (a CPU build) cannot see the GPUs: probe and bench say so within their contracts.
    probe = assert_valid("probe", cli_json(capsys, "probe", "--device", "nvidia:0", "--json"))
    assert {r["verdict"] for r in probe["devices"][0]["precisions"].values()} == {"not_run"}
    bench = assert_valid("bench", cli_json(capsys, "bench", "--device", "nvidia:0", "--json"))
    assert bench["devices"][0]["supported_precisions"] == [] and bench["devices"][0]["provenance"] == "measured"


def test_lost_gpus_and_mig_within_the_contracts(monkeypatch, capsys, tmp_path):
    """A DGX H100 on faked NVML with GPU 3 lost at enumeration, GPU 5 lost after it and MIG on GPU 7: info, its
    snapshot and the replay of that snapshot stay within their contracts; only GPU 3 has support unknown."""
    devices = load_example("dgx-h100-8gpu.json")["devices"]
    errors = {
        (3, "handle"): real_pynvml.NVMLError_GpuIsLost(),
        (5, "nvmlDeviceGetMemoryInfo"): real_pynvml.NVMLError_GpuIsLost(),
    }
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml(devices, errors=errors))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    statuses = ["ok", "ok", "ok", "lost", "ok", "lost", "ok", "ok"]
    info = assert_valid("info", cli_json(capsys, "info", "--json", "--no-torch"))
    gpus = info["devices"][:8]
    assert [g["status"] for g in gpus] == statuses
    assert [g["index"] for g in gpus if g["precisions"]["fp32"]["support"] == "unknown"] == [3]
    assert gpus[5]["arch"] == "Hopper" and gpus[5]["status_reason"].startswith("GpuIsLost")
    assert len(gpus[7]["sample"]["mig_instances"]) == 4
    snapshot = assert_valid("snapshot", cli_json(capsys, "snapshot", "-o", "-", "--seconds", "0"))
    path = tmp_path / "dgx.json"
    path.write_text(json.dumps(snapshot))
    replayed = assert_valid("info", cli_json(capsys, *replay(path), "info", "--json"))
    assert [g["status"] for g in replayed["devices"][:8]] == statuses


def test_non_finite_figures_in_a_replayed_snapshot_become_null(tmp_path, capsys):
    """Regression: Python reads NaN and Infinity from a snapshot file, and `info --json` and a re-recorded
    snapshot printed them back, which is not JSON. They are null now."""
    doc = strict_json((REPO / "examples" / "snapshots" / "mi300x.json").read_text())
    device = doc["devices"][0]
    device["samples"] = [s for s in device["samples"] if s["processes"]][:1]
    device["samples"][0]["power_w"] = float("nan")
    device["samples"][0]["processes"][0]["cpu_pct"] = float("inf")
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc))
    sample = assert_valid("info", cli_json(capsys, *replay(path), "info", "--json"))["devices"][0]["sample"]
    assert sample["power_w"] is None and sample["processes"][0]["cpu_pct"] is None
    again = assert_valid("snapshot", cli_json(capsys, *replay(path), "snapshot", "-o", "-", "--seconds", "0"))
    (recorded,) = again["devices"][0]["samples"]
    assert recorded["power_w"] is None and recorded["processes"][0]["cpu_pct"] is None


def test_the_snapshot_reader_requires_what_the_schema_requires(tmp_path):
    """The schema is not stricter than the reader about which keys must be there: each required key, removed,
    is a one-line error from gpudash/devices/snapshot_file.py naming it."""
    from gpudash.devices.snapshot_file import read_snapshot
    from gpudash.errors import UsageError

    good = strict_json(EXAMPLES[0].read_text())
    schema = contracts.schema("snapshot")
    cases = [((), key) for key in schema["required"]]
    cases += [(("devices", 0), key) for key in schema["$defs"]["device"]["required"]]
    for where, key in cases:
        doc = copy.deepcopy(good)
        node = doc
        for part in where:
            node = node[part]
        del node[key]
        assert problems("snapshot", doc), key
        path = tmp_path / "broken.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(UsageError, match=key):
            read_snapshot(path)


# ------------------------------------------------------------------------------------------------ info, probe


def test_info_live(no_vendor_libs, capsys):
    info = assert_valid("info", cli_json(capsys, "info", "--json"))
    assert info["replayed"] is False and info["devices"][0]["vendor"] == "cpu"


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_info_replayed(example, capsys):
    info = assert_valid("info", cli_json(capsys, *replay(example), "info", "--json"))
    assert len(info["devices"]) == len(strict_json(example.read_text())["devices"])


def test_probe_live_every_precision(no_vendor_libs, capsys):
    probe = assert_valid("probe", cli_json(capsys, "probe", "--device", "cpu", "--json"))
    results = probe["devices"][0]["precisions"]
    assert list(results) == list(contracts.schema("probe")["$defs"]["precision"]["enum"])
    assert results["fp32"]["verdict"] == "verified" and results["fp32"]["checks"]


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_probe_replayed(example, capsys):
    probe = assert_valid("probe", cli_json(capsys, *replay(example), "probe", "--json"))
    assert {r["verdict"] for d in probe["devices"] for r in d["precisions"].values()} == {"not_run"}


# ------------------------------------------------------------------------------------------------ bench, profile


@pytest.fixture(scope="module")
def live_bench(tmp_path_factory):
    """One short live benchmark of the CPU (fp32 only, small case budget) with the built-in plugin benchmarks,
    saving a calibration profile: (bench JSON, profile path, environment)."""
    root = tmp_path_factory.mktemp("live-bench")
    profile = root / "cpu.profile.json"
    env = clean_env(root)
    args = ["bench", "--device", "cpu", "--precisions", "fp32", "--case-budget", "0.05"]
    out = gpudash(env, *args, "--json", "--save", str(profile))
    return strict_json(out), profile, env


def test_bench_live(live_bench):
    bench = assert_valid("bench", live_bench[0])
    device = bench["devices"][0]
    assert device["precisions"]["fp32"]["supported"] is True and device["results"]
    assert [run["plugin"] for run in device["plugin_benchmarks"]] == ["adaptive_kernels"]


def test_non_finite_plugin_figures_are_errors_within_the_contract(no_vendor_libs, monkeypatch, tmp_path, capsys):
    """Regression: a plugin benchmark's inf made `bench --json` crash with a traceback (allow_nan=False), and a
    check's NaN made `check --json` print NaN, which is not JSON. Both are now results with status error that
    name the field, and the documents stay strict JSON within their schemas."""
    (tmp_path / "nonfinite.py").write_text(NONFINITE_PLUGIN)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "nonfinite")
    plugins = ["--plugins-dir", str(tmp_path)]
    check = assert_valid("check", cli_json(capsys, *plugins, "check", "--json"))  # an error is UNKNOWN: exit 0
    (result,) = [c for c in check["checks"] if c["plugin"] != "gpudash"]
    assert result["status"] == "error" and "not a finite number" in result["summary"]
    bench_args = ["bench", "--precisions", "fp32", "--case-budget", "0.02", "--json"]
    bench = assert_valid("bench", cli_json(capsys, *plugins, *bench_args))
    (run,) = bench["devices"][0]["plugin_benchmarks"]
    assert run["status"] == "error" and run["results"] == [] and "finite" in run["summary"]


def test_profile_saved_loaded_and_compared(live_bench, tmp_path):
    _, profile, env = live_bench
    saved = assert_valid("profile", strict_json(profile.read_text()))
    assert saved["metadata"]["provenance"] == "measured" and saved["operation_profiles"]
    loaded = assert_valid("profile", strict_json(gpudash(env, "bench", "--load", str(profile), "--json")))
    assert loaded == saved
    compared = strict_json(gpudash(env, "bench", "--compare", str(profile), str(profile), "--json"))
    assert_valid("bench-compare", compared)
    fp32 = next(row for row in compared["rows"] if row["precision"] == "fp32")
    assert fp32["b_over_a"] == 1.0


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_bench_replayed(example, capsys):
    bench = assert_valid("bench", cli_json(capsys, *replay(example), "bench", "--json"))
    assert all(d["provenance"] == "replayed" and d["theoretical_peaks"] for d in bench["devices"])


def test_profile_of_a_replayed_machine(tmp_path, capsys):
    path = tmp_path / "mi300x.profile.json"
    assert main([*replay("mi300x"), "bench", "--save", str(path)]) == 0
    capsys.readouterr()
    profile = assert_valid("profile", strict_json(path.read_text()))
    assert profile["metadata"]["provenance"] == "replayed" and profile["operation_profiles"] == {}


# ------------------------------------------------------------------------------------------------ check, plugins


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_check_replayed(example, capsys):
    check = assert_valid("check", cli_json(capsys, *replay(example), "check", "--json"))
    assert check["checks"] and check["plugin_errors"] == []


def test_sloppy_check_results_stay_within_the_contract(no_vendor_libs, monkeypatch, tmp_path, capsys):
    """A None summary becomes ""; an env name that is not a variable name, or details that are not an object,
    make the check an error naming the problem (as an unknown status does) instead of leaking into the JSON; a
    plugin's non-string __version__ is listed as text."""
    (tmp_path / "sloppy.py").write_text(SLOPPY_PLUGIN)
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "sloppy")
    check = assert_valid("check", cli_json(capsys, "--plugins-dir", str(tmp_path), "check", "--json"))
    by_name = {c["check"]: c for c in check["checks"]}
    assert (by_name["no_summary"]["status"], by_name["no_summary"]["summary"]) == ("pass", "")
    assert by_name["bad_env_name"]["status"] == "error" and "'NOT A NAME'" in by_name["bad_env_name"]["summary"]
    assert by_name["list_details"]["status"] == "error" and "details" in by_name["list_details"]["summary"]
    plugins = assert_valid("plugins", cli_json(capsys, "--plugins-dir", str(tmp_path), "plugins", "--json"))
    assert plugins["plugins"][0]["version"] == "(1, 2)"


def test_check_and_plugins_live_with_broken_plugins(no_vendor_libs, monkeypatch, capsys):
    """Passing, raising and lying checks and a plugin that does not import: statuses pass, skip and error, and
    plugin_errors, all within the contract."""
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks,good_sample,raising,bad_status,broken_import")
    check = assert_valid("check", cli_json(capsys, "--plugins-dir", str(SAMPLES), "check", "--json"))
    assert {"pass", "skip", "error"} <= {c["status"] for c in check["checks"]}
    assert {e["plugin"] for e in check["plugin_errors"]} >= {"broken_import", "bad_status"}
    plugins = assert_valid("plugins", cli_json(capsys, "--plugins-dir", str(SAMPLES), "plugins", "--json"))
    by_name = {p["name"]: p for p in plugins["plugins"]}
    assert by_name["broken_import"]["loaded"] is False and by_name["broken_import"]["errors"]
    assert by_name["good_sample"]["source"] == "file" and by_name["rocm_checks"]["source"] == "entry point"


def test_plugins_builtin(capsys):
    plugins = assert_valid("plugins", cli_json(capsys, "plugins", "--json"))
    assert {p["name"] for p in plugins["plugins"]} == {"adaptive_kernels", "rocm_checks"}


# ------------------------------------------------------------------------------------------------ export


def test_export_toml_and_json_are_one_tree(tmp_path, capsys):
    # A replay, so both exports see the same free memory (a live machine's changes between two runs).
    where = replay(EXAMPLES[0])
    json_tree = assert_export(cli_json(capsys, *where, "export", "--bench", "none", "--format", "json", "-o", "-"))
    path = tmp_path / "gpudash.toml"
    assert main([*where, "export", "--bench", "none", "-o", str(path)]) == 0
    capsys.readouterr()
    toml_tree = assert_export(tomllib.loads(path.read_text()))
    for tree in (json_tree, toml_tree):
        tree["gpudash"].pop("generated")
    assert toml_tree == json_tree


@pytest.mark.parametrize("example", EXAMPLES, ids=EXAMPLE_IDS)
def test_export_replayed(example, capsys):
    tree = assert_export(cli_json(capsys, *replay(example), "export", "--bench", "none", "--format", "json", "-o", "-"))
    assert tree["gpudash"]["replayed"] is True


def test_export_replayed_with_checks_and_the_memory_trace(capsys):
    """The default export of a replayed RDNA1 card runs the table-based checks (their env and routing reach the
    export) and traces the model's memory on the CPU."""
    tree = assert_export(cli_json(capsys, *replay("rx-5600-xt"), "export", "--format", "json", "-o", "-"))
    assert tree["env"] and tree["routing"] and tree["provenance"]["batch.activation_bytes_per_sample"] == "measured"


# Keys gpudash.apply.load() insists on (gpudash/apply.py ExportedSettings): the schema must require them too.
APPLY_REQUIRES = [
    "gpudash.version",
    "gpudash.device_type",
    "gpudash.replayed",
    "amp.dtype",
    "amp.loss_scaling",
    "amp.lightning_precision",
    "amp.accelerate_mixed_precision",
    "amp.tf32",
    "amp.hf_trainer.bf16",
    "dataloader.num_workers",
    "dataloader.pin_memory",
    "env",
]


def test_the_export_schema_requires_what_apply_load_requires(tmp_path, capsys):
    from gpudash.apply import ExportFileError, load

    good = cli_json(capsys, *replay("h100-80gb"), "export", "--bench", "none", "--format", "json", "-o", "-")
    path = tmp_path / "broken.json"
    for dotted in APPLY_REQUIRES:
        doc = copy.deepcopy(good)
        *parents, key = dotted.split(".")
        node = doc
        for part in parents:
            node = node[part]
        del node[key]
        assert problems("export", doc), dotted
        path.write_text(json.dumps(doc))
        with pytest.raises(ExportFileError, match=f"missing key {dotted}"):
            load(path)


# ------------------------------------------------------------------------------------------------ broken documents


def test_strict_json_rejects_what_python_lets_through():
    with pytest.raises(AssertionError, match="NaN"):
        strict_json('{"gflops": NaN}')


def _set(path: str, value):
    """A mutation that sets the value at a /-separated path (numbers index lists)."""

    def mutate(doc):
        *parents, last = path.split("/")
        node = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return mutate


def _delete(path: str):
    def mutate(doc):
        *parents, last = path.split("/")
        node = doc
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return mutate


# name, how to get a real document, what breaks it, where the error must point
BROKEN = [
    ("snapshot", "example", _delete("devices/0/samples"), "devices/0"),
    ("snapshot", "example", _set("devices/0/vendor", "intel"), "devices/0/vendor"),
    ("snapshot", "example", _set("devices/0/samples/0/utilization_pct", 140), "devices/0/samples/0/utilization_pct"),
    (
        "snapshot",
        "example",
        _set("devices/0/samples/1/processes/0/type", "compute"),
        "devices/0/samples/1/processes/0/type",
    ),
    (
        "snapshot",
        "example",
        _set("devices/0/samples/2/mig_instances", [{"name": "1g.10gb"}]),
        "devices/0/samples/2/mig_instances/0",
    ),
    ("snapshot", "example", _set("devices/0/samples/3/unavailable/fan_pct", "N/A"), "devices/0/samples/3/unavailable"),
    ("snapshot", "example", _set("devices/0/samples/4/compute_mode", "shared"), "devices/0/samples/4/compute_mode"),
    (
        "info",
        "info",
        _set("devices/0/precisions/fp16", {"native": True, "support": "emulated"}),
        "devices/0/precisions/fp16",
    ),
    (
        "info",
        "info",
        _set("devices/0/precisions/bf16", {"native": True, "support": "unknown"}),
        "devices/0/precisions/bf16",
    ),
    # unknown is for a GPU lost at enumeration, all precisions at once, never for a reachable one
    (
        "info",
        "info",
        _set("devices/0/precisions/fp8_e4m3", {"native": False, "support": "unknown"}),
        "devices/0/precisions/fp8_e4m3/support",
    ),
    ("info", "info", _set("devices/0/status_reason", "GpuIsLost"), "devices/0/status_reason"),
    ("info", "info", _set("devices/0/status", "gone"), "devices/0/status"),
    ("info", "info", _set("devices/0/sample/fan_pct", 40), "devices/0/sample"),
    ("info", "info", _set("devices/0/sample/performance_state", "P32"), "devices/0/sample/performance_state"),
    ("info", "info", _set("runtime_unavailable/torch", "gone"), "runtime_unavailable"),
    ("info", "info", _set("runtime/unavailable", {}), "runtime"),
    ("info", "info", _set("replayed", False), "source"),
    ("probe", "probe", _set("devices/0/precisions/fp32/verdict", "verified"), "devices/0/precisions/fp32"),
    ("probe", "probe", _set("devices/0/precisions/fp12", {}), "devices/0/precisions"),
    ("bench", "bench", _set("devices/0/theoretical_peaks/fp32", -1.0), "devices/0/theoretical_peaks/fp32"),
    (
        "bench",
        "bench",
        _set("devices/0/peak_provenance/fp32/provenance", "guess"),
        "devices/0/peak_provenance/fp32/provenance",
    ),
    ("bench", "bench", _delete("devices/0/memory_bandwidth/0/reason"), "devices/0/memory_bandwidth/0"),
    ("profile", "profile", _set("metadata/hardware_name", ""), "metadata/hardware_name"),
    ("profile", "profile", _set("format", "gpudash-snapshot"), "format"),
    ("bench-compare", "compare", _set("rows/0/b_over_a", -1), "rows/0/b_over_a"),
    ("check", "check", _set("checks/0/status", "ok"), "checks/0/status"),
    ("check", "check", _set("checks/0/env/TORCH_BLAS_PREFER_HIPBLASLT", 0), "checks/0/env/TORCH_BLAS_PREFER_HIPBLASLT"),
    ("plugins", "plugins", _set("plugins/0/hooks/0", "register_widgets"), "plugins/0/hooks/0"),
    ("plugins", "plugins", _set("plugins/0/source", "zip"), "plugins/0/source"),
    ("export", "export", _set("amp/loss_scaling", "dynamic"), "amp"),
    ("export", "export", _set("env/PYTORCH_CUDA_ALLOC_CONF", 1), "env/PYTORCH_CUDA_ALLOC_CONF"),
    ("export", "export", _delete("batch/effective"), "batch"),
]


def real_document(kind: str, capsys, tmp_path):
    """A document the named command really produced (mostly from replayed examples, which is fast)."""
    argv = {
        "info": [*replay("mi300x"), "info", "--json"],
        "probe": [*replay("mi300x"), "probe", "--json"],
        "bench": [*replay("mi300x"), "bench", "--json"],
        "check": [*replay("rx-5600-xt"), "check", "--json"],
        "plugins": ["plugins", "--json"],
        "export": [*replay("h100-80gb"), "export", "--bench", "none", "--format", "json", "-o", "-"],
    }
    if kind == "example":
        return strict_json((REPO / "examples" / "snapshots" / "mi300x.json").read_text())
    if kind in ("profile", "compare"):
        path = tmp_path / "p.json"
        assert main([*replay("mi300x"), "bench", "--save", str(path)]) == 0
        capsys.readouterr()
        if kind == "profile":
            return strict_json(path.read_text())
        return cli_json(capsys, "bench", "--compare", str(path), str(path), "--json")
    return cli_json(capsys, *argv[kind])


@pytest.mark.parametrize(("name", "kind", "mutate", "where"), BROKEN, ids=[f"{b[0]}-{b[3]}" for b in BROKEN])
def test_a_broken_document_is_rejected(name, kind, mutate, where, capsys, tmp_path):
    doc = real_document(kind, capsys, tmp_path)
    if kind == "check":  # the replayed RDNA1 card: its first warning sets an environment variable
        doc["checks"].insert(0, next(c for c in doc["checks"] if c["env"]))
    if kind == "compare":
        doc["rows"][0]["b_over_a"] = 1.0
    assert_valid(name, doc)
    mutate(doc)
    found = problems(name, doc)
    assert found, f"the {name} schema accepted a broken document"
    assert any(line.split(":")[0] == where for line in found), found
