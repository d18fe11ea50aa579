"""The Fleet tab's host column on a narrow screen: names abbreviated on purpose (the shared domain left out, then
the middle of each name), and every host shown keeps a name of its own (gpudash.tui.widgets.fleet_table)."""

from __future__ import annotations

import pytest

from gpudash.tui.widgets.fleet_table import DOMAIN_MARK, HOST_MIN, WHOLE, abbreviate, middle_cut, shared_domain

pytestmark = pytest.mark.light
CLUSTER = [f"node-a{i:03d}.cluster.example.com" for i in range(1, 1025)]


def shorts(names: list[str], room: int) -> list[str]:
    short = abbreviate(names, room)
    return [short.short(n) for n in names]


def test_the_shared_domain_is_left_out_with_a_mark_and_named():
    short = abbreviate(CLUSTER, 12)
    assert short.domain == ".cluster.example.com" and short.width == 0
    assert short.short("node-a017.cluster.example.com") == "node-a017" + DOMAIN_MARK
    assert len(set(shorts(CLUSTER, 12))) == len(CLUSTER)
    assert ".cluster.example.com" in short.legend()
    assert abbreviate(CLUSTER, 40) is WHOLE and WHOLE.legend() == ""  # room enough: whole names


def test_long_names_keep_their_start_and_distinguishing_end():
    names = [f"gpu-training-node-a{i:03d}.cluster.example.com" for i in range(256)]
    got = shorts(names, HOST_MIN + 4)
    assert len(set(got)) == len(names) and all(len(s) <= HOST_MIN + 4 for s in got)
    assert got[17] == "gpu-…node-a017" + DOMAIN_MARK
    assert "…" in abbreviate(names, HOST_MIN + 4).legend()
    # Where the racks differ in the middle, the cut is made wider (or left out) until every host is apart again.
    racks = [f"gpu-training-rack{r:02d}-node-a{i:03d}.cluster.example.com" for r in range(4) for i in range(64)]
    assert len(set(shorts(racks, HOST_MIN + 4))) == len(racks)


def test_names_that_differ_only_in_the_middle_are_never_made_equal():
    names = ["login-east-a-compute-pool", "login-east-b-compute-pool"]
    assert middle_cut(names[0], HOST_MIN) == middle_cut(names[1], HOST_MIN)  # what a blind cut would show
    got = shorts(names, HOST_MIN)
    assert got[0] != got[1]


def test_addresses_are_not_domains():
    assert shared_domain(["10.0.0.1:9483", "10.0.0.2:9483"]) == ""
    assert shared_domain(["node-a.example.com", "10.0.0.2:9483"]) == ""
    assert shared_domain(["a.x.example.com", "b.y.example.com"]) == ".example.com"
    assert len(set(shorts(["10.0.0.1:9483", "10.0.0.2:9483"], HOST_MIN))) == 2
