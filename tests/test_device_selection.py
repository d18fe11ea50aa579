"""Which devices a command works on: `--device` (one meaning everywhere), `--only`, and `--only-visible`
reading CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES as the runtimes do."""

import json
import sys

import pytest
from conftest import H100, MI300X, snapshot_dict
from fakes import load_example, make_fake_pynvml

from gpudash.actions.session import Session
from gpudash.cli import main
from gpudash.config import defaults
from gpudash.devices import add_torch_view, discover
from gpudash.devices.selection import find_device, find_devices, select
from gpudash.errors import UsageError
from gpudash.models import DeviceInfo

DGX = load_example("dgx-h100-8gpu.json")
UUIDS = [d["uuid"] for d in DGX["devices"]]


@pytest.fixture
def dgx_path(tmp_path):
    path = tmp_path / "dgx.json"
    path.write_text(json.dumps(DGX))
    return path


def dgx(dgx_path):
    return discover(replay=str(dgx_path))


def keys(machine):
    return [d.key for d in machine.devices]


# --device: one meaning ---------------------------------------------------------------------------------------


def test_device_names_a_device_the_same_way_everywhere(dgx_path):
    machine = dgx(dgx_path)
    assert find_device(machine, "nvidia:3").key == "nvidia:3"
    assert find_device(machine, "3").key == "nvidia:3"  # a bare number is a GPU index
    assert find_device(machine, "cuda:3").key == "nvidia:3"  # a replay has no torch numbering: by index
    assert [d.key for d in find_devices(machine, ["2,5", "nvidia:2"])] == ["nvidia:2", "nvidia:5"]  # once each
    with pytest.raises(UsageError) as err:
        find_device(machine, "9")
    assert str(err.value) == f"--device '9': no such device (this machine has: {', '.join(keys(machine))})"


@pytest.mark.parametrize(
    "command",
    [["probe"], ["bench", "--quick"], ["check"], ["export", "--bench", "none", "-o", "-"]],
    ids=["probe", "bench", "check", "export"],
)
def test_every_command_rejects_an_unknown_device_with_the_same_line(command, dgx_path, capsys):
    assert main(["--replay", str(dgx_path), *command, "--device", "nvidia:9"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "gpudash: error: --device 'nvidia:9': no such device (this machine has: "
        "nvidia:0, nvidia:1, nvidia:2, nvidia:3, nvidia:4, nvidia:5, nvidia:6, nvidia:7)"
    )


def test_check_takes_keys_indices_and_repeats_like_the_others(dgx_path, capsys, monkeypatch):
    monkeypatch.setenv("GPUDASH_LOAD_PLUGINS", "rocm_checks")
    assert main(["--replay", str(dgx_path), "check", "--json", "--device", "4", "--device", "nvidia:6,cuda:4"]) == 0
    checked = {c["device"] for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checked == {"nvidia:4", "nvidia:6"}


# --only ----------------------------------------------------------------------------------------------------


def test_only_keeps_the_named_gpus_and_says_how_many_are_hidden(dgx_path, capsys):
    assert main(["--replay", str(dgx_path), "--only", "4,5", "info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(d["vendor"], d["index"]) for d in data["devices"]] == [("nvidia", 4), ("nvidia", 5)]
    assert "--only 4,5: 6 of 8 devices hidden" in data["notes"]
    # After the command, as a global option may be; repeated; keys as well as indices.
    assert main(["--replay", str(dgx_path), "info", "--only", "nvidia:7", "--only", "0", "--no-processes"]) == 0
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert rows == ["[nvidia:0]", "[nvidia:7]"]


def test_only_an_index_the_machine_lacks_is_one_line_exit_2(dgx_path, capsys):
    assert main(["--replay", str(dgx_path), "--only", "1,9", "info"]) == 2
    assert capsys.readouterr().err.strip() == (
        "gpudash: error: --only '9': no such device (this machine has: "
        "nvidia:0, nvidia:1, nvidia:2, nvidia:3, nvidia:4, nvidia:5, nvidia:6, nvidia:7)"
    )


def test_only_hides_the_cpu_unless_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, dict(H100, index=1, uuid="GPU-2")]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    session = Session(defaults(), only=["1"])
    assert keys(session.machine(include_torch=False)) == ["nvidia:1"]
    session = Session(defaults(), only=["1", "cpu"])
    assert keys(session.machine(include_torch=False)) == ["nvidia:1", "cpu:0"]


def test_a_device_hidden_by_only_is_named_in_the_device_error(dgx_path, capsys):
    assert main(["--replay", str(dgx_path), "--only", "4", "probe", "--device", "5"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpudash: error: --device '5': no such device (this machine has: nvidia:4; hidden by")
    assert "nvidia:5" in err


def test_torch_merged_later_does_not_bring_hidden_gpus_back(monkeypatch):
    """The dashboard adds torch's view after the first frame: the GPUs --only hid stay hidden."""
    from test_discovery import H100_PROPS, fake_torch

    second = dict(H100, index=1, uuid="GPU-5d2f0c1e-aaaa-bbbb-cccc-000000000002", pci_bus_id="00000000:18:00.0")
    monkeypatch.setitem(sys.modules, "pynvml", make_fake_pynvml([H100, second]))
    monkeypatch.setitem(sys.modules, "amdsmi", None)
    machine = Session(defaults(), only=["1"]).machine(include_torch=False)
    props = [H100_PROPS, H100_PROPS._replace(uuid="5d2f0c1e-aaaa-bbbb-cccc-000000000002", pci_bus_id=0x18)]
    add_torch_view(machine, torch=fake_torch(props))
    assert keys(machine) == ["nvidia:1"] and machine.devices[0].torch_index == 1
    assert [d.key for d in machine.hidden if d.vendor != "cpu"] == ["nvidia:0"]


# --only-visible --------------------------------------------------------------------------------------------


def visible(machine_or_path, env):
    machine = dgx(machine_or_path) if not hasattr(machine_or_path, "devices") else machine_or_path
    select(machine, only_visible=True, environ=env)
    return keys(machine)


def test_cuda_visible_devices_ordinals_and_uuids(dgx_path):
    assert visible(dgx_path, {"CUDA_VISIBLE_DEVICES": "6,2"}) == ["nvidia:2", "nvidia:6"]
    assert visible(dgx_path, {"CUDA_VISIBLE_DEVICES": f"1,{UUIDS[5][:12]}"}) == ["nvidia:1", "nvidia:5"]
    assert visible(dgx_path, {"CUDA_VISIBLE_DEVICES": "MIG-d87d8248"}) == ["nvidia:7"]  # its MIG device
    assert len(visible(dgx_path, {})) == 8  # nothing set: every GPU


@pytest.mark.parametrize(
    "value, expected",
    [
        ("0,1,9,3", ["nvidia:0", "nvidia:1"]),  # the list ends at the first entry naming no device
        ("3,3,4", ["nvidia:3"]),  # ... or repeating one
        ("", []),  # an empty value hides every GPU
        ("-1", []),
        ("GPU-", []),
        ("2,nonsense,4", ["nvidia:2"]),
    ],
)
def test_cuda_visible_devices_read_as_cuda_reads_it(dgx_path, value, expected):
    assert visible(dgx_path, {"CUDA_VISIBLE_DEVICES": value}) == expected


def amd_machine(count=4):
    from gpudash.devices.machine import Machine
    from gpudash.models import Host, Runtime

    gpus = [
        DeviceInfo("amd", i, "AMD Instinct MI300X", uuid=f"{i:02x}ff74a1-0000-1000-80ed-99b6e29fd53d", torch_index=i)
        for i in range(count)
    ]
    return Machine(Host(), Runtime(), gpus + [DeviceInfo("cpu", 0, "EPYC")])


def test_rocr_then_hip_visible_devices_and_cuda_as_hip_honours_it():
    assert visible(amd_machine(), {"HIP_VISIBLE_DEVICES": "1,3"}) == ["amd:1", "amd:3", "cpu:0"]
    # ROCR first; HIP's ordinals count what ROCR left.
    assert visible(amd_machine(), {"ROCR_VISIBLE_DEVICES": "1,2,3", "HIP_VISIBLE_DEVICES": "2"}) == ["amd:3", "cpu:0"]
    assert visible(amd_machine(), {"CUDA_VISIBLE_DEVICES": "0"}) == ["amd:0", "cpu:0"]
    both = {"HIP_VISIBLE_DEVICES": "2", "CUDA_VISIBLE_DEVICES": "0"}
    assert visible(amd_machine(), both) == ["amd:2", "cpu:0"]  # HIP's own variable wins
    assert visible(amd_machine(), {"ROCR_VISIBLE_DEVICES": "GPU-02ff74a1"}) == ["amd:2", "cpu:0"]


def test_torch_in_this_process_answers_which_gpus_are_visible(dgx_path):
    machine = dgx(dgx_path)
    for device in machine.devices[2:4]:  # torch, which applied CUDA_VISIBLE_DEVICES itself, saw these two
        device.sources.append("torch")
    assert visible(machine, {"CUDA_VISIBLE_DEVICES": "GPU-anything-torch-resolved"}) == ["nvidia:2", "nvidia:3"]


def test_only_visible_on_the_command_line_and_the_default_note(dgx_path, capsys, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5")
    assert main(["--replay", str(dgx_path), "--only-visible", "info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["index"] for d in data["devices"]] == [4, 5]
    assert "--only-visible (CUDA_VISIBLE_DEVICES=4,5): 6 of 8 devices hidden" in data["notes"]
    # Without the flag every GPU is shown, as nvitop does, and a note says the variable was not applied.
    assert main(["--replay", str(dgx_path), "info", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["devices"]) == 8
    assert "CUDA_VISIBLE_DEVICES=4,5 is set; every GPU is shown (--only-visible shows only those)" in data["notes"]


def test_mixed_gpus_without_pci_bus_order_get_a_note(tmp_path):
    a100 = load_example("a100-80gb.json")["devices"][0]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(snapshot_dict(H100, dict(a100, index=1))))
    machine = discover(replay=str(path))
    select(machine, only_visible=True, environ={"CUDA_VISIBLE_DEVICES": "1"})
    assert keys(machine) == ["nvidia:1"]
    assert any("CUDA_DEVICE_ORDER=PCI_BUS_ID" in note for note in machine.notes)


def test_replayed_mi300x_honours_hip_visible_devices(tmp_path, capsys, monkeypatch):
    path = tmp_path / "two.json"
    path.write_text(json.dumps(snapshot_dict(MI300X, dict(MI300X, index=1))))
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    assert main(["--replay", str(path), "--only-visible", "info", "--json"]) == 0
    assert [d["index"] for d in json.loads(capsys.readouterr().out)["devices"]] == [1]
