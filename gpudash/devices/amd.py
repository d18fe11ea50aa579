"""AMD adapter: amdsmi to DeviceInfo and Sample.

Importing amdsmi without ROCm prints to stdout and raises KeyError (reference/monitors.md), so the
import runs with stdout redirected and any exception means "no AMD view": piped JSON stays clean.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import time

from gpudash.devices.fields import error_reason, read_field
from gpudash.models import DeviceInfo, ProcessUsage, Sample

MIB = 1024 * 1024


class AmdSmiUnavailable(Exception):
    """amdsmi is missing or ROCm is not installed."""


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

    def __init__(self) -> None:
        self.smi = import_amdsmi()
        try:
            self.smi.amdsmi_init()
            self._handles = list(self.smi.amdsmi_get_processor_handles())
        except Exception as exc:
            raise AmdSmiUnavailable(error_reason(exc)) from exc

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
        return DeviceInfo(
            vendor="amd",
            index=index,
            name=name if name and name != "N/A" else f"AMD GPU {index}",
            uuid=read_field(missing, "uuid", lambda: smi.amdsmi_get_gpu_device_uuid(handle)),
            pci_bus_id=read_field(missing, "pci_bus_id", lambda: smi.amdsmi_get_gpu_device_bdf(handle)),
            gfx_target=gfx if gfx and gfx != "N/A" else None,
            memory_total_bytes=self._vram(handle, missing)[0],
            driver_version=driver.get("driver_version") if driver.get("driver_version") != "N/A" else None,
            multiprocessors=_number(asic.get("num_compute_units"), "multiprocessors", missing),
            max_clock_mhz=_number((clock or {}).get("max_clk"), "max_clock_mhz", missing),
            # torch orders HIP devices by hip_id, not by amdsmi's index (reference/monitors.md).
            torch_index=hip_id if isinstance(hip_id, int) else None,
            sources=["amdsmi"],
            unavailable=missing,
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
            processes=self._processes(handle, missing),
            timestamp=time.time(),
            unavailable=missing,
        )

    def _processes(self, handle, missing: dict[str, str]) -> list[ProcessUsage] | None:
        procs = read_field(missing, "processes", lambda: self.smi.amdsmi_get_gpu_process_list(handle))
        if procs is None:
            return None
        out = []
        for proc in procs:
            vram = (proc.get("memory_usage") or {}).get("vram_mem")
            out.append(
                ProcessUsage(
                    pid=proc.get("pid"),
                    name=proc.get("name"),
                    memory_used_bytes=vram if isinstance(vram, int) else None,
                )
            )
        return out

    def close(self) -> None:
        try:
            self.smi.amdsmi_shut_down()
        except Exception:
            pass


def _clock(info) -> object:
    # ROCm 6.2 renamed cur_clk to clk; accept both.
    if not info:
        return None
    return info.get("clk", info.get("cur_clk"))
