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
]


def _entry(name, file_name, architecture, total, citation):
    return (name, os.path.join(DATA_DIR, file_name), architecture, total,
            citation)


PUBLISHED = [_entry(*entry) for entry in _ENTRIES]
