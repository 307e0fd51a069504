"""The warning of a layout whose chunks dwarf what they hold (LoRA-style
models: ColossalAI's search sizes chunks on every parameter, frozen ones
included, while frozen parameters get no chunk); the same lines the C++
command line prints (client/cli/padding_warning.h)."""

from chunkplan.colossalai_export import chunk_config_dict_literal

_INDENT = " " * 16


def suggested_configs(layout):
    """Per group of `layout`, in order, one chunk of its placed elements
    rounded up to a multiple of its dp degree (at least the degree), not
    kept gathered: a config_dict."""
    configs = {}
    for group in layout.groups:
        degree = max(group.dp_degree, 1)
        used = sum(chunk.used for chunk in group.chunks)
        configs[degree] = {"chunk_size": max(degree, -(-used // degree)
                                             * degree),
                           "keep_gathered": False}
    return configs


def padding_warning(layout):
    """[] when the layout's padding (allocated minus placed elements) is at
    most the elements it places; else a blank line and three lines: the
    figures (padding as a share of placed elements), why the search's
    settings cannot shrink the chunks, and suggested_configs as a
    chunk_config_dict literal."""
    chunks = [c for group in layout.groups for c in group.chunks]
    placed = sum(c.used for c in chunks)
    padding = sum(c.size for c in chunks) - placed
    if padding <= placed:
        return []
    share = "-" if placed == 0 else "%.2f%%" % (100.0 * padding / placed)
    return [
        "",
        "warning         the chunks dwarf what they hold: %d elements placed "
        "in %d allocated, padding %d elements = %s of placed" % (
            placed, placed + padding, padding, share),
        _INDENT + "ColossalAI's search sizes chunks on every parameter, "
        "frozen ones included, but frozen parameters get no chunk; neither "
        "the layout objectives (their candidates start at the largest "
        "parameter) nor min_chunk_size_m (a kept-gathered group is as large "
        "as all its parameters) makes them smaller",
        _INDENT + "try chunk sizes of your own, one chunk per group "
        "(configs; GeminiPlugin's chunk_config_dict): " +
        chunk_config_dict_literal(suggested_configs(layout)),
    ]
