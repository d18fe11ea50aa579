"""AdaptiveLinear lives in gpudash.ops, its public home (fp8 only with allow_fp8=True); this name stays for
code that imported it from the plugin."""

from __future__ import annotations

from gpudash.ops.linear import AdaptiveLinear

__all__ = ["AdaptiveLinear"]
