"""Which model the batch size is for, and the analytic memory formula for the reference transformer.

The reference model (gpudash/recommend/reference_model.py) is a GPT-style decoder built from config [model]:
token and position embeddings, `layers` pre-norm TransformerEncoderLayers (GELU MLP of 4 x hidden, causal
attention through SDPA), a final LayerNorm and an LM head tied to the token embedding, cross-entropy loss.
A user's own model comes from config model.factory = "module:function" returning (model, sample_batch).

The analytic formula is used only when nothing may run (`--bench none`). Its constants count the tensors
the reference block keeps for backward, per token: 16 hidden-sized tensors (4 bytes each in fp32; with
16-bit autocast the matmul operands and outputs are kept in 2 bytes: 36 bytes), and for the logits about
12 bytes per vocabulary entry (logits, their fp32 copy and the log-softmax output, or their gradient).
tests/test_batch.py holds the formula to within 15 % of a MemTracker trace.
"""

from __future__ import annotations

from typing import Any

from gpudash.recommend.facts import ModelMemory

LAYER_BYTES_PER_TOKEN_HIDDEN = {"float32": 64, "bfloat16": 36, "float16": 36}
LOGIT_BYTES_PER_TOKEN_VOCAB = 12
REFERENCE_KEYS = ("layers", "hidden", "heads", "seq_len", "vocab")


def model_spec(config: dict[str, Any]) -> dict[str, Any]:
    """The JSON-able description of the model to size, from config [model]."""
    model = config["model"]
    if model.get("factory"):
        return {"kind": "factory", "factory": model["factory"]}
    return {"kind": "reference", **{k: int(model[k]) for k in REFERENCE_KEYS}}


def describe(spec: dict[str, Any]) -> str:
    if spec["kind"] == "factory":
        return spec["factory"]
    return (
        "reference transformer ({layers} layers, hidden {hidden}, {heads} heads, seq_len {seq_len}, vocab {vocab})"
    ).format(**spec)


def reference_param_count(spec: dict[str, Any]) -> int:
    """Exact parameter count of the reference model (the LM head shares the token embedding)."""
    h, layers = spec["hidden"], spec["layers"]
    per_layer = 12 * h * h + 13 * h  # qkv 3h^2+3h, out h^2+h, MLP 8h^2+5h, two LayerNorms 4h
    return spec["vocab"] * h + spec["seq_len"] * h + layers * per_layer + 2 * h


def analytic_memory(spec: dict[str, Any], dtype: str) -> ModelMemory:
    s, h = spec["seq_len"], spec["hidden"]
    params = reference_param_count(spec)
    per_sample = (
        spec["layers"] * s * h * LAYER_BYTES_PER_TOKEN_HIDDEN[dtype] + s * spec["vocab"] * LOGIT_BYTES_PER_TOKEN_VOCAB
    )
    mask = s * s * 4  # the fp32 causal mask
    casts = 2 * params if dtype != "float32" else 0  # autocast keeps 16-bit copies of the weights for backward
    return ModelMemory(describe(spec), params, per_sample, dtype, "analytic", "estimated", fixed_bytes=mask + casts)


def traced_memory(spec: dict[str, Any], dtype: str, timeout_s: float) -> tuple[ModelMemory | None, str]:
    """The model's memory traced on the CPU in a child process (recommend/memory_task.py): (ModelMemory, "") or
    (None, why the trace failed). The export and gpudash.runtime both size batches from it."""
    from gpudash.measure.runner import Task, run_one

    task = Task("gpudash.recommend.memory_task:trace_memory", {"spec": spec, "dtype": dtype}, timeout_s=timeout_s)
    task.name = "memory trace"
    res = run_one(task)
    if not res.ok:
        return None, f"the memory trace failed ({res.status}: {res.error})"
    v = res.value
    traced = ModelMemory(
        describe(spec),
        v["param_count"],
        v["activation_bytes_per_sample"],
        v["dtype"],
        "traced",
        "measured",
        v["fixed_bytes"],
    )
    return traced, ""
