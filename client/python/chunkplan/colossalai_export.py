"""A chosen configuration in the form ColossalAI takes it in place of its
own search: GeminiPlugin's keyword arguments, with the `chunk_config_dict`
of GeminiPlugin(chunk_config_dict=...) and GeminiDDP, which ChunkManager
reads as {dp_degree: {"chunk_size": int, "keep_gathered": bool}} — the
shape, and the order, of the config_dict that search_chunk_configuration
returns (kept-gathered groups and searched ones as the seed builds them).
"""

from chunkplan.v1 import chunk_search_pb2


def gemini_plugin_kwargs(config_dict, gemini):
    """GeminiPlugin's keyword arguments for `config_dict` laid out with
    `gemini` (a chunkplan.v1 GeminiSettings): {"chunk_config_dict": a copy
    of config_dict, "precision": "fp16" or "bf16", "master_weights",
    "enable_gradient_accumulation", "pin_memory"} (the optimizer is not a
    GeminiPlugin argument), and the mesh's "tp_size" (with
    "enable_sequence_parallelism") and "extra_dp_size" where above 1."""
    precision = chunk_search_pb2.Precision.Name(gemini.precision)
    kwargs = {"chunk_config_dict": {d: dict(c)
                                    for d, c in config_dict.items()},
              "precision": precision.removeprefix("PRECISION_").lower(),
              "master_weights": gemini.master_weights,
              "enable_gradient_accumulation": gemini.gradient_accumulation,
              "pin_memory": gemini.pin_memory}
    if gemini.tp_size > 1:
        kwargs["tp_size"] = gemini.tp_size
        if gemini.enable_sequence_parallelism:
            kwargs["enable_sequence_parallelism"] = True
    if gemini.extra_dp_size > 1:
        kwargs["extra_dp_size"] = gemini.extra_dp_size
    return kwargs
