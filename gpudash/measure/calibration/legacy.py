"""Profiles in the older layouts of the calibration seed's source project, brought to the calibration layout
before their fields are checked, so they load and show their figures.

Before its precision matrix, the source project wrote `"precision_matrix": null` and one figure per operation:
`measured_gflops`, `efficiency`, `mean_latency_ms`, `num_trials`, `input_shape`/`output_shape`, with an empty
`precision_results`. Its matmul benchmark (benchmarks/matmul_bench.py, `benchmark_numpy_matmul`, dtype
np.float32) measured fp32, against `theoretical_peak_gflops`, the fp32 peak; so a matmul operation's own figure
is its fp32 result here. Its first per-precision results named the figure `measured_gops` (integer precisions
count operations) and measured int32 and int16, which gpudash has no precision for: those, and the memory
operations (stream_copy, stream_scale, ...; gpudash measures an on-device copy of its own), are kept as notes
with their figures rather than forced into the matmul table.
"""

from __future__ import annotations

import copy
from typing import Any

from gpudash.precisions import PRECISIONS

LEGACY_PRECISION = "fp32"  # what the source project's matmul measured before precision_results (np.float32)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _shape(op: dict[str, Any]) -> list[int] | None:
    """[M, N, K] from the input and output shapes ([M, K] in, [M, N] out), as gpudash's matmul keys them."""
    given, out = op.get("input_shape"), op.get("output_shape")
    if not (isinstance(given, list) and len(given) == 2 and all(isinstance(d, int) and d > 0 for d in given)):
        return None
    n = out[1] if isinstance(out, list) and len(out) == 2 and isinstance(out[1], int) and out[1] > 0 else given[1]
    return [given[0], n, given[1]]


def _own_figure(op: dict[str, Any], shape: list[int] | None) -> dict[str, Any]:
    result: dict[str, Any] = {"precision": LEGACY_PRECISION, "supported": True}
    for key in ("measured_gflops", "efficiency", "mean_latency_ms", "num_trials"):
        if op.get(key) is not None:
            result[key] = op[key]  # as written: a wrong type is named by the field checks
    if shape:
        result["test_size"] = max(shape)
    return result


def is_legacy(data: dict[str, Any]) -> bool:
    """A profile of the source project without gpudash's per-precision matrix: `"precision_matrix": null`, or
    operations that hold their figures themselves."""
    if "format" in data:
        return False
    ops = data.get("operation_profiles")
    return data.get("precision_matrix") is None or (
        isinstance(ops, dict)
        and any(isinstance(op, dict) and ("measured_gflops" in op or _has_gops(op)) for op in ops.values())
    )


def _has_gops(op: dict[str, Any]) -> bool:
    results = op.get("precision_results")
    return isinstance(results, dict) and any(isinstance(r, dict) and "measured_gops" in r for r in results.values())


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """The same profile in the calibration layout (a copy; `data` is left as it was). Only what the file holds
    is carried over; a field of the wrong type is left in place for the field checks to name."""
    data = copy.deepcopy(data)
    meta = data.get("metadata")
    if isinstance(meta, dict) and "torch_version" not in meta and isinstance(meta.get("pytorch_version"), str):
        meta["torch_version"] = meta["pytorch_version"]  # the source project's name for it
    if data.get("precision_matrix") is None:
        data.pop("precision_matrix", None)  # completed from the operations (profile.complete)
    _known_precisions_only(data.get("precision_matrix"))
    ops = data.get("operation_profiles")
    if not isinstance(ops, dict):
        return data
    notes: list[str] = []
    memory: dict[str, tuple[float, str]] = {}
    kept = {}
    for name, op in ops.items():
        if not isinstance(op, dict):
            kept[name] = op
            continue
        kind = op.get("operation_type")
        if kind != "matmul":
            gbps = _number(op.get("achieved_bandwidth_gbps"))
            if isinstance(kind, str) and gbps and (kind not in memory or gbps > memory[kind][0]):
                size = (
                    (op.get("extra_params") or {}).get("size_mb") if isinstance(op.get("extra_params"), dict) else None
                )
                memory[kind] = (gbps, f" ({size} MB)" if isinstance(size, int) else "")
            continue
        shape = op.get("shape") if isinstance(op.get("shape"), list) else _shape(op)
        results = op.get("precision_results")
        results = dict(results) if isinstance(results, dict) else {}
        for p, r in list(results.items()):
            if isinstance(r, dict) and "measured_gflops" not in r and "measured_gops" in r:
                results[p] = {k: v for k, v in r.items() if k != "measured_gops"} | {
                    "measured_gflops": r["measured_gops"]
                }
            if p not in PRECISIONS:
                figure = _number(results.pop(p).get("measured_gflops")) if isinstance(r, dict) else None
                shown = f"{figure:,.1f} GOPS" if figure is not None else "no figure"
                notes.append(
                    f"{name}: {p} {shown} in the file; gpudash has no {p} precision, so it is not in the table"
                )
        if not results and op.get("measured_gflops") is not None:
            results[LEGACY_PRECISION] = _own_figure(op, shape)
        entry: dict[str, Any] = {"operation_type": "matmul", "precision_results": results}
        if shape:
            entry["shape"] = shape
        # gpudash keys a matmul by its shape ("matmul_4096x4096x4096"); the source project's long keys stay
        # where two operations share a shape
        key = "matmul_" + "x".join(str(d) for d in shape) if shape and all(isinstance(d, int) for d in shape) else name
        kept[key if key not in kept else name] = entry
    data["operation_profiles"] = kept
    theoretical = _number(data.get("theoretical_bandwidth_gbps"))
    for kind, (gbps, size) in sorted(memory.items()):
        of = f", {gbps / theoretical:.0%} of the file's {theoretical:,.0f} GB/s theoretical" if theoretical else ""
        notes.append(f"memory {kind}: best {gbps:,.1f} GB/s{size}{of} (from the file's operation_profiles)")
    if notes:
        held = data.get("notes")
        data["notes"] = (list(held) if isinstance(held, list) else []) + notes
    return data


def _known_precisions_only(matrix: Any) -> None:
    """The matrix's lists and tables without the precisions gpudash has no name for (int32, int16): their
    figures are in the notes, from the operations."""
    if not isinstance(matrix, dict):
        return
    for key in ("supported_precisions", "unsupported_precisions"):
        if isinstance(matrix.get(key), list):
            matrix[key] = [p for p in matrix[key] if p in PRECISIONS]
    for key in ("peak_gflops_by_precision", "speedup_vs_fp32", "theoretical_peaks"):
        if isinstance(matrix.get(key), dict):
            matrix[key] = {p: v for p, v in matrix[key].items() if p in PRECISIONS}
