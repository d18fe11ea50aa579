"""AdaptiveAttention: multi-head self- (or cross-) attention whose precision follows the dispatcher's rules.

The query/key/value and output projections are AdaptiveLinear layers. The attention itself is
torch.nn.functional.scaled_dot_product_attention, run in the precision the dispatcher picks for this device and
these shapes (bf16 where the architecture has it natively, fp16 on Volta/Turing and RDNA3/3.5, fp32 elsewhere:
the rules of gpudash's adaptive kernels), then cast back to the input's dtype. Within that dtype torch picks
its fused backend (flash, memory-efficient, cuDNN or math); `last_backend` reports the one it chose.

fp8 is never used inside the attention: scaled_dot_product_attention has no fp8 path, so an fp8 kernel the
dispatcher would allow (allow_fp8=True) counts for the projections only, and the attention takes the next
candidate. This module imports torch: gpudash.ops imports it on first use.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from gpudash.ops.dispatching import Dispatcher, for_call, is_fp8
from gpudash.ops.linear import AdaptiveLinear

# The precision a dispatcher kernel names -> the dtype scaled_dot_product_attention runs in.
SDPA_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}


def _backend_name(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout: float, causal: bool) -> str | None:
    """The fused backend torch's own selection takes for these inputs (torch._fused_sdp_choice), if it says."""
    try:
        from torch.nn.attention import SDPBackend

        return SDPBackend(torch._fused_sdp_choice(q, k, v, mask, dropout, causal)).name.lower()
    except Exception:  # a private helper: absent or changed in another torch
        return None


class AdaptiveAttention(nn.Module):
    """Attention over (batch, sequence, embed_dim) inputs, like nn.MultiheadAttention(batch_first=True)."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        *,
        causal: bool = False,
        device=None,
        dtype=None,
        dispatcher: Dispatcher | None = None,
        allow_fp8: bool = False,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim {embed_dim} is not divisible by num_heads {num_heads}")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout, self.causal = dropout, causal
        self.dispatcher, self.allow_fp8 = dispatcher, allow_fp8
        make = {"bias": bias, "device": device, "dtype": dtype, "dispatcher": dispatcher, "allow_fp8": allow_fp8}
        self.q_proj = AdaptiveLinear(embed_dim, embed_dim, **make)
        self.k_proj = AdaptiveLinear(embed_dim, embed_dim, **make)
        self.v_proj = AdaptiveLinear(embed_dim, embed_dim, **make)
        self.out_proj = AdaptiveLinear(embed_dim, embed_dim, **make)
        self.last_precision: str | None = None  # the precision the latest attention ran in ("bf16", ...)
        self.last_backend: str | None = None  # torch's fused backend for it ("flash_attention", "math", ...)

    def attention_precision(self, x: Tensor) -> str:
        """The precision the dispatcher's rules give this device for the attention's matmuls (never fp8)."""
        dispatcher = for_call(self.dispatcher, False)
        device = dispatcher.device_for(x)
        rows = x.reshape(-1, x.shape[-1]).shape[0]
        grad = torch.is_grad_enabled() and (x.requires_grad or any(p.requires_grad for p in self.parameters()))
        query = dispatcher.query(
            device, (rows, self.embed_dim), (self.embed_dim, self.embed_dim), str(x.dtype).removeprefix("torch."), grad
        )
        for kernel in dispatcher.candidates(query):
            if not is_fp8(kernel) and kernel.precision in SDPA_DTYPES:
                return kernel.precision
        return "fp32"

    def _heads(self, t: Tensor) -> Tensor:
        batch, length, _ = t.shape
        return t.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        attn_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """Self-attention when key and value are None. `attn_mask` as for scaled_dot_product_attention (boolean:
        True takes part; float: added to the scores). Returns (batch, query length, embed_dim) in query's dtype."""
        if query.dim() != 3 or query.shape[-1] != self.embed_dim:
            raise ValueError(f"query must be (batch, sequence, {self.embed_dim}), got shape {tuple(query.shape)}")
        key = query if key is None else key
        value = key if value is None else value
        causal = self.causal if is_causal is None else is_causal
        precision = self.attention_precision(query)
        dtype = SDPA_DTYPES[precision]
        q = self._heads(self.q_proj(query)).to(dtype)
        k = self._heads(self.k_proj(key)).to(dtype)
        v = self._heads(self.v_proj(value)).to(dtype)
        mask = attn_mask if attn_mask is None or attn_mask.dtype == torch.bool else attn_mask.to(dtype)
        dropout = self.dropout if self.training else 0.0
        self.last_precision = precision
        self.last_backend = _backend_name(q, k, v, mask, dropout, causal)
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, is_causal=causal)
        batch, length = query.shape[0], query.shape[1]
        merged = out.transpose(1, 2).reshape(batch, length, self.embed_dim).to(query.dtype)
        return self.out_proj(merged)

    def extra_repr(self) -> str:
        fp8 = ", fp8 allowed in the projections" if self.allow_fp8 else ""
        return (
            f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}, causal={self.causal}{fp8}"
        )
