"""CPU tensors that play a ROCm GPU with one of the compatibility guide's bugs planted (there is no GPU here).

A tensor of one of these classes is "on the device": the planted operation on it gives zeros, as the guide
reports; everything that reaches the CPU (.cpu(), .to("cpu")) becomes a plain tensor again, on which every
operation is correct, as the CPU's are. `on_device(t, Fault)` puts a CPU tensor "on the device".
"""

from __future__ import annotations

import torch


def _moves_to_cpu(name: str, args, kwargs) -> bool:
    if name == "cpu":
        return True
    if name != "to":
        return False
    wanted = [*args[1:], kwargs.get("device")]
    return any(isinstance(a, (str, torch.device)) and str(a) == "cpu" for a in wanted)


class DeviceFault(torch.Tensor):
    """No fault: a correct device."""

    def planted(self, name: str, source: torch.Tensor, out: torch.Tensor, to_cpu: bool) -> bool:
        return False

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = super().__torch_function__(func, types, args, kwargs)
        name = getattr(func, "__name__", "")
        source = args[0] if args else None
        if not (isinstance(source, DeviceFault) and isinstance(out, torch.Tensor)):
            return out
        to_cpu = _moves_to_cpu(name, args, kwargs)
        plain = out.as_subclass(torch.Tensor)
        if cls.planted(source, name, source, out, to_cpu):
            return torch.zeros_like(plain) if to_cpu else torch.zeros_like(plain).as_subclass(cls)
        return plain if to_cpu else out


class ConversionFault(DeviceFault):
    """bf16 -> fp32 on the device (.to(torch.float32), .float()) gives zeros: the guide's first row."""

    def planted(self, name, source, out, to_cpu):
        return not to_cpu and source.dtype == torch.bfloat16 and out.dtype == torch.float32


class CopyFault(DeviceFault):
    """bf16 data copied from the device to the CPU arrives as zeros: the guide's cache save/load problem."""

    def planted(self, name, source, out, to_cpu):
        return to_cpu and source.dtype == torch.bfloat16


class HalfFault(DeviceFault):
    """bf16 -> fp16 (.half()) on the device gives zeros: a fault in a row the guide says works."""

    def planted(self, name, source, out, to_cpu):
        return name == "half" and source.dtype == torch.bfloat16


def on_device(tensor: torch.Tensor, fault: type[DeviceFault]) -> torch.Tensor:
    return tensor.clone().as_subclass(fault)
