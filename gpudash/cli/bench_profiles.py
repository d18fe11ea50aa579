"""`gpudash bench --load` and `--compare`: saved calibration profiles shown, or set side by side."""

from __future__ import annotations

import json


def show_profile(path: str, as_json: bool) -> int:
    from gpudash.cli.bench_render import render
    from gpudash.measure.calibration.profile import load_profile
    from gpudash.measure.calibration.report import report_from_profile

    profile = load_profile(path)
    if as_json:
        print(json.dumps(profile.to_dict(), indent=2))
        return 0
    meta = profile.metadata
    report = report_from_profile(profile)
    data = {"source": f"profile {path}", "mode": meta.mode, "preset": meta.preset, "devices": [report.to_json()]}
    print(
        f"profile {path}: {meta.hardware_name} · {meta.device_type} on {meta.platform_architecture} · "
        f"{meta.calibration_date or 'undated'} · torch {meta.torch_version or '?'} · gpudash {meta.gpudash_version}"
    )
    print(render(data))
    return 0


def compare(path_a: str, path_b: str, as_json: bool) -> int:
    from gpudash import formatting as fmt
    from gpudash.cli.bench_render import number, ratio
    from gpudash.measure.calibration.compare import compare_profiles
    from gpudash.measure.calibration.profile import load_profile

    a, b = load_profile(path_a), load_profile(path_b)
    rows = compare_profiles(a, b)
    if as_json:
        print(json.dumps({"a": path_a, "b": path_b, "rows": rows}, indent=2))
        return 0
    table = [
        [
            r["precision"],
            number(r["a_gflops"]),
            number(r["b_gflops"]),
            ratio(r["b_over_a"]),
            ratio(r["a_speedup_vs_fp32"]),
            ratio(r["b_speedup_vs_fp32"]),
        ]
        for r in rows
    ]
    print(f"A: {path_a} ({a.metadata.hardware_name}, {a.metadata.calibration_date or 'undated'})")
    print(f"B: {path_b} ({b.metadata.hardware_name}, {b.metadata.calibration_date or 'undated'})")
    print()
    print(fmt.table(table, ["precision", "A GFLOPS", "B GFLOPS", "B / A", "A vs fp32", "B vs fp32"]))
    return 0
