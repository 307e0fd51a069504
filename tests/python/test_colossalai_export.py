"""chunkplan.colossalai_export: a config_dict as the Python literal that
GeminiPlugin(chunk_config_dict=...) takes, in the shape and order of the
seed's config_dict (/work/shared/seed/search_utils.py.txt builds
dict(chunk_size=..., keep_gathered=...) per degree, kept-gathered groups
first)."""

import ast

import pytest

from chunkplan.colossalai_export import chunk_config_dict_literal

# Hand-written: a kept-gathered group first, as the seed orders them.
CONFIG_DICT = {4: {"chunk_size": 1000, "keep_gathered": True},
               2: {"chunk_size": 2048, "keep_gathered": False}}


def test_the_literal_reads_back_equal_in_order():
    text = chunk_config_dict_literal(CONFIG_DICT)
    assert text == ('{4: {"chunk_size": 1000, "keep_gathered": True}, '
                    '2: {"chunk_size": 2048, "keep_gathered": False}}')
    back = ast.literal_eval(text)
    assert back == CONFIG_DICT
    assert list(back) == [4, 2]
    assert [type(v) for c in back.values() for v in c.values()] == [
        int, bool, int, bool]


def test_an_empty_dict_is_empty():
    assert chunk_config_dict_literal({}) == "{}"


@pytest.mark.parametrize("bad", [
    {4.0: {"chunk_size": 1000, "keep_gathered": True}},
    {4: {"chunk_size": "1000", "keep_gathered": True}},
    {4: {"chunk_size": 1000, "keep_gathered": 1}},
])
def test_values_of_other_types_are_refused(bad):
    with pytest.raises(TypeError):
        chunk_config_dict_literal(bad)
