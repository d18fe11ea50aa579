"""Train a small model with the settings from a `gpudash export` file.

    gpudash export -o gpudash.toml          # or --bench none for spec facts only
    python examples/train_with_gpudash.py gpudash.toml --steps 40

It applies everything the file says that plain PyTorch can use: the environment variables, TF32 and the
float32 matmul precision, the autocast dtype, a GradScaler when loss scaling is dynamic, gradient
accumulation, and the dataloader settings. The task is a synthetic regression (learn a fixed random linear
map through a small MLP), so the loss must go down within a few dozen steps on any device.
If the file was exported for a GPU and there is none here, it says so and trains on the CPU with the same
dtype (CPU autocast accepts bf16 and fp16).
"""

from __future__ import annotations

import argparse
import sys

from gpudash.apply import ExportFileError, load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("settings", help="the exported TOML or JSON file")
    parser.add_argument("--steps", type=int, default=40, help="optimizer steps (default 40)")
    parser.add_argument(
        "--max-batch",
        type=int,
        default=64,
        help="cap on the exported batch size, which was found for a much larger model (default 64)",
    )
    parser.add_argument(
        "--max-accumulation",
        type=int,
        default=4,
        help="cap on the exported accumulation steps, to keep the demo short (default 4)",
    )
    args = parser.parse_args(argv)
    try:
        settings = load(args.settings)
    except ExportFileError as exc:
        print(f"train_with_gpudash: error: {exc}", file=sys.stderr)
        return 2

    env = settings.apply_env()  # before torch touches the GPU
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    backends = settings.apply_torch_backends()
    device_type = settings.device_type
    if device_type == "cuda" and not torch.cuda.is_available():
        print(
            f"note: {args.settings} is for a GPU ({settings.tree['gpudash'].get('device')}), and this machine "
            "has none: training on the CPU with the same settings"
        )
        device_type = "cpu"
    device = torch.device(device_type, settings.torch_index or 0) if device_type == "cuda" else torch.device("cpu")

    batch = min(settings.batch_size or 32, args.max_batch)
    accumulation = min(settings.gradient_accumulation_steps or 1, args.max_accumulation)
    loader_kwargs = settings.dataloader_kwargs()
    loader_kwargs.update(batch_size=batch, shuffle=True, drop_last=True)
    if device.type != "cuda":
        loader_kwargs["pin_memory"] = False  # pinning needs a GPU
    scaler = settings.grad_scaler(device.type)
    print(
        f"settings: {settings.path} (device {settings.tree['gpudash'].get('device')}, "
        f"{'replayed' if settings.replayed else 'live'})"
    )
    print(
        f"  amp dtype {settings.dtype}, loss scaling {settings.loss_scaling}, tf32 {backends['allow_tf32']}, "
        f"float32 matmul precision {backends['float32_matmul_precision']}"
    )
    print(
        f"  batch {batch} (exported {settings.batch_size}), accumulation {accumulation} "
        f"(exported {settings.gradient_accumulation_steps}), workers {loader_kwargs['num_workers']}, "
        f"pin_memory {loader_kwargs['pin_memory']}, env set {sorted(env) or 'none'}"
    )
    print(f"  training on {device}, GradScaler {'on' if scaler.is_enabled() else 'off'}")

    torch.manual_seed(0)
    features, outputs = 32, 8
    target_map = torch.randn(features, outputs)
    x = torch.randn(batch * accumulation * 16, features)
    y = x @ target_map
    loader = DataLoader(TensorDataset(x, y), **loader_kwargs)
    model = nn.Sequential(nn.Linear(features, 128), nn.GELU(), nn.Linear(128, outputs)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

    losses: list[float] = []
    step, micro = 0, 0
    data = iter(loader)
    while step < args.steps:
        try:
            xb, yb = next(data)
        except StopIteration:
            data = iter(loader)
            xb, yb = next(data)
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        with settings.autocast(device.type):
            loss = nn.functional.mse_loss(model(xb).float(), yb) / accumulation
        scaler.scale(loss).backward()  # a disabled scaler (bf16, fp32) returns the loss as it is
        micro += 1
        if micro % accumulation:
            continue
        scaler.step(optimizer)  # disabled: optimizer.step()
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item() * accumulation)
        step += 1
        if step == 1 or step % 10 == 0 or step == args.steps:
            print(f"step {step:4d}  loss {losses[-1]:.4f}")
    first, last = sum(losses[:3]) / 3, sum(losses[-3:]) / 3
    verdict = "went down" if last < first else "did NOT go down"
    print(f"loss {verdict}: {first:.4f} -> {last:.4f} over {args.steps} steps")
    return 0 if last < first else 1


if __name__ == "__main__":
    raise SystemExit(main())
