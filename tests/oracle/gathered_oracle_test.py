#!/usr/bin/python3
"""The gathered-chunk oracle (gathered_oracle.py) on cases worked by hand,
and on the issue's named layouts found by sweeping chunk sizes."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gathered_oracle  # noqa: E402
import layout_oracle as lo  # noqa: E402
import models  # noqa: E402
from models.lora import adapt  # noqa: E402


def settings(**changes):
    base = dict(precision=0, master_weights=True, gradient_accumulation=False,
                pin_memory=True, optimizer=0, placement=0,
                shard_param_frac=None, offload_optim_frac=0.0,
                offload_param_frac=0.0, device_memory_bytes=None,
                max_prefetch=0)
    base.update(changes)
    return lo.Settings(**base)


def group(chunks, degree=2):
    """A Group of chunks given as (size, params held)."""
    config = lo.Config(degree, max(s for s, _ in chunks), False)
    out, first = [], 0
    for size, count in chunks:
        out.append(lo.Chunk(size, size, first, count))
        first += count
    return lo.Group(config, out, 0)


class ByHand(unittest.TestCase):
    """Chunks of 4 elements over 2 ranks: a shard is 2 elements, so a
    gathered chunk adds 2 beyond the steady state, and a gather, reduction
    or release 2 more while it runs."""

    def replay(self, chunks, ops, **s):
        g = group(chunks)
        return gathered_oracle.replay([g], [list(range(sum(
            n for _, n in chunks)))], ops, settings(**s))

    def test_one_chunk_at_a_time_is_the_whole_chunk(self):
        # Three chunks of one tensor each, used in turn: one chunk (2) and
        # its gather's shard (2).
        self.assertEqual(self.replay([(4, 1)] * 3, [[0], [1], [2]]), (4, 1))

    def test_a_chunk_waiting_for_a_gradient_stays_gathered(self):
        # a in chunk 0; b and n in chunk 1; forward uses n, a, b (a norm
        # registered last, used first). Backward: b (chunk 1 has one of two
        # gradients), a (chunk 0 gathered beside it: 2 + 2 + a shard),
        # n (chunk 1 complete).
        self.assertEqual(
            self.replay([(4, 1), (4, 2)], [[2], [0], [1]]), (6, 2))

    def test_separate_gradient_chunks_are_buffers_of_their_own(self):
        # Without master weights the gradients have chunks of their own: at
        # a's backward its fp16 chunk 0, chunk 1's gradient chunk (waiting
        # for n) and chunk 0's new gradient chunk are gathered (3 x 2), and
        # reducing chunk 0's adds a shard.
        self.assertEqual(
            self.replay([(4, 1), (4, 2)], [[2], [0], [1]],
                        master_weights=False), (8, 3))

    def test_prefetch_adds_the_next_chunk(self):
        # max_prefetch 1: while chunk 0 computes, chunk 1 is fetched.
        self.assertEqual(
            self.replay([(4, 1)] * 3, [[0], [1], [2]], max_prefetch=1),
            (6, 2))

    def test_a_tied_weight_is_reduced_after_its_last_use(self):
        # w (chunk 0) used first and last, x in chunk 1: backward of the
        # last op leaves w without its gradient (its hook waits for both
        # uses), so chunk 0 is released, not stuck; one chunk at a time.
        self.assertEqual(self.replay([(4, 1), (4, 1)], [[0], [1], [0]]),
                         (4, 1))

    def test_checkpointing_recomputes_a_layer_beside_a_waiting_chunk(self):
        # a (layer 0) fills chunk 0; z (layer 0) and w (layer 1) share chunk
        # 1; v (layer 1) fills chunk 2. Without checkpointing one chunk at a
        # time. With it, layer 0's forward runs again after layer 1's
        # backward, while chunk 1 waits for z's gradient: a's chunk 0 and
        # chunk 1 at once (2 + 2 + a shard).
        chunks, ops = [(4, 1), (4, 2), (4, 1)], [[0], [1], [2], [3]]
        self.assertEqual(self.replay(chunks, ops), (4, 1))
        g = group(chunks)
        self.assertEqual(gathered_oracle.replay(
            [g], [[0, 1, 2, 3]], ops, settings(), layers=[0, 0, 1, 1]),
            (6, 2))

    def test_shards_on_the_host_free_nothing(self):
        # offload_param_frac in force: the fp16 shards are on the host, so a
        # gathered chunk adds all 4 elements (and its shard while it moves).
        self.assertEqual(
            self.replay([(4, 1)] * 3, [[0], [1], [2]], offload_optim_frac=1.0,
                        offload_param_frac=0.5), (6, 1))


def layout(config, chunk_size, degree=2, lora=None, checkpointing=None):
    """The layout oracle's answer at one chunk size; `lora`: PEFT's
    adapters ({"rank": r, "targets": [...]}) on the model; `checkpointing`:
    a workload with activation_checkpointing so (None: no workload)."""
    model = {"hf_config_json": json.dumps(config)}
    if lora:
        model["lora"] = lora
    request = {"search": {"model": model,
                          "dp_degrees": [degree], "search_range_m": 0,
                          "search_interval": 1},
               "configs": [{"dp_degree": degree, "chunk_size": chunk_size}]}
    if checkpointing is not None:
        request["workload"] = {"micro_batch": 1, "sequence_length": 8,
                               "activation_checkpointing": checkpointing}
    answer = lo.layout(request)
    assert "error" not in answer, answer
    return answer


def straddles(config, answer):
    """The operations whose parameters lie in more than one chunk."""
    description = models.describe(config)
    chunk_of = {}
    for k, c in enumerate(answer["groups"][0]["chunks"]):
        first = int(c["first_param"])
        for p in range(first, first + int(c["num_params"])):
            chunk_of[p] = k
    return [op for op in gathered_oracle.operations(description)
            if len({chunk_of[p] for p in op}) > 1]


GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2,
        "n_positions": 64, "vocab_size": 256}
LLAMA = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "vocab_size": 256}
QWEN2 = dict(LLAMA, model_type="qwen2")
PHI3 = dict(LLAMA, model_type="phi3")
COHERE = dict(LLAMA, model_type="cohere", tie_word_embeddings=False)
GEMMA2 = dict(LLAMA, model_type="gemma2", head_dim=16,
              tie_word_embeddings=False)
GEMMA3 = dict(GEMMA2, model_type="gemma3_text")
LLAMA4 = {"model_type": "llama4_text", "hidden_size": 64,
          "intermediate_size": 32, "intermediate_size_mlp": 128,
          "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 256,
          "num_local_experts": 2, "tie_word_embeddings": False}
NEOX = {"model_type": "gpt_neox", "hidden_size": 64,
        "intermediate_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "vocab_size": 256}
OPT = {"model_type": "opt", "hidden_size": 64, "ffn_dim": 256,
       "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 256,
       "max_position_embeddings": 64}
GPTJ = {"model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 2,
        "vocab_size": 256, "rotary_dim": 8, "tie_word_embeddings": False}
FALCON = {"model_type": "falcon", "hidden_size": 64,
          "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 256,
          "bias": True, "ffn_hidden_size": 256}
BLOOM = {"model_type": "bloom", "hidden_size": 64, "n_head": 4, "n_layer": 2,
         "vocab_size": 256}
SIZES = range(4096, 40000, 256)


class Named(unittest.TestCase):
    def test_gpt2_holds_two_exactly_where_an_operation_straddles(self):
        # GPT-2 registers each layer in the order it runs: a step holds one
        # chunk, two where a Conv1D's or LayerNorm's bias opens the chunk
        # after its weight's.
        seen = set()
        for size in SIZES:
            answer = layout(GPT2, size)
            split = straddles(GPT2, answer)
            self.assertEqual(answer["gathered_chunks"],
                             "2" if split else "1", size)
            seen.add(bool(split))
        self.assertEqual(seen, {True, False})
        # The size the C++ test names: c_attn's bias opens a chunk.
        self.assertTrue(straddles(GPT2, layout(GPT2, 28928)))
        self.assertEqual(layout(GPT2, 28928)["gathered_chunks"], "2")

    def test_gpt2_checkpointing_reruns_a_layer_beside_ln_f_s_chunk(self):
        # Worked by hand. GPT-2's 2-layer model at 20480 elements, 2 ranks
        # (a shard 10240): next-fit puts wte + wpe (16384 + 4096) in chunk
        # 0; layer 0's ln_1, c_attn, attn.c_proj and ln_2 (16896) in 1;
        # its c_fc (16640) in 2; its mlp.c_proj (16448) and layer 1's ln_1
        # in 3; layer 1's c_attn, attn.c_proj, ln_2 in 4, c_fc in 5; its
        # mlp.c_proj and ln_f in 6. No operation straddles and every chunk
        # completes its gradients before backward leaves it (chunk 6 at
        # mlp.c_proj right after ln_f, chunk 3 at layer 0's mlp.c_proj
        # right after layer 1's ln_1): one chunk, 10240 beside the shard
        # plus one shard in flight, 2 x 20480 bytes.
        self.assertEqual(
            (layout(GPT2, 20480)["gathered_chunks"],
             layout(GPT2, 20480)["gathered_chunk_bytes"]), ("1", "40960"))
        self.assertEqual(layout(GPT2, 20480, checkpointing=False)
                         ["gathered_chunk_bytes"], "40960")
        # With checkpointing, after ln_f's backward chunk 6 waits for
        # mlp.c_proj's gradients while layer 1 runs forward again from its
        # ln_1, in chunk 3: two chunks, 2 x (2 x 10240 + 10240) bytes.
        answer = layout(GPT2, 20480, checkpointing=True)
        self.assertEqual((answer["gathered_chunks"],
                          answer["gathered_chunk_bytes"]), ("2", "61440"))
        firsts = [int(c["first_param"]) for c in answer["groups"][0]["chunks"]]
        names = models.describe(GPT2).names
        self.assertEqual([names[p] for p in firsts[3:7]],
                         ["transformer.h.0.mlp.c_proj.weight",
                          "transformer.h.1.attn.c_attn.weight",
                          "transformer.h.1.mlp.c_fc.weight",
                          "transformer.h.1.mlp.c_proj.weight"])

    def test_llama_holds_two_without_any_straddle(self):
        # No LLaMA operation takes two tensors here, yet the chunk holding
        # a layer's norms (registered after the MLP, used first) waits for
        # input_layernorm's gradient through the layer's backward.
        counts = {layout(LLAMA, size)["gathered_chunks"] for size in SIZES}
        self.assertIn("2", counts)
        self.assertEqual(layout(LLAMA, 11008)["gathered_chunks"], "2")

    def test_qwen2_holds_three_with_a_qkv_straddle(self):
        answer = layout(QWEN2, 20480)
        split = straddles(QWEN2, answer)
        names = models.describe(QWEN2).names
        self.assertTrue(any(names[p].endswith("q_proj.bias")
                            for op in split for p in op))
        self.assertEqual(answer["gathered_chunks"], "3")

    def test_phi3_holds_three_without_a_straddle(self):
        # Phi-3 registers o_proj before qkv_proj. At 12544 elements the
        # chunk after layer 0's gate_up_proj holds its down_proj, both
        # norms and layer 1's o_proj: o_proj's gradient arrives in layer
        # 1's backward, the chunk waits for layer 0's input_layernorm,
        # beside the chunk with layer 1's norms (waiting too) and the one
        # qkv_proj computes in: three, though no operation takes two
        # tensors.
        answer = layout(PHI3, 12544)
        self.assertEqual(straddles(PHI3, answer), [])
        names = models.describe(PHI3).names
        chunks = answer["groups"][0]["chunks"]
        held = [[names[p] for p in range(int(c["first_param"]),
                                         int(c["first_param"]) +
                                         int(c["num_params"]))]
                for c in chunks]
        self.assertIn(["model.layers.0.mlp.down_proj.weight",
                       "model.layers.0.input_layernorm.weight",
                       "model.layers.0.post_attention_layernorm.weight",
                       "model.layers.1.self_attn.o_proj.weight"], held)
        self.assertEqual(answer["gathered_chunks"], "3")
        # Where each chunk is one layer's part, two (the norms' wait).
        self.assertEqual(layout(PHI3, 4096)["gathered_chunks"], "2")

    def test_cohere_holds_two_without_a_straddle(self):
        # Cohere's one input_layernorm is registered after the MLP and
        # used first: its chunk waits through the layer's backward.
        answer = layout(COHERE, 11008)
        self.assertEqual(straddles(COHERE, answer), [])
        self.assertEqual(answer["gathered_chunks"], "2")
        # The attention and the MLP run one after the other (the MLP's
        # backward first): an op's chunk and the waiting one, never more
        # without q/k norms or biases.
        self.assertEqual({layout(COHERE, size)["gathered_chunks"]
                          for size in SIZES}, {"1", "2"})

    def test_gemma2_holds_two_without_a_straddle(self):
        # Gemma-2's four norms are registered after the MLP; the first,
        # input_layernorm, is used first: its chunk waits through the
        # layer's backward, as LLaMA's.
        answer = layout(GEMMA2, 11008)
        self.assertEqual(straddles(GEMMA2, answer), [])
        self.assertEqual(answer["gathered_chunks"], "2")

    def test_gemma3_holds_three_without_a_straddle(self):
        # Gemma3Attention registers q_norm and k_norm after o_proj but runs
        # them before it. At 12288 elements (degree 2) a layer's q, k, v
        # and o_proj fill one chunk; q_norm, k_norm and gate_proj share the
        # next; down_proj and the four norms the one after up_proj's. In
        # layer 1's backward, o_proj's step computes in its chunk while
        # gate_proj's chunk waits for q_norm's and k_norm's gradients
        # (after the attention's backward) and the norms' chunk for
        # input_layernorm's: three, no operation taking two tensors.
        # Gemma-2 (no q/k norms) holds two at the same size.
        answer = layout(GEMMA3, 12288)
        self.assertEqual(straddles(GEMMA3, answer), [])
        names = models.describe(GEMMA3).names
        held = [[names[p] for p in range(int(c["first_param"]),
                                         int(c["first_param"]) +
                                         int(c["num_params"]))]
                for c in answer["groups"][0]["chunks"]]
        self.assertIn(["model.layers.1.self_attn.q_norm.weight",
                       "model.layers.1.self_attn.k_norm.weight",
                       "model.layers.1.mlp.gate_proj.weight"], held)
        self.assertEqual(answer["gathered_chunks"], "3")
        self.assertEqual(layout(GEMMA2, 12288)["gathered_chunks"], "2")

    def test_llama4_holds_three_without_a_straddle(self):
        # Llama4TextMoe registers the experts before the router but runs
        # the router first (then the experts' two bmm, then the shared
        # expert). At 8192 elements (degree 2) a layer's chunks are q/k/v,
        # o_proj, experts.gate_up_proj, then experts.down_proj with the
        # router and shared_expert.gate_proj, then the shared expert's
        # up_proj, down_proj and the two norms. In layer 1's backward, at
        # gate_up_proj's bmm its chunk computes while down_proj's chunk
        # waits for the router's gradient (after gate_up_proj's) and the
        # norms' chunk for input_layernorm's: three, no straddle.
        answer = layout(LLAMA4, 8192)
        self.assertEqual(straddles(LLAMA4, answer), [])
        names = models.describe(LLAMA4).names
        held = [[names[p] for p in range(int(c["first_param"]),
                                         int(c["first_param"]) +
                                         int(c["num_params"]))]
                for c in answer["groups"][0]["chunks"]]
        ff = "model.layers.1.feed_forward."
        self.assertIn([ff + "experts.gate_up_proj"], held)
        self.assertIn([ff + "experts.down_proj", ff + "router.weight",
                       ff + "shared_expert.gate_proj.weight"], held)
        self.assertEqual(answer["gathered_chunks"], "3")

    def test_gpt_neox_holds_two_without_any_straddle(self):
        # At 16896 elements the first chunk takes embed_in (16384) and
        # layer 0's two norms (256), the second query_key_value and dense:
        # no operation straddles, yet post_attention_layernorm's gradient
        # (the MLP's input norm, used after the attention) comes before
        # the attention's backward and input_layernorm's after it, so the
        # norms' chunk waits gathered while the attention's is gathered.
        answer = layout(NEOX, 16896)
        self.assertEqual(straddles(NEOX, answer), [])
        self.assertEqual(answer["gathered_chunks"], "2")

    def test_opt_holds_three_without_any_straddle(self):
        # OPTDecoder registers final_layer_norm before its layers and runs
        # it after them: at 16896 elements it shares chunk 1 with
        # embed_positions and layer 0's k/v/q_proj, whose gradients come
        # last, so chunk 1 stays gathered through the whole backward (some
        # but not all of its gradients) beside the layers' own chunks.
        answer = layout(OPT, 16896)
        self.assertEqual(straddles(OPT, answer), [])
        self.assertEqual(answer["gathered_chunks"], "3")
        names = models.describe(OPT).names
        chunk = answer["groups"][0]["chunks"][1]
        first = int(chunk["first_param"])
        held = names[first:first + int(chunk["num_params"])]
        self.assertIn("model.decoder.final_layer_norm.weight", held)
        self.assertIn("model.decoder.layers.0.self_attn.q_proj.weight", held)

    def test_gptj_holds_one_where_nothing_straddles_or_waits(self):
        # GPT-J registers a block in the order it runs (ln_1, q/k/v/out,
        # fc_in, fc_out): at 16640 elements no operation straddles and no
        # chunk waits for a gradient while another is gathered: one chunk;
        # at 4096 an operation straddles two chunks: two.
        answer = layout(GPTJ, 16640)
        self.assertEqual(straddles(GPTJ, answer), [])
        self.assertEqual(answer["gathered_chunks"], "1")
        answer = layout(GPTJ, 4096)
        self.assertTrue(straddles(GPTJ, answer))
        self.assertEqual(answer["gathered_chunks"], "2")


class FalconAndBloom(unittest.TestCase):
    """Falcon's and BLOOM's operations and layouts, worked by hand from
    4.51.3's modeling code."""

    def test_falcon_runs_norms_first_and_each_falcon_linear_twice(self):
        # A sequential layer (parallel_attn false, three projections):
        # input_layernorm, then query_key_value's `input @ weight.T` (the
        # transpose takes the weight) and `+ bias`, dense's two,
        # post_attention_layernorm, the MLP's four; ln_f; lm_head tied.
        config = dict(FALCON, num_hidden_layers=1, parallel_attn=False,
                      multi_query=False)
        layer = "transformer.h.0."
        want = [["transformer.word_embeddings.weight"],
                [layer + "input_layernorm.weight",
                 layer + "input_layernorm.bias"]]
        for module in ("self_attention.query_key_value",
                       "self_attention.dense"):
            want += [[layer + module + ".weight"], [layer + module + ".bias"]]
        want.append([layer + "post_attention_layernorm.weight",
                     layer + "post_attention_layernorm.bias"])
        for module in ("mlp.dense_h_to_4h", "mlp.dense_4h_to_h"):
            want += [[layer + module + ".weight"], [layer + module + ".bias"]]
        want += [["transformer.ln_f.weight", "transformer.ln_f.bias"],
                 ["transformer.word_embeddings.weight"]]
        self.assertEqual(op_names(config), want)
        # The new architecture: ln_attn and ln_mlp, both on the layer's
        # input, before the attention.
        names = op_names(dict(FALCON, new_decoder_architecture=True,
                              num_kv_heads=2))
        self.assertEqual(names[1:4], [[layer + "ln_attn.weight",
                                       layer + "ln_attn.bias"],
                                      [layer + "ln_mlp.weight",
                                       layer + "ln_mlp.bias"],
                                      [layer + "self_attention."
                                       "query_key_value.weight"]])

    def test_falcon_bias_opens_a_chunk_without_a_straddle(self):
        # At 22528 elements chunk 0 is word_embeddings (16384) and layer
        # 0's query_key_value.weight (6144): its bias opens chunk 1, yet no
        # operation straddles (FalconLinear's transpose takes the weight,
        # its addition the bias). Chunk 2 (dense_4h_to_h and the layer's
        # input_layernorm, registered last, used first) has some but not all
        # of its gradients while the attention's backward runs: two chunks.
        answer = layout(FALCON, 22528)
        self.assertEqual(straddles(FALCON, answer), [])
        names = models.describe(FALCON).names
        first = int(answer["groups"][0]["chunks"][1]["first_param"])
        self.assertTrue(names[first].endswith("query_key_value.bias"))
        self.assertEqual(answer["gathered_chunks"], "2")

    def test_bloom_holds_one_or_two_like_gpt2(self):
        # BLOOM registers a block in the order it runs: at 16896 no
        # operation straddles and no chunk waits: one chunk; at 28928
        # query_key_value's bias opens a chunk after its weight, and
        # F.linear takes both: two.
        answer = layout(BLOOM, 16896)
        self.assertEqual(straddles(BLOOM, answer), [])
        self.assertEqual(answer["gathered_chunks"], "1")
        answer = layout(BLOOM, 28928)
        names = models.describe(BLOOM).names
        self.assertTrue(any(names[p].endswith("query_key_value.bias")
                            for op in straddles(BLOOM, answer) for p in op))
        self.assertEqual(answer["gathered_chunks"], "2")


MIXTRAL = dict(LLAMA, model_type="mixtral", num_hidden_layers=1,
               num_local_experts=2)
QWEN2_MOE = dict(LLAMA, model_type="qwen2_moe", num_experts=2,
                 moe_intermediate_size=32,
                 shared_expert_intermediate_size=48, decoder_sparse_step=2)


def op_names(config):
    description = models.describe(config)
    return [[description.names[p] for p in op]
            for op in gathered_oracle.operations(description)]


class MoeOperations(unittest.TestCase):
    """The sparse block's operations, worked by hand from 4.51.3's
    modeling code: the router, then every expert (range(num_experts), an
    unchosen one on an empty batch), then Qwen2-MoE's shared expert and its
    gate."""

    def test_mixtral_runs_the_router_then_every_expert(self):
        layer = "model.layers.0."
        moe = layer + "block_sparse_moe."
        want = [["model.embed_tokens.weight"],
                [layer + "input_layernorm.weight"]]
        want += [[f"{layer}self_attn.{p}_proj.weight"] for p in "qkvo"]
        want += [[layer + "post_attention_layernorm.weight"],
                 [moe + "gate.weight"]]
        for e in range(2):
            want += [[f"{moe}experts.{e}.{w}.weight"]
                     for w in ("w1", "w3", "w2")]
        want += [["model.norm.weight"], ["lm_head.weight"]]
        self.assertEqual(op_names(MIXTRAL), want)

    def test_qwen2_moe_mixes_dense_and_sparse_layers(self):
        names = op_names(QWEN2_MOE)
        mlp0, mlp1 = "model.layers.0.mlp.", "model.layers.1.mlp."
        # decoder_sparse_step 2: layer 0 dense, layer 1 sparse.
        self.assertIn([mlp0 + "down_proj.weight"], names)
        tail = names[names.index([mlp1 + "gate.weight"]):-2]
        want = [[mlp1 + "gate.weight"]]
        for e in range(2):
            want += [[f"{mlp1}experts.{e}.{p}_proj.weight"]
                     for p in ("gate", "up", "down")]
        want += [[f"{mlp1}shared_expert.{p}_proj.weight"]
                 for p in ("gate", "up", "down")]
        want.append([mlp1 + "shared_expert_gate.weight"])
        self.assertEqual(tail, want)


# DeepSeek-V3: layer 0 dense (first_k_dense_replace 1), layer 1
# DeepseekV3MoE with 4 routed experts and one shared; q through q_lora.
DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 64,
               "intermediate_size": 128, "moe_intermediate_size": 32,
               "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 4, "vocab_size": 256,
               "kv_lora_rank": 16, "q_lora_rank": 24, "qk_rope_head_dim": 8,
               "qk_nope_head_dim": 8, "v_head_dim": 16, "n_routed_experts": 4,
               "num_experts_per_tok": 2, "n_shared_experts": 1,
               "first_k_dense_replace": 1, "n_group": 2, "topk_group": 1}


class DeepseekV3Operations(unittest.TestCase):
    """DeepseekV3DecoderLayer.forward (4.51.3), worked by hand: the latent
    attention's projections and norms in the order they run, then the
    router before the experts it chooses (registered after them), then
    the shared experts on the residual."""

    def test_the_router_runs_before_the_experts_registered_before_it(self):
        names = op_names(DEEPSEEK_V3)
        layer = "model.layers.1."
        attn, mlp = layer + "self_attn.", layer + "mlp."
        want = [[layer + "input_layernorm.weight"]]
        want += [[f"{attn}{m}.weight"] for m in (
            "q_a_proj", "q_a_layernorm", "q_b_proj", "kv_a_proj_with_mqa",
            "kv_a_layernorm", "kv_b_proj", "o_proj")]
        want += [[layer + "post_attention_layernorm.weight"],
                 [mlp + "gate.weight"]]
        for e in range(4):
            want += [[f"{mlp}experts.{e}.{p}_proj.weight"]
                     for p in ("gate", "up", "down")]
        want += [[f"{mlp}shared_experts.{p}_proj.weight"]
                 for p in ("gate", "up", "down")]
        start = names.index([layer + "input_layernorm.weight"])
        self.assertEqual(names[start:-2], want)
        # Layer 0 is dense: LLaMA's MLP.
        self.assertIn(["model.layers.0.mlp.down_proj.weight"], names)

    def test_the_router_and_the_norms_wait_gathered(self):
        # At 8192 elements chunk 10 holds expert 3's up/down_proj, the
        # router and shared_experts.gate_proj; chunk 11 shared_experts'
        # up/down_proj, layer 1's norms and the final norm. Backward: the
        # shared experts' gradients first (chunk 11 still waits for the
        # norms, used first in forward; chunk 10 for the router), then the
        # experts' from the last: while expert 3's gate_proj (chunk 9)
        # computes, chunks 10 and 11 wait beside it: three chunks, no
        # operation straddling two.
        answer = layout(DEEPSEEK_V3, 8192)
        self.assertEqual(straddles(DEEPSEEK_V3, answer), [])
        self.assertEqual(answer["gathered_chunks"], "3")
        names = models.describe(DEEPSEEK_V3).names
        chunks = answer["groups"][0]["chunks"]
        held = [names[int(c["first_param"]):int(c["first_param"]) +
                      int(c["num_params"])] for c in chunks]
        self.assertIn("model.layers.1.mlp.gate.weight", held[10])
        self.assertIn("model.layers.1.mlp.experts.3.down_proj.weight",
                      held[10])
        self.assertIn("model.layers.1.input_layernorm.weight", held[11])
        self.assertIn("model.layers.1.mlp.experts.3.gate_proj.weight",
                      held[9])


# Gemma (v1) as GemmaConfig leaves it: lm_head tied to embed_tokens.
GEMMA = dict(LLAMA, model_type="gemma", head_dim=16)


class GemmaOperations(unittest.TestCase):
    """GemmaForCausalLM (modeling_gemma.py, 4.51.3), worked by hand:
    GemmaDecoderLayer.forward's input_layernorm, q/k/v_proj, o_proj,
    post_attention_layernorm, GemmaMLP's gate/up/down_proj; lm_head's
    F.linear takes embed_tokens.weight (tied)."""

    def test_llamas_order_with_biases_and_the_tied_head(self):
        config = dict(GEMMA, num_hidden_layers=1, attention_bias=True)
        layer = "model.layers.0."
        want = [["model.embed_tokens.weight"],
                [layer + "input_layernorm.weight"]]
        want += [[f"{layer}self_attn.{p}_proj.weight",
                  f"{layer}self_attn.{p}_proj.bias"] for p in "qkvo"]
        want += [[layer + "post_attention_layernorm.weight"]]
        want += [[f"{layer}mlp.{p}_proj.weight"]
                 for p in ("gate", "up", "down")]
        want += [["model.norm.weight"], ["model.embed_tokens.weight"]]
        self.assertEqual(op_names(config), want)

    def test_the_norms_chunk_waits_through_the_layer(self):
        # At 11008 elements (degree 2) embed_tokens (16384) has a chunk of
        # its own; chunk 10 holds layer 1's down_proj, its two norms and
        # the final norm. Backward: lm_head's step gathers the embedding's
        # chunk and releases it (its one gradient comes with the
        # embedding's, last); model.norm's and down_proj's gradients reach
        # chunk 10, which waits for input_layernorm's (the layer's first
        # op) while up_proj's chunk computes: two chunks, 2 x 5504 + one
        # shard 5504 = 16512 elements (33024 bytes), above the embedding's
        # chunk alone (8192 + 8192).
        answer = layout(GEMMA, 11008)
        self.assertEqual(straddles(GEMMA, answer), [])
        names = models.describe(GEMMA).names
        chunk = answer["groups"][0]["chunks"][10]
        first = int(chunk["first_param"])
        self.assertEqual(names[first:first + int(chunk["num_params"])], [
            "model.layers.1.mlp.down_proj.weight",
            "model.layers.1.input_layernorm.weight",
            "model.layers.1.post_attention_layernorm.weight",
            "model.norm.weight"])
        self.assertEqual(answer["gathered_chunks"], "2")
        self.assertEqual(answer["gathered_chunk_bytes"], str(16512 * 2))


BERT = {"model_type": "bert", "hidden_size": 64, "num_attention_heads": 4,
        "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 256,
        "max_position_embeddings": 64, "type_vocab_size": 2}
BERT_MODEL = dict(BERT, architectures=["BertModel"])


class BertOperations(unittest.TestCase):
    """BertForMaskedLM and BertModel (modeling_bert.py, 4.51.3), worked by
    hand: BertEmbeddings.forward takes the token types before the positions
    it registers before them; each BertLayer runs in registration order;
    the MLM head's decoder takes the tied word embeddings and the head's
    own bias."""

    def test_the_embeddings_layers_and_the_tied_decoder(self):
        names = op_names(dict(BERT, num_hidden_layers=1))
        emb = "bert.embeddings."
        want = [[emb + "word_embeddings.weight"],
                [emb + "token_type_embeddings.weight"],
                [emb + "position_embeddings.weight"],
                [emb + "LayerNorm.weight", emb + "LayerNorm.bias"]]
        for m in ("attention.self.query", "attention.self.key",
                  "attention.self.value", "attention.output.dense",
                  "attention.output.LayerNorm", "intermediate.dense",
                  "output.dense", "output.LayerNorm"):
            want.append([f"bert.encoder.layer.0.{m}.weight",
                         f"bert.encoder.layer.0.{m}.bias"])
        head = "cls.predictions."
        want += [[head + "transform.dense.weight",
                  head + "transform.dense.bias"],
                 [head + "transform.LayerNorm.weight",
                  head + "transform.LayerNorm.bias"],
                 [emb + "word_embeddings.weight", head + "bias"]]
        self.assertEqual(names, want)
        # Untied: the decoder's own weight; BertModel: the pooler last.
        self.assertEqual(
            op_names(dict(BERT, tie_word_embeddings=False))[-1],
            [head + "decoder.weight", head + "bias"])
        self.assertEqual(op_names(BERT_MODEL)[-1],
                         ["pooler.dense.weight", "pooler.dense.bias"])

    def test_the_tied_decoder_holds_the_first_chunk_and_a_last_one(self):
        # At 16896 elements (degree 2) word_embeddings (16384) fills chunk
        # 0 alone and cls.predictions.bias ends chunk 7: the decoder's
        # F.linear gathers both, two chunks of 16896, each less the rank's
        # shard (8448), and one shard in flight: 25344 elements.
        answer = layout(BERT, 16896)
        names = models.describe(BERT).names
        held = [names[int(c["first_param"]):int(c["first_param"]) +
                      int(c["num_params"])]
                for c in answer["groups"][0]["chunks"]]
        self.assertEqual(held[0], ["bert.embeddings.word_embeddings.weight"])
        self.assertEqual(held[7][-1], "cls.predictions.bias")
        self.assertEqual(answer["gathered_chunks"], "2")
        self.assertEqual(answer["gathered_chunk_bytes"], str(25344 * 2))

    def test_the_position_embeddings_wait_beside_the_token_types(self):
        # At 20480 elements chunk 0 holds word_embeddings and
        # position_embeddings, chunk 1 token_type_embeddings, the
        # embeddings' LayerNorm and layer 0's attention. Backward ends with
        # LayerNorm, position_embeddings (chunk 0: word_embeddings' gradient
        # still to come), token_type_embeddings (chunk 1, waiting since
        # layer 0's attention), word_embeddings: at position_embeddings'
        # step both wait, no operation straddling two: 2 x 10240 + 10240.
        answer = layout(BERT_MODEL, 20480)
        self.assertEqual(straddles(BERT_MODEL, answer), [])
        names = models.describe(BERT_MODEL).names
        chunks = answer["groups"][0]["chunks"]
        held = [names[int(c["first_param"]):int(c["first_param"]) +
                      int(c["num_params"])] for c in chunks]
        self.assertEqual(held[0], ["embeddings.word_embeddings.weight",
                                   "embeddings.position_embeddings.weight"])
        self.assertEqual(held[1][0], "embeddings.token_type_embeddings.weight")
        self.assertEqual(answer["gathered_chunks"], "2")
        self.assertEqual(answer["gathered_chunk_bytes"], str(30720 * 2))


class LoraOperations(unittest.TestCase):
    """PEFT's lora.Linear.forward (peft 5d602fdb, tuners/lora/layer.py l.
    1048-1062), worked by hand: the base layer's operation, then lora_A's
    and lora_B's; the base frozen (never placed, gathering nothing), so the
    chunks hold the adapters alone, in registration order."""

    def test_the_adapters_follow_their_base_operation(self):
        config = dict(LLAMA, num_hidden_layers=1)
        d = models.describe(config)
        a = adapt(d, 2, ["v_proj", "down_proj"])
        ops = [[a.names[p] for p in op]
               for op in gathered_oracle.adapted_operations(d, config, a)]
        layer = "model.layers.0."
        attn, mlp = layer + "self_attn.", layer + "mlp."
        self.assertEqual(ops, [
            ["model.embed_tokens.weight"], [layer + "input_layernorm.weight"],
            [attn + "q_proj.weight"], [attn + "k_proj.weight"],
            [attn + "v_proj.base_layer.weight"],
            [attn + "v_proj.lora_A.default.weight"],
            [attn + "v_proj.lora_B.default.weight"],
            [attn + "o_proj.weight"],
            [layer + "post_attention_layernorm.weight"],
            [mlp + "gate_proj.weight"], [mlp + "up_proj.weight"],
            [mlp + "down_proj.base_layer.weight"],
            [mlp + "down_proj.lora_A.default.weight"],
            [mlp + "down_proj.lora_B.default.weight"],
            ["model.norm.weight"], ["lm_head.weight"]])

    def test_llama_adapters_run_in_their_registration_order(self):
        # q_proj's adapters (256 + 256 elements at r = 4) and down_proj's
        # (512 + 256) in each layer, at 512 elements: chunks [q A, q B],
        # [down A], [down B, layer 1's q A], [q B], [down A], [down B].
        # Backward meets them in reverse registration order: the chunk
        # shared by layer 0's down_proj.lora_B and layer 1's q_proj.lora_A
        # waits through layer 1's frozen q_proj and norm (gathering
        # nothing) alone: one chunk, 256 + a shard of 256 (the full
        # fine-tune, whose norms wait, holds two: LlamaNoStraddle).
        answer = layout(LLAMA, 512,
                        lora={"rank": 4, "targets": ["q_proj", "down_proj"]})
        self.assertEqual(
            [(int(c["first_param"]), int(c["num_params"]))
             for c in answer["groups"][0]["chunks"]],
            [(2, 2), (10, 1), (11, 2), (16, 1), (23, 1), (24, 1)])
        self.assertEqual(answer["gathered_chunks"], "1")
        self.assertEqual(answer["gathered_chunk_bytes"], str(512 * 2))

    def test_phi3_adapters_wait_as_its_o_proj_does(self):
        # Phi-3 registers o_proj before qkv_proj and runs it after: at r = 4
        # a layer's adapters are o_proj's A, B (256 each), qkv_proj's A
        # (256) and B (512). At 768 elements: [L0 o A, o B, qkv A], [L0 qkv
        # B, L1 o A], [L1 o B, qkv A], [L1 qkv B]. Backward through layer 1:
        # o_proj's B and A give chunks 2 and 1 their first gradients; at
        # qkv_proj's lora_B chunk 3 computes beside both: three, 3 x 384 +
        # a shard of 384 = 1536 elements.
        answer = layout(PHI3, 768,
                        lora={"rank": 4, "targets": ["o_proj", "qkv_proj"]})
        self.assertEqual(answer["gathered_chunks"], "3")
        self.assertEqual(answer["gathered_chunk_bytes"], str(1536 * 2))


# DeepSeek-V2 (the remote code): MoE every second layer from 0
# (moe_layer_freq 2: layers 0 and 2 DeepseekV2MoE, layer 1 a dense
# DeepseekV2MLP), 4 routed experts, no shared experts (n_shared_experts
# null), a plain q_proj (q_lora_rank null).
DEEPSEEK_V2 = {"model_type": "deepseek_v2", "hidden_size": 64,
               "intermediate_size": 128, "moe_intermediate_size": 32,
               "num_hidden_layers": 3, "num_attention_heads": 4,
               "vocab_size": 256, "kv_lora_rank": 16, "q_lora_rank": None,
               "qk_rope_head_dim": 8, "qk_nope_head_dim": 8,
               "v_head_dim": 16, "n_routed_experts": 4,
               "num_experts_per_tok": 2, "n_shared_experts": None,
               "first_k_dense_replace": 0, "moe_layer_freq": 2,
               "topk_method": "greedy"}


class DeepseekV2Operations(unittest.TestCase):
    """DeepseekV2DecoderLayer.forward of the remote modeling_deepseek.py
    (deepseek-ai/ESFT @4bfa9948, l. 1251-1268), worked by hand: q_proj,
    the latent k/v projections and o_proj; then MoEGate before the experts
    registered before it; the training branch runs every expert, and
    nothing after them where n_shared_experts is null."""

    def test_sparse_dense_sparse_without_shared_experts(self):
        names = op_names(DEEPSEEK_V2)
        attn = [["q_proj"], ["kv_a_proj_with_mqa"], ["kv_a_layernorm"],
                ["kv_b_proj"], ["o_proj"]]
        want = [["model.embed_tokens.weight"]]
        for i in range(3):
            layer = f"model.layers.{i}."
            want.append([layer + "input_layernorm.weight"])
            want += [[f"{layer}self_attn.{m}.weight" for m in op]
                     for op in attn]
            want.append([layer + "post_attention_layernorm.weight"])
            if i == 1:
                want += [[f"{layer}mlp.{p}_proj.weight"]
                         for p in ("gate", "up", "down")]
                continue
            want.append([layer + "mlp.gate.weight"])
            for e in range(4):
                want += [[f"{layer}mlp.experts.{e}.{p}_proj.weight"]
                         for p in ("gate", "up", "down")]
        want += [["model.norm.weight"], ["lm_head.weight"]]
        self.assertEqual(names, want)

    def test_the_router_and_the_norms_wait_gathered(self):
        # At 12544 elements (degree 2) chunk 2 holds layer 0's experts 0
        # and 1, chunk 3 experts 2 and 3 and the router (registered after
        # them), chunk 4 layer 0's two norms and layer 1's attention.
        # Backward through layer 0: layer 1's attention gives chunk 4 its
        # first gradients (it waits for layer 0's norms); expert 3's, then
        # expert 2's gradients reach chunk 3, which waits for the router's
        # (after every expert's); at expert 1's down_proj chunk 2 computes
        # beside both: three chunks, no operation straddling two. The
        # bytes: three chunks less the rank's shard (3 x 6272) and one
        # shard in flight (6272), 25088 elements of 2 bytes.
        answer = layout(DEEPSEEK_V2, 12544)
        self.assertEqual(straddles(DEEPSEEK_V2, answer), [])
        names = models.describe(DEEPSEEK_V2).names
        held = [names[int(c["first_param"]):int(c["first_param"]) +
                      int(c["num_params"])]
                for c in answer["groups"][0]["chunks"]]
        layer = "model.layers.0."
        self.assertEqual(held[2][-1], layer + "mlp.experts.1.down_proj.weight")
        self.assertEqual(held[3][-1], layer + "mlp.gate.weight")
        self.assertEqual(held[3][0], layer + "mlp.experts.2.gate_proj.weight")
        self.assertEqual(held[4][:3], [
            layer + "input_layernorm.weight",
            layer + "post_attention_layernorm.weight",
            "model.layers.1.self_attn.q_proj.weight"])
        self.assertEqual(answer["gathered_chunks"], "3")
        self.assertEqual(answer["gathered_chunk_bytes"], str(25088 * 2))


if __name__ == "__main__":
    unittest.main()
