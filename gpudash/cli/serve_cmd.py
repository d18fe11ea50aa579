"""`gpudash serve`: a Prometheus endpoint for what only gpudash knows (and live telemetry), or a textfile."""

from __future__ import annotations

import sys

from gpudash.cli import exit_codes
from gpudash.cli.arguments import add_force_option, add_output_option


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "serve",
        parents=parents,
        help="serve Prometheus metrics (verified precisions, benchmarks, checks, telemetry)",
        description="Publish gpudash's remembered probe, benchmark and check results, its recommended "
        "settings and live telemetry as Prometheus metrics, labelled to join dcgm-exporter's and AMD's "
        "device-metrics-exporter's series. Serves on 127.0.0.1 unless told otherwise. With --textfile, "
        "writes the batch results once for node_exporter's textfile collector and exits.",
        epilog=exit_codes.epilog("serve"),
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="address to serve on (default: config serve.listen, 127.0.0.1:9483); 0.0.0.0:PORT for every "
        "interface, port 0 for any free port",
    )
    p.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="serve HTTPS with this certificate (PEM; with --tls-key); both are loaded again when either file "
        "changes (a renewed certificate), and a pair that cannot be used keeps the last good one",
    )
    p.add_argument("--tls-key", metavar="FILE", help="the certificate's private key (PEM)")
    p.add_argument(
        "--web-config",
        metavar="FILE",
        help="TLS and basic-auth users (bcrypt hashes) from a web config file in the format Prometheus's "
        "exporters share (exporter-toolkit; docs/fleet.md); default: config serve.web_config",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="connections open at once (default: config serve.max_connections, 64); beyond it the longest-idle "
        "one is closed for the newcomer, or the newcomer when every connection is being answered",
    )
    telemetry = p.add_mutually_exclusive_group()
    telemetry.add_argument(
        "--no-telemetry",
        dest="telemetry",
        action="store_false",
        default=None,
        help="leave live telemetry out (a vendor exporter already publishes it); config serve.telemetry",
    )
    telemetry.add_argument("--telemetry", dest="telemetry", action="store_true", help="publish live telemetry")
    jobs = p.add_mutually_exclusive_group()
    jobs.add_argument(
        "--job-labels",
        dest="job_labels",
        action="store_true",
        default=None,
        help="also publish each GPU's Slurm jobs and Kubernetes pods (hpc_job, job_user, pod, namespace labels; "
        "at most config serve.max_job_series device-job pairs); config serve.job_labels",
    )
    jobs.add_argument("--no-job-labels", dest="job_labels", action="store_false", help="leave the job series out")
    p.add_argument("--hostname", metavar="NAME", help="the hostname label (default: this host's name)")
    add_output_option(
        p,
        "--textfile",
        rewritten=True,
        metavar="PATH.prom",
        help="write the batch results (no telemetry) to PATH.prom atomically for node_exporter, then exit (a "
        "regular file or a new one; a link, device, pipe or folder is refused)",
    )
    add_force_option(p)
    p.set_defaults(func=run)


def run(ctx) -> int:
    from gpudash.actions import serve
    from gpudash.fileio import REPLACED

    args = ctx.args
    if not args.textfile:
        return _serve(ctx)
    machine = ctx.session.machine(include_torch=False)
    how = serve.write_textfile(machine, ctx.session.config, args.textfile, hostname=args.hostname)
    print(f"gpudash: {'replaced' if how == REPLACED else 'wrote'} {args.textfile} ({machine.label})", file=sys.stderr)
    return 0


def _serve(ctx) -> int:
    """Every option and file is checked (the web config read, the certificate loaded) before discovery."""
    from gpudash.actions import serve
    from gpudash.config import SCHEMA
    from gpudash.errors import UsageError

    args, conf = ctx.args, ctx.session.config["serve"]
    listen = serve.parse_listen(args.listen or conf["listen"], "--listen" if args.listen else "serve.listen")
    tls = serve.tls_files(args.tls_cert or conf["tls_cert"] or None, args.tls_key or conf["tls_key"] or None)
    if args.max_connections is not None:
        problem = SCHEMA["serve"]["max_connections"].problem(args.max_connections)
        if problem:
            raise UsageError(f"--max-connections {args.max_connections}: {problem}")
    web_config = args.web_config or conf["web_config"] or None
    where = serve.endpoint(
        listen,
        tls=tls,
        web_config=web_config,
        web_config_option="--web-config" if args.web_config else "serve.web_config",
        max_connections=args.max_connections or conf["max_connections"],
        limits=conf,
    )
    telemetry = conf["telemetry"] if args.telemetry is None else args.telemetry
    job_labels = conf["job_labels"] if args.job_labels is None else args.job_labels
    if not listen.loopback and where.tls is None:
        secret = "the metrics and the basic-auth passwords" if where.users else "the metrics"
        print(
            f"gpudash: warning: serving plain HTTP on {listen.host}: anyone who can reach the port can read "
            f"{secret}; add TLS (--tls-cert/--tls-key or --web-config) or a firewall rule",
            file=sys.stderr,
        )
    machine = ctx.session.machine(include_torch=False)

    def ready(url: str) -> None:
        devices = len(machine.devices)
        auth = f", basic auth for {len(where.users)} user{'s' if len(where.users) != 1 else ''}" if where.users else ""
        print(
            f"gpudash: serving {url} ({machine.label}, {devices} device{'s' if devices != 1 else ''}, "
            f"telemetry {'on' if telemetry else 'off'}{', job labels on' if job_labels else ''}{auth}); Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )

    serve.serve(
        machine,
        ctx.session.config,
        where,
        telemetry=telemetry,
        hostname=args.hostname,
        job_labels=job_labels,
        on_ready=ready,
    )
    print("gpudash: stopped serving", file=sys.stderr)
    return 0
