"""Calibration profiles: one device's benchmark saved as a file, shown again, or two set side by side; and
the calibration presets (named parts' theoretical peaks) a benchmark can be measured against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudash.actions.bench import BenchRun
    from gpudash.measure.calibration.presets import Preset
    from gpudash.measure.calibration.profile import CalibrationProfile


def presets() -> list[Preset]:
    from gpudash.measure.calibration.presets import PRESETS

    return list(PRESETS.values())


def preset(name: str) -> Preset:
    """The preset called `name`; an unknown name is a UsageError listing the known ones."""
    from gpudash.measure.calibration.presets import get_preset

    return get_preset(name)


def save(run: BenchRun, path: str, redact: bool = False) -> bool:
    """Write the profile of the run's (one) device to `path`, with `redact` its hostname (and identifiers in its
    text) as placeholders; True when it replaced a file."""
    from gpudash.measure.calibration.profile import save_profile
    from gpudash.measure.calibration.report import profile_from_report

    report = next(iter(run.reports.values()))
    preset_name = run.plan.preset.name if run.plan.preset else None
    return save_profile(profile_from_report(report, run.plan.machine, preset_name), path, redact=redact)


@dataclass
class SavedProfile:
    path: str
    profile: CalibrationProfile

    def to_json(self) -> dict[str, Any]:
        """The profile file's own layout."""
        return self.profile.to_dict()

    def bench_data(self) -> dict[str, Any]:
        """The profile as a bench JSON document of one device, so it shows like a fresh run."""
        from gpudash.measure.calibration.report import report_from_profile

        meta = self.profile.metadata
        report = report_from_profile(self.profile)
        return {
            "source": f"profile {self.path}",
            "mode": meta.mode,
            "preset": meta.preset,
            "devices": [report.to_json()],
        }


def load(path: str) -> SavedProfile:
    """Read a profile; any problem is one GpudashError line naming the file."""
    from gpudash.measure.calibration.profile import load_profile

    return SavedProfile(path, load_profile(path))


@dataclass
class Comparison:
    a: SavedProfile
    b: SavedProfile
    rows: list[dict[str, Any]]  # per precision: A's and B's best GFLOPS, B / A, each one's speedup over fp32

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.path, "b": self.b.path, "rows": self.rows}


def compare(path_a: str, path_b: str) -> Comparison:
    """B against A, precision by precision."""
    from gpudash.measure.calibration.compare import compare_profiles

    a, b = load(path_a), load(path_b)
    return Comparison(a, b, compare_profiles(a.profile, b.profile))
