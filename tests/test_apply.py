"""gpudash.apply: loading an export (TOML or JSON) and turning it into PyTorch / Lightning / accelerate / HF
arguments, the autocast context, the GradScaler and the environment."""

from __future__ import annotations

import os

import pytest
import torch

from gpudash.actions.export import write_export
from gpudash.apply import ExportFileError, PerProcess, load
from gpudash.errors import GpudashError
from gpudash.models import DeviceInfo
from gpudash.recommend import facts_for, recommend
from gpudash.recommend.facts import BatchTrial


def exported(tmp_path, device: DeviceInfo, fmt: str = "toml", **kw):
    path = tmp_path / f"settings.{fmt}"
    write_export(recommend(facts_for(device, **kw)), str(path), fmt)
    return path


A100 = DeviceInfo(
    vendor="nvidia", index=0, name="A100", compute_capability="8.0", memory_total_bytes=80 << 30, torch_index=0
)
V100 = DeviceInfo(vendor="nvidia", index=0, name="V100", compute_capability="7.0", memory_total_bytes=16 << 30)
TRIAL = BatchTrial(largest_ok=70, first_oom=71, trials=((2, True),), limit=256, dtype="bfloat16")


@pytest.mark.parametrize("fmt", ["toml", "json"])
def test_bf16_export_to_framework_kwargs(tmp_path, fmt):
    s = load(exported(tmp_path, A100, fmt, batch_trial=TRIAL, host_logical_cores=16, accelerators_on_host=2))
    # int(70 * 0.9) = 63 fits; ceil(256 / 63) = 5 steps; ceil(256 / 5) = 52
    assert (s.dtype, s.loss_scaling, s.batch_size, s.gradient_accumulation_steps) == ("bfloat16", "none", 52, 5)
    assert s.lightning_kwargs() == {"precision": "bf16-mixed", "accumulate_grad_batches": 5}
    assert s.accelerate_kwargs() == {"mixed_precision": "bf16", "gradient_accumulation_steps": 5}
    assert s.hf_training_args_kwargs() == {
        "bf16": True,
        "fp16": False,
        "tf32": True,
        "per_device_train_batch_size": 52,
        "gradient_accumulation_steps": 5,
        "dataloader_num_workers": 7,
        "dataloader_pin_memory": True,
        "dataloader_persistent_workers": True,
    }
    assert s.dataloader_kwargs() == {"num_workers": 7, "pin_memory": True, "batch_size": 52, "persistent_workers": True}
    assert not s.grad_scaler().is_enabled()  # a disabled scaler, as gpudash.amp gives: never None
    assert s.torch_dtype() is torch.bfloat16 and s.torch_index == 0


def test_world_size_divides_the_accumulation(tmp_path, monkeypatch):
    s = load(exported(tmp_path, A100, batch_trial=TRIAL, host_logical_cores=16, accelerators_on_host=2))
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert s.per_process() == PerProcess(1, 52, 5, 260)  # one process: the export as written
    # 8 processes: ceil(5 / 8) = 1 step, the batch evened out to ceil(260 / 8) = 33 (<= 52, so it still fits)
    assert s.per_process(8) == PerProcess(8, 33, 1, 264)
    assert s.lightning_kwargs(8) == {"precision": "bf16-mixed", "accumulate_grad_batches": 1}
    assert s.accelerate_kwargs(8)["gradient_accumulation_steps"] == 1
    hf = s.hf_training_args_kwargs(8)
    assert (hf["per_device_train_batch_size"], hf["gradient_accumulation_steps"]) == (33, 1)
    assert s.dataloader_kwargs(8)["batch_size"] == 33
    # 2 processes: ceil(5 / 2) = 3 steps of ceil(260 / 6) = 44: 264 over both
    assert s.per_process(2) == PerProcess(2, 44, 3, 264)
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets it
    assert s.lightning_kwargs()["accumulate_grad_batches"] == 3
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ExportFileError, match="WORLD_SIZE='two': expected a positive integer"):
        s.hf_training_args_kwargs()
    with pytest.raises(ExportFileError, match="world_size: expected a positive integer"):
        s.per_process(0)


def test_rocm_export_never_asks_transformers_for_tf32(tmp_path):
    mi300 = DeviceInfo(
        vendor="amd", index=0, name="AMD Instinct MI300X", gfx_target="gfx942", memory_total_bytes=192 << 30
    )
    path = exported(tmp_path, mi300)
    s = load(path)
    assert s.tf32 is True and s.hf_training_args_kwargs()["tf32"] is False  # torch's TF32 (xf32) stays on
    # an export written before the fix said true; apply() still never hands it to transformers on ROCm
    path.write_text(path.read_text().replace("tf32 = false", "tf32 = true"))
    assert load(path).hf_training_args_kwargs()["tf32"] is False


def test_fp16_export_gives_a_grad_scaler(tmp_path):
    s = load(exported(tmp_path, V100))
    assert (s.dtype, s.loss_scaling, s.lightning_kwargs()["precision"]) == ("float16", "dynamic", "16-mixed")
    scaler = s.grad_scaler("cpu")
    assert isinstance(scaler, torch.amp.GradScaler)
    with s.autocast("cpu"):
        out = torch.nn.Linear(8, 8)(torch.randn(2, 8))
    assert out.dtype is torch.float16
    assert s.batch_size is None and "per_device_train_batch_size" not in s.hf_training_args_kwargs()


@pytest.mark.parametrize("device", [A100, DeviceInfo(vendor="cpu", index=0, name="cpu", cpu_features=["avx2"])])
def test_the_readme_training_step_runs_for_every_dtype(tmp_path, device):
    """Issue 22: grad_scaler() was None for bf16 and fp32, so the README's `scaler.scale(loss)` crashed there;
    it is now a disabled GradScaler, as gpudash.amp's AmpConfig.grad_scaler() and torch's enabled=False give."""
    from gpudash.amp import AmpConfig

    s = load(exported(tmp_path, device, host_logical_cores=2))
    assert s.loss_scaling == "none"
    scaler = s.grad_scaler("cpu")
    amp = AmpConfig(dtype=s.dtype, device="cpu", loss_scaling=s.loss_scaling)
    assert isinstance(scaler, torch.amp.GradScaler) and scaler.is_enabled() is amp.grad_scaler().is_enabled() is False
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    loss = model(torch.ones(2, 4)).pow(2).mean()
    assert scaler.scale(loss) is loss  # passes the loss through
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert not torch.equal(model.weight, before)  # the optimizer stepped


def test_cpu_fp32_export(tmp_path):
    cpu = DeviceInfo(vendor="cpu", index=0, name="cpu", cpu_features=["avx2"], memory_total_bytes=8 << 30)
    s = load(exported(tmp_path, cpu, host_logical_cores=2))
    assert s.device_type == "cpu" and s.dtype == "float32"
    with s.autocast():
        out = torch.nn.Linear(4, 4)(torch.randn(1, 4))
    assert out.dtype is torch.float32 and not s.grad_scaler().is_enabled()
    assert s.hf_training_args_kwargs()["use_cpu"] is True
    assert s.accelerate_kwargs()["mixed_precision"] == "no"


def test_apply_torch_backends(tmp_path):
    s = load(exported(tmp_path, A100))
    before = torch.get_float32_matmul_precision()
    try:
        assert s.apply_torch_backends() == {"float32_matmul_precision": "high", "allow_tf32": True}
        assert torch.get_float32_matmul_precision() == "high"
    finally:
        torch.set_float32_matmul_precision(before)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = True


def test_apply_env(tmp_path, monkeypatch):
    s = load(exported(tmp_path, A100))
    monkeypatch.delenv("PYTORCH_CUDA_ALLOC_CONF", raising=False)
    assert s.apply_env() == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "expandable_segments:True"
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")
    assert s.apply_env() == {}  # the user's own value is kept
    assert os.environ["PYTORCH_CUDA_ALLOC_CONF"] == "max_split_size_mb:128"
    assert s.apply_env(overwrite=True) == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_missing_file_names_it(tmp_path):
    with pytest.raises(ExportFileError, match=r"nope\.toml: export file not found"):
        load(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace('dtype = "bfloat16"', 'dtype = "bfloat17"'), r"amp\.dtype: expected one of"),
        (lambda t: t.replace("[amp]\n", "[amp_]\n"), r"missing key amp\.dtype"),
        (lambda t: t.replace("num_workers = 0", "num_workers = -1"), r"dataloader\.num_workers: expected at least 0"),
        (lambda t: t.replace("version = 1", 'version = "1"'), r"gpudash\.version: expected int"),
        (lambda t: t.replace("version = 1", "version = 2"), r"gpudash\.version: this gpudash reads version 1"),
        (lambda t: t + "\n[[broken", r"not valid TOML"),
    ],
)
def test_invalid_files_name_the_file_and_key(tmp_path, edit, message):
    path = exported(tmp_path, A100, host_logical_cores=1, accelerators_on_host=1)
    path.write_text(edit(path.read_text()))
    with pytest.raises(ExportFileError, match=message) as exc:
        load(path)
    assert str(path) in str(exc.value)
    assert isinstance(exc.value, GpudashError) and isinstance(exc.value, ValueError)


def test_invalid_json(tmp_path):
    path = tmp_path / "s.json"
    path.write_text("{not json")
    with pytest.raises(ExportFileError, match="not valid JSON"):
        load(path)
