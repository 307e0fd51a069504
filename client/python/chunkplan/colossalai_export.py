"""A chosen configuration in the form ColossalAI takes it in place of its
own search: the `chunk_config_dict` of GeminiPlugin(chunk_config_dict=...)
and GeminiDDP, which ChunkManager reads as {dp_degree: {"chunk_size": int,
"keep_gathered": bool}} — the shape, and the order, of the config_dict that
search_chunk_configuration returns (kept-gathered groups and searched ones
as the seed builds them).
"""

from chunkplan.v1 import chunk_search_pb2

# --emit's formats: only ColossalAI's, as a Python dict literal.
EMIT_FORMATS = ("colossalai",)


def chunk_config_dict_literal(config_dict):
    """`config_dict` ({dp_degree: {"chunk_size": int, "keep_gathered":
    bool}}, e.g. Layout.config_dict) as one line of Python source, in its
    order, that ast.literal_eval reads back as an equal dict:
    {8: {"chunk_size": 4194304, "keep_gathered": False}}. Raises TypeError
    for a degree or size that is not an int, or a flag that is not a
    bool."""
    items = []
    for degree, config in config_dict.items():
        size, kept = config["chunk_size"], config["keep_gathered"]
        for name, value, kind in (("dp_degree", degree, int),
                                  ("chunk_size", size, int),
                                  ("keep_gathered", kept, bool)):
            if type(value) is not kind:
                raise TypeError(f"{name}: expected {kind.__name__}, got "
                                f"{value!r}")
        items.append('%d: {"chunk_size": %d, "keep_gathered": %s}' % (
            degree, size, kept))
    return "{" + ", ".join(items) + "}"


def gemini_plugin_kwargs(config_dict, gemini):
    """GeminiPlugin's keyword arguments for `config_dict` laid out with
    `gemini` (a chunkplan.v1 GeminiSettings): {"chunk_config_dict": a copy
    of config_dict, "precision": "fp16" or "bf16", "master_weights",
    "enable_gradient_accumulation", "pin_memory"} (the optimizer is not a
    GeminiPlugin argument)."""
    precision = chunk_search_pb2.Precision.Name(gemini.precision)
    return {"chunk_config_dict": {d: dict(c) for d, c in config_dict.items()},
            "precision": precision.removeprefix("PRECISION_").lower(),
            "master_weights": gemini.master_weights,
            "enable_gradient_accumulation": gemini.gradient_accumulation,
            "pin_memory": gemini.pin_memory}
