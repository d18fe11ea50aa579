"""AdaptiveLinear: nn.Linear whose matmul goes through the adaptive dispatcher.

It *is* an nn.Linear (same parameters, same state_dict keys, isinstance checks still pass), so it drops into
existing models; `from_linear` converts one in place of the other, sharing its parameters. This module
imports torch, so the package imports it only when AdaptiveLinear is first asked for.
"""

from __future__ import annotations

from torch import Tensor, nn

from .dispatch import Dispatcher, default_dispatcher


class AdaptiveLinear(nn.Linear):
    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
        dispatcher: Dispatcher | None = None,
    ) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.dispatcher = dispatcher
        self.last_kernel: str | None = None  # the kernel the latest forward used

    def forward(self, x: Tensor) -> Tensor:
        y, self.last_kernel = (self.dispatcher or default_dispatcher()).matmul_with_info(x, self.weight)
        return y if self.bias is None else y + self.bias.to(y.dtype)

    @classmethod
    def from_linear(cls, linear: nn.Linear, dispatcher: Dispatcher | None = None) -> AdaptiveLinear:
        """An AdaptiveLinear sharing `linear`'s weight and bias tensors."""
        new = cls(
            linear.in_features, linear.out_features, bias=linear.bias is not None, device="meta", dispatcher=dispatcher
        )
        new.weight = linear.weight
        new.bias = linear.bias
        return new

    def extra_repr(self) -> str:
        return super().extra_repr() + ", adaptive"
