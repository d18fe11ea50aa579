"""AMD adapter: amdsmi to DeviceInfo and Sample.

Importing amdsmi without ROCm prints to stdout and raises KeyError (its amdsmi_wrapper.py does), so the
import runs with stdout redirected and any exception means "no AMD view": piped JSON stays clean.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import time
from collections.abc import Callable
from typing import Any

from gpudash.devices.amd_health import read_counters
from gpudash.devices.amd_partition import read_partition
from gpudash.devices.amd_processes import AmdProcesses
from gpudash.devices.fields import error_reason, read_field, version_text
from gpudash.devices.unavailable import AmdSmiUnavailable as AmdSmiUnavailable
from gpudash.models import DeviceInfo, Sample
from gpudash.plain_text import one_line

MIB = 1024 * 1024
# Fields NVML has and amdsmi has no counterpart for: n/a on AMD, saying so.
NVIDIA_ONLY = {
    "performance_state": "NVIDIA only (P-states)",
    "persistence_mode": "NVIDIA only",
    "display_active": "NVIDIA only",
    "compute_mode": "NVIDIA only",
    "mig_mode": "NVIDIA only (MIG)",
    "mig_mode_pending": "NVIDIA only (MIG)",
    "encoder_utilization_pct": "amdsmi reports one multimedia activity (mm_activity), not encoder and decoder apart",
    "decoder_utilization_pct": "amdsmi reports one multimedia activity (mm_activity), not encoder and decoder apart",
}


def import_amdsmi():
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return importlib.import_module("amdsmi")
        except ImportError:
            raise AmdSmiUnavailable("amdsmi is not installed (pip install 'gpudash[amd]' on ROCm machines)") from None
        except KeyError as exc:  # the wrapper's way of saying the shared library is missing
            raise AmdSmiUnavailable(f"ROCm library {exc.args[0] if exc.args else 'libamd_smi.so'} not found") from None
        except Exception as exc:  # OSError and anything else odd builds raise
            raise AmdSmiUnavailable(f"amdsmi unavailable: {error_reason(exc)}") from None


def _number(value, field: str, missing: dict[str, str]):
    """amdsmi reports unsupported readings as the string 'N/A' instead of raising."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if value is not None:
        missing[field] = "N/A"
    return None


class AmdSmiBackend:
    name = "amdsmi"

    def __init__(self, wrap: Callable[[Any], Any] | None = None) -> None:
        """`wrap`, when given, stands between this adapter and the binding (as for NvmlBackend)."""
        binding = import_amdsmi()
        self.smi = wrap(binding) if wrap is not None else binding
        try:
            self.smi.amdsmi_init()
            self._handles = list(self.smi.amdsmi_get_processor_handles())
        except Exception as exc:
            raise AmdSmiUnavailable(error_reason(exc)) from exc
        self.processes = AmdProcesses(self.smi)

    def devices(self) -> list[DeviceInfo]:
        return [self._describe(index, handle) for index, handle in enumerate(self._handles)]

    def _describe(self, index: int, handle) -> DeviceInfo:
        smi = self.smi
        missing: dict[str, str] = {}
        asic = read_field(missing, "asic", lambda: smi.amdsmi_get_gpu_asic_info(handle)) or {}
        driver = read_field(missing, "driver_version", lambda: smi.amdsmi_get_gpu_driver_info(handle)) or {}
        enum = read_field(missing, "hip_id", lambda: smi.amdsmi_get_gpu_enumeration_info(handle)) or {}
        gfx = asic.get("target_graphics_version")
        name = asic.get("market_name")
        clock = read_field(missing, "max_clock_mhz", lambda: smi.amdsmi_get_clock_info(handle, smi.AmdSmiClkType.GFX))
        hip_id = enum.get("hip_id")
        serial = asic.get("asic_serial")
        compute_partition, memory_partition = read_partition(smi, handle, missing)
        return DeviceInfo(
            vendor="amd",
            index=index,
            name=_name(name, gfx, missing),
            uuid=read_field(missing, "uuid", lambda: smi.amdsmi_get_gpu_device_uuid(handle)),
            pci_bus_id=read_field(missing, "pci_bus_id", lambda: smi.amdsmi_get_gpu_device_bdf(handle)),
            gfx_target=gfx if gfx and gfx != "N/A" else None,
            memory_total_bytes=self._vram(handle, missing)[0],
            driver_version=driver.get("driver_version") if driver.get("driver_version") != "N/A" else None,
            multiprocessors=_number(asic.get("num_compute_units"), "multiprocessors", missing),
            max_clock_mhz=_number((clock or {}).get("max_clk"), "max_clock_mhz", missing),
            # torch orders HIP devices by hip_id, not by amdsmi's index (torch/cuda/__init__.py maps them so).
            torch_index=hip_id if isinstance(hip_id, int) else None,
            compute_partition=compute_partition,
            memory_partition=memory_partition,
            vbios=version_text(lambda: smi.amdsmi_get_gpu_vbios_info(handle)["version"]),
            sources=["amdsmi"],
            unavailable=missing,
            # the label AMD's device-metrics-exporter calls serial_number (gpudash serve joins on it)
            extra={"serial_number": one_line(serial, 64)}
            if isinstance(serial, str) and serial not in ("", "N/A")
            else {},
        )

    def _vram(self, handle, missing: dict[str, str]) -> tuple[int | None, int | None]:
        usage = read_field(missing, "memory", lambda: self.smi.amdsmi_get_gpu_vram_usage(handle))
        if not usage:
            return None, None
        total = _number(usage.get("vram_total"), "memory_total_bytes", missing)
        used = _number(usage.get("vram_used"), "memory_used_bytes", missing)
        # amdsmi_get_gpu_vram_usage reports MB.
        return (total * MIB if total is not None else None, used * MIB if used is not None else None)

    def sample(self, index: int) -> Sample:
        smi = self.smi
        handle = self._handles[index]
        missing: dict[str, str] = {}
        total, used = self._vram(handle, missing)
        if total is None:
            missing.setdefault("memory_used_bytes", missing.get("memory", "N/A"))
        activity = read_field(missing, "utilization_pct", lambda: smi.amdsmi_get_gpu_activity(handle)) or {}
        power = read_field(missing, "power_w", lambda: smi.amdsmi_get_power_info(handle)) or {}
        gfx_clock = read_field(
            missing, "sm_clock_mhz", lambda: smi.amdsmi_get_clock_info(handle, smi.AmdSmiClkType.GFX)
        )
        mem_clock = read_field(
            missing, "memory_clock_mhz", lambda: smi.amdsmi_get_clock_info(handle, smi.AmdSmiClkType.MEM)
        )
        temp = read_field(
            missing,
            "temperature_c",
            lambda: smi.amdsmi_get_temp_metric(
                handle, smi.AmdSmiTemperatureType.HOTSPOT, smi.AmdSmiTemperatureMetric.CURRENT
            ),
        )
        # MI300 reports current_socket_power; Navi and MI200 average_socket_power (torch does the same).
        watts = power.get("current_socket_power")
        if not isinstance(watts, (int, float)):
            watts = power.get("average_socket_power")
        ecc = read_field(missing, "ecc_errors_uncorrected", lambda: smi.amdsmi_get_gpu_total_ecc_count(handle))
        missing.update(NVIDIA_ONLY)
        return Sample(
            memory_used_bytes=used,
            memory_total_bytes=total,
            utilization_pct=_number(activity.get("gfx_activity"), "utilization_pct", missing) if activity else None,
            memory_utilization_pct=_number(activity.get("umc_activity"), "memory_utilization_pct", missing)
            if activity
            else None,
            temperature_c=_number(temp, "temperature_c", missing),
            power_w=_number(watts, "power_w", missing) if power else None,
            power_limit_w=_number(power.get("power_limit"), "power_limit_w", missing) if power else None,
            sm_clock_mhz=_number(_clock(gfx_clock), "sm_clock_mhz", missing),
            memory_clock_mhz=_number(_clock(mem_clock), "memory_clock_mhz", missing),
            fan_speed_pct=self._fan_pct(handle, missing),
            ecc_errors_uncorrected=_number((ecc or {}).get("uncorrectable_count"), "ecc_errors_uncorrected", missing)
            if ecc
            else None,
            processes=self.processes.read(handle, index, missing),
            timestamp=time.time(),
            unavailable=missing,
        )

    def _fan_pct(self, handle, missing: dict[str, str]) -> float | None:
        """Fan 0 as a share of its maximum; a passively cooled board has no fan to report."""
        speed = read_field(missing, "fan_speed_pct", lambda: self.smi.amdsmi_get_gpu_fan_speed(handle, 0))
        if speed is None:
            return None
        top = read_field(missing, "fan_speed_pct", lambda: self.smi.amdsmi_get_gpu_fan_speed_max(handle, 0))
        if not isinstance(speed, int) or not isinstance(top, int) or top <= 0:
            missing.setdefault("fan_speed_pct", "N/A")
            return None
        return round(100.0 * speed / top, 1)

    def health(self, index: int) -> dict:
        """The GPU's health counters (gpudash.devices.amd_health)."""
        return read_counters(self.smi, self._handles[index])

    def close(self) -> None:
        try:
            self.smi.amdsmi_shut_down()
        except Exception:
            pass


def _name(market_name, gfx, missing: dict[str, str]) -> str:
    """The market name; without one, the gfx target (a fact, not a guessed model name)."""
    if market_name and market_name != "N/A":
        return market_name
    missing.setdefault("name", "N/A")
    if gfx and gfx != "N/A":
        return f"AMD {gfx}"
    return f"n/a ({missing.get('asic', missing['name'])})"


def _clock(info) -> object:
    # ROCm 6.2 renamed cur_clk to clk; accept both.
    if not info:
        return None
    return info.get("clk", info.get("cur_clk"))
