#!/usr/bin/env python3
"""Writes the fuzzer's seed corpus (tests/fuzz/corpus/): small serialized
chunkplan.v1.ChunkSearchRequest messages, from the README's examples to the
edge cases ARCHITECTURE.md lists as INVALID_ARGUMENT.

The protobuf wire format is written by hand here (no generated code, no
protobuf package) so that seeds can also hold what no generator writes:
unpacked repeated fields, a truncated message, a wrong wire type.

    /usr/bin/python3 tests/fuzz/make_corpus.py [OUT_DIR]
"""

import math
import os
import struct
import sys

# chunkplan.v1.ChunkSearchRequest field numbers (proto/chunkplan/v1/).
NUMELS, DP_DEGREES, SEARCH_RANGE_M, SEARCH_INTERVAL = 1, 2, 3, 4
MIN_CHUNK_SIZE_M, FILTER_EXLARGE_PARAMS, ENGINE = 5, 6, 7
MODEL_FIELD = 8  # a chunkplan.v1.ModelConfig: hf_config_json 1, architecture 2
AUTO, CPU_SWEEP, CPU_PLATEAU, CUDA = 0, 1, 2, 3
MIB = 1 << 20


def varint(value):
    value &= (1 << 64) - 1  # negative ints as protobuf writes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def key(field, wire_type):
    return varint(field << 3 | wire_type)


def packed(field, values):
    body = b"".join(varint(v) for v in values)
    return key(field, 2) + varint(len(body)) + body


def unpacked(field, values):
    return b"".join(key(field, 0) + varint(v) for v in values)


def double(field, value):
    return key(field, 1) + struct.pack("<d", value)


def uint(field, value):
    return key(field, 0) + varint(value)


def text(field, value):
    data = value.encode()
    return key(field, 2) + varint(len(data)) + data


def model(config_json, architecture=None):
    """The `model` field of a request: a ModelConfig with this text."""
    body = text(1, config_json)
    if architecture is not None:
        body += text(2, architecture)
    return key(MODEL_FIELD, 2) + varint(len(body)) + body


TINY_GPT2 = ('{"model_type": "gpt2", "n_embd": 16, "n_head": 2, "n_layer": 2, '
             '"n_positions": 32, "vocab_size": 100}')
TINY_LLAMA = ('{"model_type": "llama", "hidden_size": 32, '
              '"intermediate_size": 64, "num_attention_heads": 4, '
              '"num_key_value_heads": 2, "num_hidden_layers": 2, '
              '"vocab_size": 128, "tie_word_embeddings": true}')


def request(numels=(), degrees=(), range_m=None, interval=None, min_m=None,
            filter_=None, engine=None):
    out = b""
    if numels:
        out += packed(NUMELS, numels)
    if degrees:
        out += packed(DP_DEGREES, degrees)
    if range_m is not None:
        out += double(SEARCH_RANGE_M, range_m)
    if interval is not None:
        out += uint(SEARCH_INTERVAL, interval)
    if min_m is not None:
        out += double(MIN_CHUNK_SIZE_M, min_m)
    if filter_ is not None:
        out += uint(FILTER_EXLARGE_PARAMS, int(filter_))
    if engine is not None:
        out += uint(ENGINE, engine)
    return out


# A small transformer's parameters in visit order (GPT-2-like shapes, scaled
# down): embeddings, then per layer weights and biases, then a final norm.
def tiny_transformer(layers=2, hidden=64, vocab=500, positions=128):
    sizes = [vocab * hidden, positions * hidden]
    for _ in range(layers):
        sizes += [hidden, hidden, 3 * hidden * hidden, 3 * hidden,
                  hidden * hidden, hidden, hidden, hidden,
                  4 * hidden * hidden, 4 * hidden, 4 * hidden * hidden, hidden]
    return sizes + [hidden, hidden]


MODEL = tiny_transformer()

SEEDS = {
    # Answers.
    "one_param": request([1], range_m=0, interval=1),
    "tiny_transformer": request(MODEL, range_m=0.25, interval=256, min_m=0.01),
    "tiny_transformer_sweep": request(MODEL, range_m=0.05, interval=64,
                                      min_m=0.01, engine=CPU_SWEEP),
    "tiny_transformer_plateau": request(MODEL, range_m=0.5, interval=1,
                                        min_m=0.01, engine=CPU_PLATEAU),
    "shared_degree": request(MODEL, [8], range_m=0.25, interval=128,
                             min_m=0.02),
    "degree_per_param": request([4096, 100, 3000, 70000, 5, 9000],
                                [1, 2, 2, 4, 1, 4], range_m=0.1,
                                interval=32, min_m=0.005),
    "gathered_group": request([10, 20, 300000, 400000], [2, 2, 1, 1],
                              range_m=0.1, interval=1024, min_m=0.1),
    "filter_off": request([1, 1, 1, 1, 1, 1, 1, 1, 1000000], range_m=0.01,
                          interval=7, min_m=0, filter_=False),
    "filter_outlier": request([1] * 20 + [1000000], range_m=0.01,
                              interval=7, min_m=0, filter_=True),
    "filter_empties_group": request([1] * 30 + [1000000], [1] * 30 + [2],
                                    range_m=0.01, interval=3, min_m=0),
    # More sizes than numpy's 8192-element block: the filter's blocked sums.
    "two_numpy_blocks": request([(i * 37) % 101 + 1 for i in range(8300)]
                                + [5000], range_m=0.001, interval=16,
                                min_m=0.001),
    "default_min_chunk": request([40 * MIB, 3 * MIB, 5], range_m=1,
                                 interval=1024),
    "half_even_range": request([1000, 2000], range_m=2.5 / MIB, interval=1,
                               min_m=0.5 / MIB),
    "unpacked_fields": unpacked(NUMELS, [7, 9, 11]) +
                       unpacked(DP_DEGREES, [1, 1, 1]) +
                       double(SEARCH_RANGE_M, 0.0001) + uint(SEARCH_INTERVAL, 2)
                       + double(MIN_CHUNK_SIZE_M, 0),
    "cuda_requested": request(MODEL, range_m=0.25, interval=256, min_m=0.01,
                              engine=CUDA),
    # The hardening issue's findings: a start size of 0 (the cost model
    # divided by it), every group gathered with a huge range (work counted
    # as 0) by each engine, and many small sizes from a minimum chunk of 0
    # at interval 1 (CPU_PLATEAU unbounded: the search budget ends it).
    "zero_start_auto": request([0], range_m=1024, interval=1, min_m=0),
    "zero_start_sweep": request([0], range_m=1024, interval=1, min_m=0,
                                engine=CPU_SWEEP),
    "gathered_huge_range_sweep": request([5], range_m=1e12, interval=1,
                                         engine=CPU_SWEEP),
    "gathered_huge_range_cuda": request([5], range_m=1e12, interval=1,
                                        engine=CUDA),
    "gathered_huge_range_plateau": request([5], range_m=1e12, interval=1,
                                           engine=CPU_PLATEAU),
    "many_plateaus_min_zero": request([(i * 7919) % 1000 + 1
                                       for i in range(4000)],
                                      range_m=200, interval=1, min_m=0),
    # INVALID_ARGUMENT (or RESOURCE_EXHAUSTED) by the contract. (The empty
    # input, no fields at all, libFuzzer always runs by itself.)
    "no_numels": request(range_m=1, interval=1),
    "interval_zero": request([5, 6], range_m=1, interval=0),
    "degree_zero": request([5, 6], [1, 0], range_m=1, interval=1),
    "degree_list_length": request([5, 6, 7], [1, 2], range_m=1, interval=1),
    "range_nan": request([5], range_m=math.nan, interval=1),
    "range_infinite": request([5], range_m=math.inf, interval=1),
    "range_negative": request([5], range_m=-1e-3, interval=1),
    "min_chunk_negative": request([5], range_m=1, interval=1, min_m=-5),
    "range_huge": request([5], range_m=1e300, interval=1),
    "numel_above_int64": request([1 << 63], range_m=1, interval=1),
    "numels_sum_overflow": request([(1 << 62), (1 << 62), 1], range_m=1,
                                   interval=1),
    "interval_huge": request([5], range_m=1, interval=(1 << 64) - 1),
    "lcm_overflow": request([1] * 9, [4294967291, 4294967279, 4294967231,
                                      4294967197, 4294967189, 4294967161,
                                      4294967143, 4294967111, 4294967087],
                            range_m=0, interval=1, min_m=0),
    "engine_unknown": request([5], range_m=1, interval=1, engine=99),
    "engine_negative": request([5], range_m=1, interval=1, engine=-1),
    # Above search_request_fuzzer.cc's max_params (10000).
    "too_many_params": request([1] * 10001, range_m=0, interval=1),
    "truncated": request(MODEL[:4], range_m=1, interval=1)[:-3],
    "wrong_wire_type": key(NUMELS, 5) + b"\x01\x02\x03\x04" +
                       uint(SEARCH_INTERVAL, 1),
    # Encodings the wire count (server/service/wire_counts.h) must read as
    # protobuf does (seeded for a hand-written decoder since removed):
    # numels split into packed and unpacked pieces, a scalar twice, an
    # unknown field of every wire type, a group, an overlong tag, a tenth
    # varint byte above 1.
    "decoder_pieces": packed(NUMELS, [3000, 0]) + unpacked(NUMELS, [5000]) +
                      packed(NUMELS, [7000]) + uint(SEARCH_INTERVAL, 7) +
                      uint(SEARCH_INTERVAL, 16) + double(SEARCH_RANGE_M, 0.01)
                      + double(MIN_CHUNK_SIZE_M, 0),
    "decoder_untaught_fields": request([3000, 5000, 7000], range_m=0.01,
                                       interval=16, min_m=0) +
                               uint(8, 5) + key(99, 1) + b"\0" * 8 +
                               key(15, 2) + varint(2) + b"ab" + key(102, 5) +
                               b"\0" * 4,
    "decoder_group": key(50, 3) + uint(1, 9) + key(50, 4) +
                     request([5, 6], range_m=0.001, interval=1, min_m=0),
    "decoder_overlong_tag": b"\x88\x80\x80\x80\x80\x00" + varint(1) +
                            request([5], range_m=0, interval=1),
    "decoder_tenth_byte": request([5], range_m=0, interval=1, min_m=0) +
                          key(SEARCH_INTERVAL, 0) + b"\xff" * 9 + b"\x7f",
    # A request that names its model (ChunkSearchRequest.model, declined by
    # the fast decoder and described by server/models): tiny real configs,
    # then each rule and a few hostile texts.
    "model_gpt2": request(range_m=0.01, interval=0, min_m=0) +
                  model(TINY_GPT2),
    "model_llama_tied": request(degrees=[2], range_m=0.01, min_m=0) +
                        model(TINY_LLAMA, "LlamaForCausalLM"),
    "model_and_numels": request([5], range_m=0.01) + model(TINY_GPT2),
    "model_two_degrees": request(degrees=[1, 2], range_m=0.01) +
                         model(TINY_GPT2),
    "model_not_json": request(range_m=0.01) + model('{"model_type": '),
    "model_unknown_type": request(range_m=0.01) +
                          model('{"model_type": "t5"}'),
    "model_negative_size": request(range_m=0.01) +
                           model(TINY_GPT2.replace('"n_embd": 16',
                                                   '"n_embd": -16')),
    "model_deep": request(range_m=0.01) + model("[" * 200 + "]" * 200),
}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out_dir, exist_ok=True)
    for name, data in sorted(SEEDS.items()):
        with open(os.path.join(out_dir, name + ".pb"), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {out_dir}")


if __name__ == "__main__":
    main()
