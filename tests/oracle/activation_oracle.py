#!/usr/bin/python3
"""The activation oracle: the published per-rank activation estimate.

An independent Python statement of the formula in Korthikanti et al.,
"Reducing Activation Recomputation in Large Transformer Models" (2022,
arXiv 2205.05198), written from the paper's Section 4, not from the C++
side: every tensor the paper lists as stored for the backward pass of one
transformer layer (Sec. 4.1), summed here one by one, at 16-bit activations
and 1-byte dropout masks; Table 2's last row (full recomputation: only each
layer's 2sbh input); and the terms outside the layers (Sec. 4, total
activations memory) at tensor parallel t = 1 and pipeline p = 1. Flash
attention stores no s x s scores: the three score terms are dropped.

Input, one JSON object a line with --jsonl (integers as numbers or decimal
strings):
  {"shape": {"num_layers": L, "hidden_size": h, "num_attention_heads": a,
             "vocab_size": v},
   "workload": {"micro_batch": b, "sequence_length": s,
                "activation_checkpointing": B, "flash_attention": B},
   "adapters": {"rank": r, "dropout": B, "modules": [{"in_features": n,
                "in_layer": B}, ...]}}   (optional: LoRA, docs/lora.md)
Output, one line each: {"per_layer_bytes": "N", "layers_bytes": "N",
  "embedding_dropout_bytes": "N", "final_norm_bytes": "N",
  "output_input_bytes": "N", "logits_bytes": "N", "adapter_bytes": "N",
  "total_bytes": "N"}
(decimal strings, as protobuf's JSON prints uint64), or {"error": "..."}
naming the field: a zero size ("workload.micro_batch must be at least 1"),
or the first part past 2^64-1 ("activations.layers_bytes exceeds ...").
"""

import json
import sys

U64_MAX = 2**64 - 1

SHAPE_FIELDS = ("num_layers", "hidden_size", "num_attention_heads",
                "vocab_size")
WORKLOAD_FIELDS = ("micro_batch", "sequence_length")
PARTS = ("per_layer_bytes", "layers_bytes", "embedding_dropout_bytes",
         "final_norm_bytes", "output_input_bytes", "logits_bytes",
         "adapter_bytes", "total_bytes")


class ActivationError(ValueError):
    """An input the estimate refuses; the message names the field."""


def layer_terms(s, b, h, a):
    """Sec. 4.1: what one layer stores, as (name, bytes, is_score_term)."""
    return [
        # Attention block: 11sbh + 5as^2b.
        ("QKV input", 2 * s * b * h, False),
        ("Q and K for QK^T", 4 * s * b * h, False),
        ("softmax output", 2 * a * s * s * b, True),
        ("softmax dropout mask", a * s * s * b, True),
        ("dropout output for attention over V", 2 * a * s * s * b, True),
        ("V for attention over V", 2 * s * b * h, False),
        ("output projection input", 2 * s * b * h, False),
        ("attention dropout mask", s * b * h, False),
        # MLP block: 19sbh.
        ("first linear input", 2 * s * b * h, False),
        ("second linear input (4h wide)", 8 * s * b * h, False),
        ("GeLU input (4h wide)", 8 * s * b * h, False),
        ("MLP dropout mask", s * b * h, False),
        # The two layer norms: 4sbh.
        ("first layer norm input", 2 * s * b * h, False),
        ("second layer norm input", 2 * s * b * h, False),
    ]


def per_layer(s, b, h, a, checkpointing, flash):
    """One layer's bytes: Table 2's first row, without score terms under
    flash attention, or its last row (2sbh) under full recomputation."""
    if checkpointing:
        return 2 * s * b * h
    return sum(n for _, n, score in layer_terms(s, b, h, a)
               if not (flash and score))


def adapter_terms(s, b, adapters, checkpointing):
    """What the LoRA adapters store, module by module (PEFT's lora.Linear
    forward: lora_B(lora_A(dropout(x))) * scaling): lora_B's input, the
    r-wide intermediate (2sbr); with dropout the mask (sb x in, 1 byte) and
    its output, lora_A's input (2sb x in); without dropout lora_A reads x
    itself, which the layer's own terms count. A recomputed layer keeps
    none of its modules' tensors."""
    terms = []
    for m in adapters.get("modules", []) if adapters else []:
        if checkpointing and m["in_layer"]:
            continue
        terms.append(("lora_B input", 2 * s * b * adapters["rank"]))
        if adapters.get("dropout"):
            terms.append(("lora dropout mask", s * b * m["in_features"]))
            terms.append(("lora_A input", 2 * s * b * m["in_features"]))
    return terms


def estimate(shape, workload, adapters=None):
    """The parts and total (Python ints); raises ActivationError."""
    s, b = workload["sequence_length"], workload["micro_batch"]
    L, h = shape["num_layers"], shape["hidden_size"]
    a, v = shape["num_attention_heads"], shape["vocab_size"]
    one = per_layer(s, b, h, a, workload["activation_checkpointing"],
                    workload["flash_attention"])
    parts = {
        "per_layer_bytes": one,
        "layers_bytes": L * one,
        # Sec. 4, outside the layers, at p = 1 and t = 1:
        "embedding_dropout_bytes": s * b * h,  # sbhp/t: the mask
        "final_norm_bytes": 2 * s * b * h,  # the last layer norm's input
        "output_input_bytes": 2 * s * b * h,  # the output layer's input
        "logits_bytes": 4 * s * b * v,  # fp32 logits for cross entropy
        "adapter_bytes": sum(n for _, n in adapter_terms(
            s, b, adapters, workload["activation_checkpointing"])),
    }
    parts["total_bytes"] = sum(parts[p] for p in PARTS[1:-1])
    for p in PARTS:
        if parts[p] > U64_MAX:
            raise ActivationError(f"activations.{p} exceeds 2^64-1 bytes")
    return parts


def read_request(request):
    """(shape, workload, adapters) from a request dict; raises
    ActivationError."""
    shape = {f: int(request["shape"][f]) for f in SHAPE_FIELDS}
    w = request["workload"]
    workload = {f: int(w[f]) for f in WORKLOAD_FIELDS}
    workload["activation_checkpointing"] = bool(
        w.get("activation_checkpointing", False))
    workload["flash_attention"] = bool(w.get("flash_attention", False))
    for f in WORKLOAD_FIELDS:
        if workload[f] == 0:
            raise ActivationError(f"workload.{f} must be at least 1")
    for f in SHAPE_FIELDS:
        if shape[f] == 0:
            raise ActivationError(f"shape.{f} must be at least 1")
    return shape, workload, request.get("adapters")


def answer(line):
    """One JSON answer line for one JSON request line."""
    try:
        parts = estimate(*read_request(json.loads(line)))
    except ActivationError as e:
        return json.dumps({"error": str(e)})
    return json.dumps({p: str(parts[p]) for p in PARTS})


def main(argv):
    if argv[1:] != ["--jsonl"]:
        print(__doc__, file=sys.stderr)
        return 2
    for line in sys.stdin:
        if line.strip():
            print(answer(line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
