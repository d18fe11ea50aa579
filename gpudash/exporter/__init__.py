"""Prometheus metrics of what gpudash knows, one module per concept.

`GpudashCollector` (collector.py) is a custom prometheus_client collector: at every scrape it reads the
remembered probe, benchmark and check results (re-parsing a file only when it changed) and, unless turned
off, samples the devices once. Every metric is a gauge named `gpudash_...` in base units (bytes, seconds,
watts, hertz, FLOP/s, ratios 0-1); metadata is an `_info` gauge of value 1. Device series carry the labels
the vendor exporters use, so PromQL can join them: `gpu`, `UUID`, `pci_bus_id`, `modelName` (NVIDIA's
dcgm-exporter), `gpu_id`, `serial_number`, `card_model` (AMD's device-metrics-exporter), and `hostname`.
Nothing is ever labelled `instance` or `job`: Prometheus would rename them `exported_*`.

The modules:
  labels.py          the identity labels of a device
  family.py          a gauge family whose samples may carry different label sets
  build.py           gpudash_build_info, gpudash_machine_info
  devices.py         gpudash_device_info, memory total, spec peaks
  precisions.py      spec-native and verified per precision, probe time
  bench.py           benchmark FLOP/s, efficiency and bandwidth per precision, bench time
  mamf.py            the published MAMF of the part, the benchmark over it
  checks.py          check results by status, check time
  recommendation.py  the recommended AMP dtype, batch and accumulation
  telemetry.py       live utilisation, memory, temperature, power, clocks
  jobs.py            opt-in: each GPU's Slurm jobs and Kubernetes pods, bounded in number (--job-labels)
  idle.py            allocated but idle: held by processes at near-0 utilization for [idle] after_s
  health.py          health verdicts per check ID (docs/health.md), a lost GPU
  failed_before.py   the checks each GPU failed before (the memory of bad GPUs), present or not
  health_counters.py the raw counters behind them: ECC, rows, XIDs, throttle reasons, PCIe, links, energy
  health_cache.py    the counters and checks, read every [health] read_interval_s rather than per scrape
  remembered.py      the results on disk, cached by modification time
  collector.py       all of the above at scrape time
"""

from gpudash.exporter.collector import GpudashCollector, registry_for

__all__ = ["GpudashCollector", "registry_for"]
