"""AdaptiveLinear: nn.Linear whose matmul goes through the adaptive dispatcher.

It *is* an nn.Linear (same parameters, same state_dict keys, isinstance checks still pass), so it drops into
existing models; `from_linear` converts one in place of the other, sharing its parameters. fp8 only with
`allow_fp8=True`: without it, a forward under torch.no_grad() on Hopper or Ada runs bf16 like training does,
rather than switching to per-tensor fp8 and moving its outputs by a few percent. `last_kernel` says which
kernel the latest forward used. This module imports torch: gpudash.ops imports it on first use.
"""

from __future__ import annotations

from torch import Tensor, nn

from gpudash.ops.dispatching import Dispatcher, for_call


class AdaptiveLinear(nn.Linear):
    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
        dispatcher: Dispatcher | None = None,
        allow_fp8: bool = False,
    ) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.dispatcher = dispatcher  # None: gpudash.ops' default (every plugin source)
        self.allow_fp8 = allow_fp8
        self.last_kernel: str | None = None  # the kernel the latest forward used

    def forward(self, x: Tensor) -> Tensor:
        y, self.last_kernel = for_call(self.dispatcher, self.allow_fp8).matmul_with_info(x, self.weight)
        return y if self.bias is None else y + self.bias.to(y.dtype)

    @classmethod
    def from_linear(
        cls, linear: nn.Linear, dispatcher: Dispatcher | None = None, allow_fp8: bool = False
    ) -> AdaptiveLinear:
        """An AdaptiveLinear sharing `linear`'s weight and bias tensors."""
        new = cls(
            linear.in_features,
            linear.out_features,
            bias=linear.bias is not None,
            device="meta",
            dispatcher=dispatcher,
            allow_fp8=allow_fp8,
        )
        new.weight = linear.weight
        new.bias = linear.bias
        return new

    def extra_repr(self) -> str:
        return super().extra_repr() + (", adaptive, fp8 allowed" if self.allow_fp8 else ", adaptive")
