"""The fleet: many hosts' GPUs in one view, read from Prometheus or scraped from their exporters.

Two sources give the same `FleetRound` (model.py):
  prometheus.py  a Prometheus server's HTTP API: instant queries for the current dcgm-exporter, AMD
                 device-metrics-exporter and gpudash series, /api/v1/targets for each target's health and
                 last error, query_range for a host's history
  scrape.py      a list of /metrics endpoints scraped directly (labs without Prometheus): at most 128
                 requests at once, a deadline per round; a slow or failing host is dropped from the round,
                 never waited for
The rest:
  targets.py     --hosts / --hostfile parsing
  series.py      which series each exporter publishes, in which units, and how a device is identified
  exposition.py  the text format: unwanted lines dropped by name, each series parsed by prometheus_client's
                 parser once and then looked up
  io_loop.py, fetch.py  the event-loop thread every request of both sources runs on, and one HTTP GET
  interval.py    the refresh interval that grows with the fleet
"""
