"""chunkplan.colossalai_export: GeminiPlugin's keyword arguments for a
config_dict laid out with a GeminiSettings message, named as GeminiPlugin
takes them, the config_dict copied in its order (the seed's: kept-gathered
groups first)."""

from chunkplan.colossalai_export import gemini_plugin_kwargs
from chunkplan.v1 import chunk_search_pb2 as pb

# Hand-written: a kept-gathered group first, as the seed orders them.
CONFIG_DICT = {4: {"chunk_size": 1000, "keep_gathered": True},
               2: {"chunk_size": 2048, "keep_gathered": False}}


def test_settings_named_as_geminiplugin_takes_them():
    gemini = pb.GeminiSettings(precision=pb.PRECISION_BF16,
                               master_weights=False,
                               gradient_accumulation=True, pin_memory=False,
                               optimizer=pb.OPTIMIZER_NONE)
    assert gemini_plugin_kwargs(CONFIG_DICT, gemini) == {
        "chunk_config_dict": CONFIG_DICT, "precision": "bf16",
        "master_weights": False, "enable_gradient_accumulation": True,
        "pin_memory": False}


def test_defaults_are_geminiplugins_and_the_dict_a_copy_in_order():
    kwargs = gemini_plugin_kwargs(CONFIG_DICT, pb.GeminiSettings(
        master_weights=True, pin_memory=True))
    assert kwargs["precision"] == "fp16"
    assert kwargs["master_weights"] and kwargs["pin_memory"]
    assert not kwargs["enable_gradient_accumulation"]
    assert list(kwargs["chunk_config_dict"]) == [4, 2]
    kwargs["chunk_config_dict"][4]["chunk_size"] = 1
    assert CONFIG_DICT[4]["chunk_size"] == 1000


def test_the_mesh_is_named_where_it_is_more_than_one_group():
    """GeminiPlugin's tp_size (with enable_sequence_parallelism) and
    extra_dp_size appear where above 1, as GeminiPlugin takes them."""
    kwargs = gemini_plugin_kwargs(CONFIG_DICT, pb.GeminiSettings(
        tp_size=2, extra_dp_size=2, enable_sequence_parallelism=True))
    assert kwargs["tp_size"] == 2 and kwargs["extra_dp_size"] == 2
    assert kwargs["enable_sequence_parallelism"] is True
    plain = gemini_plugin_kwargs(CONFIG_DICT, pb.GeminiSettings(tp_size=1))
    assert not {"tp_size", "extra_dp_size",
                "enable_sequence_parallelism"} & set(plain)
