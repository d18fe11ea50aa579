"""An AMD target ID as the tools print it, split into the processor and its feature flags.

LLVM's target-ID syntax (https://llvm.org/docs/AMDGPUUsage.html#target-id) is the processor followed by
`:feature+` or `:feature-` per feature the code object was built for: torch's gcnArchName prints
"gfx906:sramecc+:xnack-", rocminfo's ISA line "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", amdsmi and rocminfo's
agent name the bare "gfx942". gpudash keys its tables on the processor and keeps the flags as facts of the device.
"""

from __future__ import annotations

import re

TRIPLE_PREFIX = "amdgcn-amd-amdhsa--"
# The processor, then any feature suffixes; the form the snapshot contract accepts for gfx_target.
TARGET_ID_RE = re.compile(r"^(?:amdgcn-amd-amdhsa--)?(gfx[0-9a-f]+)((?::[a-z][a-z0-9_]*[+-])*)$")


def split_target_id(text: str) -> tuple[str, dict[str, bool]]:
    """("gfx906", {"sramecc": True, "xnack": False}) for "gfx906:sramecc+:xnack-"; of a text that is no target ID,
    the part before any colon with no flags (the architecture tables then say whether they know it)."""
    m = TARGET_ID_RE.match(text.strip())
    if not m:
        return text.split(":")[0].strip(), {}
    flags = {part[:-1]: part.endswith("+") for part in m.group(2).split(":") if part}
    return m.group(1), flags
