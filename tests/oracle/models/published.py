"""Real models' config.json files (data/) and their published parameter
counts: each (name, config_path, architecture, published_total, citation).

published_total counts the parameters of `architecture`, a tied weight
once. Where the source publishes only part of the count, the citation says
so and gives the arithmetic that completes it.
"""

import os

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# KerasHub preset metadata ("params" of each preset: the parameter count of
# the KerasHub port of the same checkpoint), keras-team/keras-hub.
_KERAS = "KerasHub preset metadata, keras-team/keras-hub %s, preset %s"

# Hugging Face's model API (huggingface.co/api/models/<repo>, field
# safetensors.total): the tensors of the published checkpoint, buffers saved
# with it included.
_HF_API = "Hugging Face model API, %s safetensors.total %s"

_ENTRIES = [
    ("gpt2-xl", "gpt2-xl.json", "GPT2LMHeadModel", 1_557_611_200,
     _KERAS % ("keras_hub/src/models/gpt2/gpt2_presets.py",
               "gpt2_extra_large_en (params 1557611200; lm_head tied)")),
    ("gpt2 (GPT2Config defaults)", "gpt2-defaults.json", "GPT2LMHeadModel",
     124_439_808,
     _KERAS % ("keras_hub/src/models/gpt2/gpt2_presets.py",
               "gpt2_base_en (params 124439808)")),
    ("bert-large-uncased", "bert-large-uncased.json", "BertModel",
     335_141_888,
     _KERAS % ("keras_hub/src/models/bert/bert_presets.py",
               "bert_large_en_uncased (params 335141888; the backbone has "
               "the pooler, as BertModel)")),
    # Derived: the figure published is the round "30B" (OPT paper, Zhang et
    # al. 2022, Table 1). embed_tokens 50272*7168 = 360,349,696;
    # embed_positions (2048 + 2)*7168 = 14,694,400; final_layer_norm
    # 2*7168 = 14,336; each of 48 layers: q, k, v, out 4*(7168^2 + 7168) =
    # 205,549,568, two LayerNorms 2*2*7168 = 28,672, fc1 7168*28672 + 28672
    # = 205,549,568, fc2 28672*7168 + 7168 = 205,528,064: 616,655,872.
    ("opt-30b", "opt-30b.json", "OPTForCausalLM",
     360_349_696 + 14_694_400 + 14_336 + 48 * 616_655_872,
     "derived by hand from the OPT paper's Table 1 shape (Zhang et al. "
     "2022, arXiv:2205.01068: 48 layers, width 7168, published as 30B); "
     "the arithmetic is in tests/oracle/models/published.py"),
    ("llama-2-7b", "llama-2-7b.json", "LlamaForCausalLM", 6_738_415_616,
     _KERAS % ("keras_hub/src/models/llama/llama_presets.py",
               "llama2_7b_en (params 6738415616)")),
    # The Llama-2-13b-hf and 70b-hf checkpoints also hold each layer's
    # rotary inv_freq buffer (head_dim / 2 = 64 values): 40 * 64 = 2,560
    # and 80 * 64 = 5,120 values that are not parameters.
    ("llama-2-13b", "llama-2-13b.json", "LlamaForCausalLM",
     13_015_866_880 - 40 * 64,
     _HF_API % ("meta-llama/Llama-2-13b-hf", "13,015,866,880 (revision "
                "5c31dfb671ce7cfe2d7bb7c04375e44c55e815b1)") +
     " less the 40 layers' rotary inv_freq buffers (40 * 64)"),
    ("llama-2-70b", "llama-2-70b.json", "LlamaForCausalLM",
     68_976_653_312 - 80 * 64,
     _HF_API % ("meta-llama/Llama-2-70b-hf", "68,976,653,312 (revision "
                "3aba440b59558f995867ba6e1f58f21d0336b5bb)") +
     " less the 80 layers' rotary inv_freq buffers (80 * 64)"),
    ("mistral-7b-v0.1", "mistral-7b-v0.1.json", "MistralForCausalLM",
     7_241_732_096,
     _KERAS % ("keras_hub/src/models/mistral/mistral_presets.py",
               "mistral_7b_en (params 7241732096)")),
    ("mixtral-8x7b-v0.1", "mixtral-8x7b-v0.1.json", "MixtralForCausalLM",
     46_702_792_704,
     _KERAS % ("keras_hub/src/models/mixtral/mixtral_presets.py",
               "mixtral_8_7b_en (params 46702792704)")),
    ("Meta-Llama-3-8B", "meta-llama-3-8b.json", "LlamaForCausalLM",
     8_030_261_248,
     _KERAS % ("keras_hub/src/models/llama3/llama3_presets.py",
               "llama3_8b_en (params 8030261248)")
     + "; also " + _HF_API % ("meta-llama/Llama-3.1-8B", "8,030,261,248")),
    # LLaMA-3.2 1B and 3B tie lm_head to embed_tokens; their checkpoints
    # store the tied weight once.
    ("Llama-3.2-1B", "llama-3.2-1b.json", "LlamaForCausalLM", 1_235_814_400,
     _HF_API % ("meta-llama/Llama-3.2-1B", "1,235,814,400")),
    ("Llama-3.2-3B", "llama-3.2-3b.json", "LlamaForCausalLM", 3_212_749_824,
     _HF_API % ("meta-llama/Llama-3.2-3B", "3,212,749,824")),
    ("Qwen2.5-7B", "qwen2.5-7b.json", "Qwen2ForCausalLM", 7_615_616_512,
     _HF_API % ("Qwen/Qwen2.5-7B", "7,615,616,512") + "; also "
     + _KERAS % ("keras_hub/src/models/qwen/qwen_presets.py",
                 "qwen2.5_math_7b_en (params 7615616512; Qwen2.5-Math-7B "
                 "has Qwen2.5-7B's shape)")),
    ("Qwen2.5-0.5B", "qwen2.5-0.5b.json", "Qwen2ForCausalLM", 494_032_768,
     _KERAS % ("keras_hub/src/models/qwen/qwen_presets.py",
               "qwen2.5_0.5b_en (params 494032768; lm_head tied)")),
    ("gemma-7b", "gemma-7b.json", "GemmaForCausalLM", 8_537_680_896,
     _KERAS % ("keras_hub/src/models/gemma/gemma_presets.py",
               "gemma_7b_en (params 8537680896; lm_head tied)")),
    ("gemma-2b", "gemma-2b.json", "GemmaForCausalLM", 2_506_172_416,
     _KERAS % ("keras_hub/src/models/gemma/gemma_presets.py",
               "gemma_2b_en (params 2506172416)")),
    ("gemma-2-9b", "gemma-2-9b.json", "Gemma2ForCausalLM", 9_241_705_984,
     _KERAS % ("keras_hub/src/models/gemma/gemma_presets.py",
               "gemma2_9b_en (params 9241705984)")),
    ("gemma-2-2b", "gemma-2-2b.json", "Gemma2ForCausalLM", 2_614_341_888,
     _KERAS % ("keras_hub/src/models/gemma/gemma_presets.py",
               "gemma2_2b_en (params 2614341888)")),
    ("Phi-3-mini-4k-instruct", "phi-3-mini-4k-instruct.json",
     "Phi3ForCausalLM", 3_821_079_552,
     _KERAS % ("keras_hub/src/models/phi3/phi3_presets.py",
               "phi3_mini_4k_instruct_en (params 3821079552)")),
    ("gpt-neox-20b", "gpt-neox-20b.json", "GPTNeoXForCausalLM",
     20_554_567_680,
     "EleutherAI/gpt-neox-20b model card (Hugging Face), model details "
     "table: n_parameters 20554567680"),
    # Derived: the Pythia paper publishes the non-embedding count; embed_in
    # and embed_out (untied) add 2 * 50304 * 768 = 77,266,944.
    ("pythia-160m", "pythia-160m.json", "GPTNeoXForCausalLM",
     85_056_000 + 2 * 50_304 * 768,
     "Pythia paper (Biderman et al. 2023, arXiv:2304.01373), Table 1: "
     "Pythia-160M non-embedding parameters 85,056,000, plus embed_in and "
     "embed_out 2 * 50304 * 768"),
    ("Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b.json", "Qwen2MoeForCausalLM",
     14_315_784_192,
     _KERAS % ("keras_hub/src/models/qwen_moe/qwen_moe_presets.py",
               "qwen1.5_moe_2.7b_en (params 14315784192); the model card "
               "(Qwen/Qwen1.5-MoE-A2.7B) rounds it to 14.3B")),
    # The families of issue 43 (transformers 4.51.3 classes).
    ("Qwen3-8B", "qwen3-8b.json", "Qwen3ForCausalLM", 8_190_735_360,
     _KERAS % ("keras_hub/src/models/qwen3/qwen3_presets.py",
               "qwen3_8b_en (params 8190735360)")),
    ("Qwen3-0.6B", "qwen3-0.6b.json", "Qwen3ForCausalLM", 596_049_920,
     _KERAS % ("keras_hub/src/models/qwen3/qwen3_presets.py",
               "qwen3_0.6b_en (params 596049920; lm_head tied)")),
    ("Qwen3-30B-A3B", "qwen3-30b-a3b.json", "Qwen3MoeForCausalLM",
     30_532_122_624,
     _KERAS % ("keras_hub/src/models/qwen3_moe/qwen3_moe_presets.py",
               "qwen3_moe_30b_a3b_en (params 30532122624)")),
    ("gemma-3-1b", "gemma-3-1b.json", "Gemma3ForCausalLM", 999_885_952,
     _KERAS % ("keras_hub/src/models/gemma3/gemma3_presets.py",
               "gemma3_1b (params 999885952; text-only, lm_head tied)")),
    ("bloom-560m", "bloom-560m.json", "BloomForCausalLM", 559_214_592,
     _KERAS % ("keras_hub/src/models/bloom/bloom_presets.py",
               "bloom_560m_multi (params 559214592; lm_head tied)")),
    ("falcon-rw-1b", "falcon-rw-1b.json", "FalconForCausalLM", 1_311_625_216,
     _KERAS % ("keras_hub/src/models/falcon/falcon_presets.py",
               "falcon_refinedweb_1b_en (params 1311625216; lm_head tied)")),
    # Derived: the DeepSeek-V3 model card publishes "671B" for the main
    # model (the checkpoint's 14B multi-token prediction layer 61 is not
    # part of DeepseekV3ForCausalLM). embed_tokens and lm_head 2 * 129280 *
    # 7168 = 1,853,358,080; norm 7168; each layer's attention: q_a_proj
    # 7168*1536, q_a_layernorm 1536, q_b_proj 1536*128*192,
    # kv_a_proj_with_mqa 7168*576, kv_a_layernorm 512, kv_b_proj 512*128*256,
    # o_proj 128*128*7168 = 187,107,328; norms 2*7168; 3 dense MLPs of
    # 3*7168*18432 = 396,361,728; 58 MoE blocks of 256 experts and a shared
    # one, 257 * 3*7168*2048 = 11,318,329,344, and the router 256*7168 =
    # 1,835,008 (e_score_correction_bias is a buffer).
    ("DeepSeek-V3", "deepseek-v3.json", "DeepseekV3ForCausalLM",
     1_853_358_080 + 7168 + 61 * (187_107_328 + 2 * 7168)
     + 3 * 396_361_728 + 58 * (11_318_329_344 + 1_835_008),
     "derived by hand; the DeepSeek-V3 model card (deepseek-ai/DeepSeek-V3) "
     "publishes 671B main model weights (685B with the 14B MTP module); "
     "the arithmetic is in tests/oracle/models/published.py"),
    # Derived: the DeepSeek-V2-Lite model card publishes "15.7B" total.
    # embed_tokens and lm_head 2 * 102400 * 2048 = 419,430,400; norm 2048;
    # each layer's attention (q_lora_rank null): q_proj 2048*16*192,
    # kv_a_proj_with_mqa 2048*576, kv_a_layernorm 512, kv_b_proj 512*16*256,
    # o_proj 16*128*2048 = 13,763,072; norms 2*2048; 1 dense MLP of
    # 3*2048*10944 = 67,239,936; 26 MoE blocks of 64 experts and 2 shared,
    # 66 * 3*2048*1408 = 570,949,632, and the gate 64*2048 = 131,072.
    ("DeepSeek-V2-Lite", "deepseek-v2-lite.json", "DeepseekV2ForCausalLM",
     419_430_400 + 2048 + 27 * (13_763_072 + 2 * 2048) + 67_239_936
     + 26 * (570_949_632 + 131_072),
     "derived by hand; the DeepSeek-V2-Lite model card publishes 15.7B "
     "total parameters (2.4B active); DeepSeek-V2 by its remote code"),
    # Derived: the Llama-4-Scout-17B-16E model card publishes 17B active and
    # 109B total, vision model included. Text only: embed_tokens and lm_head
    # 2 * 202048 * 5120 = 2,068,971,520; norm 5120; 48 layers of attention
    # 2*5120*5120 + 2*5120*1024 = 62,914,560, fused experts 16*5120*16384 +
    # 16*8192*5120 = 2,013,265,920, router 5120*16 = 81,920, shared expert
    # 3*5120*8192 = 125,829,120, norms 2*5120.
    ("Llama-4-Scout-17B-16E (text)", "llama-4-scout-17b-16e-text.json",
     "Llama4ForCausalLM",
     2_068_971_520 + 5120 + 48 * (62_914_560 + 2_013_265_920 + 81_920
                                  + 125_829_120 + 2 * 5120),
     "derived by hand from the text_config of meta-llama/"
     "Llama-4-Scout-17B-16E, whose model card publishes 109B total with "
     "the vision model"),
    # Derived: the model card publishes "35 billion". embed_tokens (tied)
    # 256000 * 8192; norm 8192; 40 layers of q, k, v, o 4*8192^2, MLP
    # 3*8192*22528, input_layernorm 8192.
    ("c4ai-command-r-v01", "command-r-v01.json", "CohereForCausalLM",
     256_000 * 8192 + 8192 + 40 * (4 * 8192**2 + 3 * 8192 * 22528 + 8192),
     "derived by hand; the CohereForAI/c4ai-command-r-v01 model card "
     "publishes 35 billion parameters"),
    # Derived: the Falcon-7B model card publishes "7B". word_embeddings
    # (tied) 65024*4544; ln_f 2*4544; 32 layers of query_key_value
    # 4544*(4544 + 2*64), dense 4544^2, MLP 2*4544*18176, input_layernorm
    # 2*4544.
    ("falcon-7b", "falcon-7b.json", "FalconForCausalLM",
     65_024 * 4544 + 2 * 4544
     + 32 * (4544 * 4672 + 4544**2 + 2 * 4544 * 18176 + 2 * 4544),
     "derived by hand; the tiiuae/falcon-7b model card publishes 7B"),
    # Derived: the Falcon-40B model card publishes "40B". word_embeddings
    # (tied) 65024*8192; ln_f 2*8192; 60 layers of query_key_value
    # 8192*(128 + 2*8)*64, dense 8192^2, MLP 2*8192*32768, ln_attn and
    # ln_mlp 4*8192.
    ("falcon-40b", "falcon-40b.json", "FalconForCausalLM",
     65_024 * 8192 + 2 * 8192
     + 60 * (8192 * 144 * 64 + 8192**2 + 2 * 8192 * 32768 + 4 * 8192),
     "derived by hand; the tiiuae/falcon-40b model card publishes 40B"),
    # Derived from the GPT-J 6B model card's table (28 layers, d_model 4096,
    # d_ff 16384, vocabulary 50400): wte 50400*4096; 28 blocks of ln_1
    # 2*4096, q, k, v, out 4*4096^2, fc_in 4096*16384 + 16384, fc_out
    # 16384*4096 + 4096; ln_f 2*4096; lm_head 4096*50400 + 50400. The card's
    # n_parameters, 6,053,381,344, is Mesh Transformer JAX's count, 2,498,560
    # more than transformers' GPTJForCausalLM holds.
    ("gpt-j-6b", "gpt-j-6b.json", "GPTJForCausalLM",
     50_400 * 4096 + 28 * (2 * 4096 + 4 * 4096**2 + 4096 * 16384 + 16384
                           + 16384 * 4096 + 4096)
     + 2 * 4096 + 4096 * 50_400 + 50_400,
     "derived by hand from the EleutherAI/gpt-j-6b model card's shape "
     "table (its n_parameters 6053381344 counts Mesh Transformer JAX's "
     "model)"),
]


def _entry(name, file_name, architecture, total, citation):
    return (name, os.path.join(DATA_DIR, file_name), architecture, total,
            citation)


PUBLISHED = [_entry(*entry) for entry in _ENTRIES]
