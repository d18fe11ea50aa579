"""`gpudash fleet`: every host's GPUs in one table, from Prometheus or by scraping their exporters."""

from __future__ import annotations

import json

from gpudash.cli import exit_codes
from gpudash.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "fleet",
        parents=parents,
        help="many hosts' GPUs at once, from Prometheus or their exporters",
        description="One row per host and per GPU: utilisation, memory, temperature, power and, from gpudash "
        "serve, the verified precisions and the recommended dtype. Reads a Prometheus server (dcgm-exporter, "
        "AMD device-metrics-exporter, nvitop-exporter, all-smi and gpudash series) or scrapes the endpoints itself; at most 128 requests "
        "at once, a host that does not answer within --timeout is dropped from the round and shown with its "
        "error. Sources default to the config's [fleet] table.",
        epilog=exit_codes.epilog("fleet", "The dashboard's Fleet tab (key f) shows the same, refreshed."),
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--prometheus", metavar="URL", help="read the fleet from this Prometheus server")
    source.add_argument(
        "--hosts",
        metavar="HOST:PORT,...",
        action="append",
        help="scrape these endpoints (gpudash serve :9483, dcgm-exporter :9400, AMD :5000, or URLs); repeatable",
    )
    p.add_argument(
        "--hostfile",
        metavar="FILE",
        help="scrape the endpoints listed in FILE, one per line, each optionally followed by the GPUs it should have",
    )
    p.add_argument("--host", metavar="NAME", help="drill down into one host: its devices, error and history")
    p.add_argument("--json", action="store_true", help="print the fleet JSON document instead of a table")
    p.add_argument(
        "--timeout", metavar="S", type=float, help="the most a round waits, seconds (default: config fleet.timeout_s)"
    )
    p.add_argument("--concurrency", metavar="N", type=int, help="requests at once, 1 to 128 (default 128)")
    p.add_argument("--ca-file", metavar="FILE", help="trust this CA (PEM) for https endpoints or Prometheus")
    p.add_argument(
        "--filter",
        metavar="TERMS",
        help="show only what every term lets through, e.g. 'temp>85 host~=dgx' (fields host, status, health, "
        "model, vendor, util, temp, power, mem; ops = != ~= > >= < <=; docs/fleet.md)",
    )
    p.add_argument(
        "--sort",
        metavar="KEY",
        help="host (default), or worst first: status, health, util, temp, power, mem, gpus",
    )
    p.add_argument(
        "--expect-gpus",
        metavar="N",
        type=int,
        help="GPUs each host should have; fewer, or a lost one, is degraded (exit 1); 0: hosts without GPUs are "
        "up. A hostfile line's second column says it for that host",
    )
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.actions import fleet as action
    from gpudash.render.fleet import fleet_text, host_text

    args = ctx.args
    spec = action.spec_from(
        ctx.session.config,
        prometheus=args.prometheus,
        hosts=args.hosts,
        hostfile=args.hostfile,
        timeout_s=args.timeout,
        concurrency=args.concurrency,
        ca_file=args.ca_file,
        expect_gpus=args.expect_gpus,
    )
    if args.filter:
        from gpudash.fleet.filter import parse_filter

        parse_filter(args.filter)  # a bad filter is one line before any request
    if args.sort:
        from gpudash.fleet.filter import SORTS

        if args.sort not in SORTS:
            raise UsageError(f"--sort {args.sort!r}: expected one of {', '.join(SORTS)}")
    fleet, host = action.one_round(spec, args.host)
    fleet = action.operator_view(fleet, args.filter, args.sort)
    if args.json:
        doc = action.document(fleet)
        if host is not None:
            doc["hosts"] = [h for h in doc["hosts"] if h["host"] == host.name]
        print(json.dumps(doc, indent=2, allow_nan=False))
    else:
        print(host_text(fleet, host) if host is not None else fleet_text(fleet))
    healthy = host.status == "up" if host is not None else action.healthy(fleet)
    return EXIT_OK if healthy else EXIT_FINDINGS  # a host not up is a finding
