"""Configuration: built-in defaults, overridden by a TOML file.

Search order: --config PATH, then $GPUDASH_CONFIG, then the user config file
($XDG_CONFIG_HOME/gpudash/config.toml), then the defaults below. The top-level config.toml in the
repository documents every key with these same defaults; a test keeps the two in step.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gpudash.errors import UsageError
from gpudash.fileio import read_user_file
from gpudash.plain_text import one_line


class Key(NamedTuple):
    default: Any
    kind: type | tuple[type, ...]
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    check: Callable[[Any], str | None] | None = None  # returns a problem description or None

    def problem(self, value: Any) -> str | None:
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        number_ok = float in kinds and isinstance(value, int)  # 2 is fine where 2.0 is expected
        if (isinstance(value, bool) and bool not in kinds) or not (isinstance(value, kinds) or number_ok):
            return f"expected {_kind_name(kinds)}, got {type(value).__name__} {_shown(value)}"
        if self.choices is not None and value not in self.choices:
            return f"expected one of {', '.join(self.choices)}, got {_shown(value)}"
        if self.low is not None and self.high is not None and not (self.low <= value <= self.high):
            return f"expected a value from {_num(self.low)} to {_num(self.high)}, got {_shown(value)}"
        return self.check(value) if self.check else None


def _shown(value: Any) -> str:
    return one_line(repr(value), 80)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string", list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _string_list(value: list) -> str | None:
    return None if all(isinstance(v, str) for v in value) else "expected a list of strings"


def _folder_list(value: list) -> str | None:
    """Plugin folders are taken only when named: "" would otherwise mean the working directory."""
    problem = _string_list(value)
    if problem is None and any(not v.strip() for v in value):
        problem = 'an empty folder name is not a folder (write "." for the working directory)'
    return problem


def _factory(value: str) -> str | None:
    return None if value == "" or re.fullmatch(r"[\w.]+:\w+", value) else "expected 'module:function' or ''"


def _listen(value: str) -> str | None:
    host, sep, port = value.rpartition(":")
    ok = value.isdigit() or (sep and host and port.isdigit() and int(port) <= 65535)
    return None if ok else "expected 'HOST:PORT', e.g. '127.0.0.1:9483'"


def _xid_list(value: list) -> str | None:
    """XID numbers: whole numbers from 1 to 1023 (the driver's codes)."""
    ok = all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1023 for v in value)
    return None if ok else "expected a list of XID numbers from 1 to 1023"


def _path_text(value: str) -> str | None:
    return None if value.strip() else "expected a path, e.g. '/dev/kmsg'"


def _url(value: str) -> str | None:
    return None if value == "" or re.match(r"https?://[^/\s]+", value) else "expected an http(s):// URL or ''"


def _address_space(value: int) -> str | None:
    """0 (no limit) or enough for Python, gpudash and a plugin manager to start (their address space is ~100 MiB)."""
    return None if value == 0 or value >= 256 else "expected 0 (no limit) or at least 256 MiB"


# Section "" holds top-level keys.
SCHEMA: dict[str, dict[str, Key]] = {
    "": {
        "plugin_dirs": Key([], list, check=_folder_list),
    },
    "ui": {
        "refresh_interval": Key(1.0, float, 0.1, 60),
        "history_seconds": Key(600, int, 10, 86400),
        "theme": Key("textual-dark", str),
        "memory_units": Key("GiB", str, choices=("GiB", "MiB")),  # the dashboard's memory: rounded, or exact
    },
    "snapshot": {
        "seconds": Key(3.0, float, 0, 600),
        "interval": Key(0.5, float, 0.05, 60),
        "redact": Key(False, bool),
    },
    "probe": {
        "timeout_s": Key(120.0, float, 1, 3600),
    },
    "preflight": {
        "speed_warn_pct": Key(5.0, float, 0.0, 100.0),
        "speed_fail_pct": Key(20.0, float, 0.0, 100.0),
        "mamf_fail_pct": Key(20.0, float, 0.0, 100.0),
        "busbw_fail_pct": Key(20.0, float, 0.0, 100.0),
    },
    "bench": {
        "timeout_s": Key(600.0, float, 1, 7200),
        "case_budget_s": Key(2.0, float, 0.05, 600),
    },
    "export": {
        "bench": Key("quick", str, choices=("none", "quick", "full")),
        "target_effective_batch": Key(256, int, 1, 1_000_000),
        "memory_margin": Key(0.1, float, 0.0, 0.9),
    },
    "web": {
        "max_sessions": Key(4, int, 1, 64),
    },
    "serve": {
        "listen": Key("127.0.0.1:9483", str, check=_listen),
        "telemetry": Key(True, bool),
        "tls_cert": Key("", str),
        "tls_key": Key("", str),
        "web_config": Key("", str),  # exporter-toolkit's web config file: TLS and basic-auth users
        "max_connections": Key(64, int, 1, 4096),
        # The deadlines and sizes of each connection (gpudash.exporter.server.Limits; docs/fleet.md)
        "handshake_timeout_s": Key(5.0, float, 0.1, 300),  # the TLS handshake, from accept
        "idle_timeout_s": Key(20.0, float, 0.1, 3600),  # waiting for a request (new or kept-open connection)
        "read_timeout_s": Key(10.0, float, 0.1, 600),  # the whole request, from its first byte
        "write_timeout_s": Key(10.0, float, 0.1, 600),  # the whole answer
        "max_head_bytes": Key(16384, int, 1024, 1 << 20),  # request line and headers; more is 431
        "max_body_bytes": Key(65536, int, 0, 1 << 24),  # a scrape has none; more is 413
        "job_labels": Key(False, bool),  # per-job series (gpudash.exporter.jobs); --job-labels
        "max_job_series": Key(256, int, 1, 100_000),  # device-job pairs per scrape; the rest are counted as dropped
    },
    "fleet": {
        "prometheus": Key("", str, check=_url),
        "hosts": Key([], list, check=_string_list),
        "hostfile": Key("", str),
        "interval": Key(0.0, float, 0, 3600),
        "timeout_s": Key(4.0, float, 0.1, 60),
        "concurrency": Key(128, int, 1, 128),
        "history_s": Key(900, int, 60, 86400),
        "memory_budget_mib": Key(256, int, 16, 65536),  # all answers in flight together (gpudash.fleet.budget)
        "max_hosts_per_target": Key(64, int, 1, 100_000),  # what one target may name (gpudash.fleet.claims)
        "max_devices_per_target": Key(1024, int, 1, 1_000_000),
    },
    "plugins": {  # resource limits of plugin check and benchmark children (gpudash.plugin_manager.limits)
        "address_space_mib": Key(8192, int, 0, 2**30, check=_address_space),  # 0: none
        "address_space_on_gpu": Key(False, bool),
        "cpu_time_s": Key(600, int, 0, 7 * 86400),  # 0: none
    },
    "health": {  # gpudash.health.thresholds; docs/health.md gives each default's source
        "expect_gpus": Key(0, int, 0, 1024),
        "xid_window_s": Key(7200, int, 60, 30 * 86400),
        "xid_critical": Key(
            [48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120], list, check=_xid_list
        ),
        "ecc_sram_corrected_max": Key(10_000, int, 0, 2**62),
        "ecc_dram_corrected_max": Key(20_000_000, int, 0, 2**62),
        "ecc_sram_aggregate_uncorrected_max": Key(4, int, 0, 2**62),
        "remapped_uncorrected_max": Key(512, int, 0, 2**31),
        "temperature_margin_c": Key(5.0, float, 0, 50),
        "amd_ecc_correctable_max": Key(10_000, int, 0, 2**62),
        "amd_compute_partition": Key("", str, choices=("", "SPX", "DPX", "TPX", "QPX", "CPX")),
        "amd_memory_partition": Key("", str, choices=("", "NPS1", "NPS2", "NPS4", "NPS8")),
        "edac_corrected_max": Key(0, int, 0, 2**62),
        "kernel_log": Key("/dev/kmsg", str, check=_path_text),
        # serve and the dashboard read the health counters this often, not per scrape or per telemetry reading
        "read_interval_s": Key(30.0, float, 1, 3600),
    },
    "idle": {  # allocated but idle (gpudash.allocation.idle): held by processes, utilization near 0 this long
        "after_s": Key(600.0, float, 1, 7 * 86400),
        "utilization_pct": Key(1.0, float, 0, 50),
    },
    "model": {
        "factory": Key("", str, check=_factory),
        "layers": Key(12, int, 1, 1000),
        "hidden": Key(768, int, 8, 65536),
        "heads": Key(12, int, 1, 1024),
        "seq_len": Key(1024, int, 1, 1_048_576),
        "vocab": Key(50257, int, 2, 10_000_000),
    },
}


def defaults() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section, keys in SCHEMA.items():
        target = out if section == "" else out.setdefault(section, {})
        for name, key in keys.items():
            target[name] = list(key.default) if isinstance(key.default, list) else key.default
    return out


def user_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gpudash" / "config.toml"


def find_config(explicit: str | None) -> Path | None:
    if explicit:
        return Path(explicit)
    env = os.environ.get("GPUDASH_CONFIG")
    if env:
        return Path(env)
    path = user_config_path()
    # Anything there (a directory, a FIFO, a link to /dev/zero, a dangling link) is read, so that what is not a
    # config file is one line naming it, not silently ignored; only an empty path means "no config".
    return path if os.path.lexists(path) else None


def _line_of(text: str, section: str, key: str) -> int | None:
    """Best-effort line number of `key = ...` inside [section] (tomllib does not report it)."""
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([^\]]+?)\s*\]", stripped)
        if header:
            current = header.group(1)
        elif current == section and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
    return None


def load_config(explicit: str | None = None, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Defaults merged with the config file; bad files raise UsageError with file, key and line."""
    warn = warn or (lambda msg: print(one_line(msg, 4000), file=sys.stderr))
    config = defaults()
    path = find_config(explicit)
    if path is None:
        return config
    text = read_user_file(path, "config file", UsageError)
    # Imported only when there is a file to read: most runs have none, and start-up time counts.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # arrays or tables nested thousands deep
        raise UsageError(f"{path}: not valid TOML: nested too deeply") from None
    for name, value in data.items():
        if name in SCHEMA and name != "" and isinstance(value, dict):
            _apply(path, text, name, value, config[name], warn)
        elif name in SCHEMA[""]:
            _apply(path, text, "", {name: value}, config, warn)
        elif name in SCHEMA:
            raise UsageError(f"{path}: [{name}] must be a table")
        else:
            warn(f"gpudash: warning: {path}: unknown key '{one_line(name, 80)}' ignored")
    return config


def _apply(path: Path, text: str, section: str, values: dict, target: dict, warn) -> None:
    for name, value in values.items():
        dotted = f"{section}.{name}" if section else name
        key = SCHEMA[section].get(name)
        if key is None:
            warn(f"gpudash: warning: {path}: unknown key '{one_line(dotted, 80)}' ignored")
            continue
        problem = key.problem(value)
        if problem:
            line = _line_of(text, section, name)
            where = f" (line {line})" if line else ""
            raise UsageError(f"{path}: {dotted}: {problem}{where}")
        target[name] = float(value) if key.kind is float else value
