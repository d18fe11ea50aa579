"""The fleet for operators (issue 26 item 8): totals by model, --filter and --sort, the drift column, GPU memory
per user and job, in `gpudash fleet`'s text and JSON. Pages in gpudash serve's, nvitop-exporter's and all-smi's
formats on loopback (tests/servers.py), scraped for real."""

from __future__ import annotations

import contextlib
import json

import pytest
from servers import exposition_server
from test_fleet_sources import all_smi_page, nvitop_page

from gpudash.actions import fleet as action
from gpudash.cli import main
from gpudash.contracts.validation import problems
from gpudash.errors import UsageError
from gpudash.fleet.filter import apply_filter, parse_filter, sort_hosts
from gpudash.fleet.scrape import Scraper
from gpudash.fleet.targets import targets_from

pytestmark = pytest.mark.light
GIB = 2**30


def gpudash_page(host: str, temps: list[float], driver: str = "550.54.15", torch: str = "2.5.1") -> str:
    lines = [
        f'gpudash_machine_info{{hostname="{host}",source="live",replayed="false",driver_version="{driver}",'
        f'torch_version="{torch}",cuda_version="12.4",hip_version="",gpudash_version="0.9.0"}} 1'
    ]
    for i, temp in enumerate(temps):
        labels = f'hostname="{host}",device_key="nvidia:{i}",gpu="{i}",UUID="GPU-{host}-{i}",modelName="NVIDIA H100"'
        lines += [
            f'gpudash_device_info{{{labels},name="NVIDIA H100 80GB HBM3"}} 1',
            f"gpudash_device_temperature_celsius{{{labels}}} {temp}",
            f"gpudash_device_utilization_ratio{{{labels}}} 0.5",
            f"gpudash_device_power_watts{{{labels}}} 500",
            f"gpudash_device_memory_used_bytes{{{labels}}} {10 * GIB}",
            f"gpudash_device_memory_total_bytes{{{labels}}} {80 * GIB}",
        ]
    job = f'hostname="{host}",device_key="nvidia:0",gpu="0",UUID="GPU-{host}-0",scheduler="slurm"'
    lines.append(f'gpudash_job_gpu_memory_bytes{{{job},hpc_job="4711",job_user="carol"}} {6 * GIB}')
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def serving(*pages: str):
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(exposition_server(page))[0] for page in pages]
        yield [u.split("://")[1].split("/")[0] for u in urls]


def one_round(hosts: list[str]):
    scraper = Scraper(targets_from(hosts), timeout_s=10.0)
    try:
        return scraper.round()
    finally:
        scraper.close()


def test_filter_keeps_the_hosts_and_gpus_every_term_lets_through():
    with serving(gpudash_page("dgx-01", [60, 91, 70]), gpudash_page("dgx-02", [50, 55]),
                 gpudash_page("node-07", [95])) as hosts:  # fmt: skip
        fleet = one_round(hosts)
    hot = apply_filter(fleet, parse_filter("temp>85 host~=DGX"))
    assert [(h.name, [d.id for d in h.devices]) for h in hot.hosts] == [("dgx-01", ["nvidia:1"])]
    assert [h.name for h in apply_filter(fleet, parse_filter("status=up model~=h100 temp<=55")).hosts] == ["dgx-02"]
    assert apply_filter(fleet, parse_filter("health!=OK")).hosts == fleet.hosts  # none published: != holds
    hottest = sort_hosts(fleet, "temp")
    assert [h.name for h in hottest.hosts] == ["node-07", "dgx-01", "dgx-02"]
    assert [h.name for h in sort_hosts(fleet, "gpus").hosts] == ["dgx-01", "dgx-02", "node-07"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("temp>>85", "--filter 'temp>>85': '>85' is not a number"),
        ("heat>85", "--filter 'heat>85': unknown field 'heat'; fields: host, status, health"),
        ("temp~=8", "--filter 'temp~=8': temp is a number: use = != > >= < <="),
        ("host>dgx", "--filter 'host>dgx': host is a word: use = != ~="),
        ("dgx", "--filter 'dgx': expected FIELD OP VALUE, e.g. temp>85 or host~=dgx"),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2(text, message, capsys):
    with pytest.raises(UsageError):
        parse_filter(text)
    assert main(["fleet", "--hosts", "127.0.0.1:9", "--filter", text]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_bad_sort_key_is_one_line_and_exit_2(capsys):
    assert main(["fleet", "--hosts", "127.0.0.1:9", "--sort", "colour"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--sort 'colour': expected one of host, status, health" in err and len(err.splitlines()) == 1


def test_totals_drift_and_memory_per_user_and_job_in_text_and_json(capsys):
    with serving(
        gpudash_page("dgx-01", [60, 61]),
        gpudash_page("dgx-02", [62, 63]),
        gpudash_page("dgx-03", [64, 65], driver="535.104.05", torch="2.4.0"),
        nvitop_page("nv1"),
        all_smi_page("smi1"),
    ) as hosts:
        fleet = one_round(hosts)
        assert main(["fleet", "--hosts", ",".join(hosts), "--timeout", "10", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert main(["fleet", "--hosts", ",".join(hosts), "--timeout", "10", "--filter", "host~=dgx"]) == 0
        text = capsys.readouterr().out
    assert problems("fleet", doc) == []
    totals = {t["model"]: t for t in doc["totals"]}
    h100 = totals["NVIDIA H100 80GB HBM3"]  # gpudash's 6 and nvitop's 2
    assert (h100["gpus"], h100["power_reported"]) == (8, 8)
    assert h100["power_watts"] == pytest.approx(6 * 500 + 120.5 + 512.25)
    assert h100["memory_total_bytes"] == 6 * 80 * GIB + 2 * 81559 * 2**20
    assert h100["utilization_ratio"] == pytest.approx((6 * 0.5 + 0.37 + 0.81) / 8)
    assert totals["AMD Instinct MI300X"]["gpus"] == 2 and totals["all"]["gpus"] == 11
    assert {d["vendor"] for d in doc["drift"]} == {"nvidia"}  # smi1 is mostly AMD: compared with AMD hosts only
    drift = {d["fact"]: d for d in doc["drift"]}
    assert drift["driver"]["majority"] == "550.54.15" and drift["driver"]["odd"] == {"dgx-03": "535.104.05"}
    assert drift["driver"]["hosts"] == 4  # three gpudash hosts and nvitop's nvitop_info
    assert drift["torch"]["odd"] == {"dgx-03": "2.4.0"}
    assert "gpudash" not in drift  # all the same
    users = {u["name"]: u for u in doc["users"]}
    assert users["carol"] == {"name": "carol", "memory_bytes": 3 * 6 * GIB, "gpus": 3, "hosts": 3}
    assert users["alice"]["memory_bytes"] == 40000 * 2**20 and users["bob"]["memory_bytes"] == GIB
    assert doc["jobs"] == [{"name": "4711", "memory_bytes": 3 * 6 * GIB, "gpus": 3, "hosts": 3}]
    # The text: only the dgx hosts, the odd one marked in the drift column, the totals under the table.
    row = next(line for line in text.splitlines() if line.startswith("dgx-03"))
    assert row.rstrip().endswith("≠driver,≠torch")
    assert "nv1" not in text and "smi1" not in text
    assert "drift: driver (nvidia hosts) 550.54.15 on most of 3 hosts; odd: dgx-03 535.104.05" in text
    total = next(line for line in text.splitlines() if line.startswith("NVIDIA H100 80GB HBM3"))
    assert total.split()[4] == "6" and "3.00 kW" in total
    assert "GPU memory by user: carol 18.0 GiB on 3 GPUs" in text
    assert "GPU memory by job: 4711 18.0 GiB on 3 GPUs" in text
    assert action.healthy(fleet)
