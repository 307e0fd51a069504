#!/usr/bin/python3
"""The gathered-chunk oracle: which chunks a rank holds gathered while the
model computes, replayed as ColossalAI's GeminiDDP runs one training
iteration.

Independent of chunkplan's C++. Two parts:

1. Each family's operations, transcribed here from transformers 4.51.3's
   modeling code (modeling_gpt2.py, modeling_llama.py, modeling_mistral.py,
   modeling_qwen2.py, modeling_qwen3.py, modeling_phi3.py,
   modeling_cohere.py, modeling_gemma2.py, modeling_gemma3.py,
   modeling_llama4.py, modeling_mixtral.py,
   modeling_qwen2_moe.py, modeling_qwen3_moe.py, modeling_gpt_neox.py,
   modeling_opt.py, modeling_gptj.py, modeling_deepseek_v3.py,
   modeling_falcon.py, modeling_bloom.py, modeling_gemma.py,
   modeling_bert.py; DeepSeek-V2
   from its remote modeling_deepseek.py, _deepseek_v2_ops): the torch
   functions that take parameters, in the order forward calls them, each
   with the parameters it passes (named as the models oracle names them).
   Backward runs them in reverse (autograd's order on these sequential
   graphs).

2. The replay, written as the state machine of ColossalAI's text in
   /work/shared/reference/colossalai/ (cited as gemini_hook.py, chunk.py,
   manager.py, gemini_ddp.py, placement_policy.py):
   - gemini_hook.py GeminiZeROHook.pre_op: the op's params turn COMPUTE;
     adjust_layout releases every accessed chunk that can_release (every
     tensor HOLD or HOLD_AFTER_BWD, chunk.py) and is neither the op's nor
     being prefetched (manager.py get_cuda_movable_chunks, sorted by
     count_id; placement_policy.py StaticPlacementPolicy.evict_tensors with
     keep_gathered_chunk_mem 0 at shard_param_frac 1); then the op's chunks
     are accessed (gathered); then, from the second iteration,
     get_prefetch_chunks fetches up to max_prefetch - len(async_works)
     chunks of the later ops that are not accessed.
   - post_op: HOLD in forward, HOLD_AFTER_BWD in backward.
   - gemini_ddp.py grad_handle (a tensor hook: it fires once the gradient
     of every use is summed, after the op's post_backward): with the
     gradients in the fp16 chunk (reuse_fp16_chunk: master weights, no
     accumulation) the tensor turns READY_FOR_REDUCE and the chunk is
     reduced (reduce_chunk: chunk.reduce scatters it, manager drops it from
     accessed) once all are; otherwise the gradient goes to the chunk's own
     gradient chunk (init_grad_chunk: accessed, gathered), the fp16 tensor
     turns HOLD, and once the gradient chunk is complete it is reduced and
     the fp16 chunk released.
   Bytes: a gathered buffer adds its size less the shard the rank keeps on
   the device (chunk.py __gather frees cuda_shard once cuda_global_chunk is
   filled; a shard on the host adds nothing to free: the fp16 shards where
   offload_param_frac is in force, the gradient shards where any optimizer
   side is offloaded, grads_device being the host); gathering, reducing and
   releasing each allocate one shard beside the whole chunk (__gather,
   reduce's cuda_shard, __scatter). The events of one kind in one step are
   taken together: counted at their sum after the gathers (before the
   releases and reductions) plus their largest shard.

  operations(description, config) -> list of ops (parameter indices), or
      None where the family has no transcription
  adapted_operations(description, config, adapted) -> the same over
      models.lora.adapt's parameters: PEFT's lora_A and lora_B after each
      adapted module's own operations
  layers(description, config=None) -> the decoder layer of each op (None
      outside one); layers_of(ops, names) the same for any ops (a LoRA
      adapter's: its module's layer)
  replay(groups, placed, ops, settings, layers=None) -> (elements, buffers)
      at the peak. groups: layout_oracle Group tuples; placed: per group
      the parameter indices its chunks take in order; settings:
      layout_oracle Settings. With `layers` (one per op), gradient
      checkpointing as transformers 4.51.3 runs it:
      gradient_checkpointing_enable() with no arguments takes
      {"use_reentrant": True} (modeling_utils.py) and each decoder layer
      runs in torch.utils.checkpoint's CheckpointFunction, whose forward
      runs the layer under torch.no_grad (the hook still fires: pre_op and
      post_op, HOLD) and whose backward, reached once the later layers'
      backward is done, runs the layer's forward again under
      enable_grad and then torch.autograd.backward over it. GeminiDDP
      .backward holds switch_to_backward() around loss.backward(), so the
      re-run's post_op leaves HOLD_AFTER_BWD (gemini_hook.py); the re-run
      has no gradients, and its pre_op releases and gathers, and is in
      the warm-up's compute_list (prefetch), as any other. GeminiPlugin
      turns no checkpointing on itself (gemini_plugin.py): the model's
      own setting, as the workload's activation_checkpointing says.

  gathered_oracle.py --checkpointing N [--seed S]   on N random small
      models of the transcribed families (random chunk sizes, degrees and
      max_prefetch), how many peaks checkpointing's recomputation raises,
      and by how much at most
"""

import re

TRANSCRIBED = ("gpt2", "llama", "mistral", "qwen2", "qwen3", "phi3",
               "cohere", "gemma2", "gemma3_text", "llama4_text", "mixtral",
               "qwen2_moe", "qwen3_moe", "gpt_neox", "opt", "gptj",
               "deepseek_v3", "falcon", "bloom", "deepseek_v2", "gemma",
               "bert")

HOLD, COMPUTE, HOLD_AFTER_BWD, READY_FOR_REDUCE = range(4)


# ---------------------------------------------------------------------------
# 1. The operations.

def _present(names, *params):
    return [p for p in params if p in names]


def _gpt2_ops(names, architecture):
    """GPT2LMHeadModel.forward -> GPT2Model.forward: self.wte(input_ids),
    self.wpe(position_ids), each GPT2Block (ln_1: F.layer_norm(weight,
    bias); attn.c_attn and attn.c_proj: Conv1D.forward = torch.addmm(bias,
    x, weight); ln_2; mlp.c_fc, mlp.c_proj), self.ln_f; then self.lm_head,
    whose weight is transformer.wte.weight when tied."""
    top = "transformer." if architecture == "GPT2LMHeadModel" else ""
    ops = [[top + "wte.weight"], [top + "wpe.weight"]]
    i = 0
    while f"{top}h.{i}.ln_1.weight" in names:
        h = f"{top}h.{i}."
        ops.append([h + "ln_1.weight", h + "ln_1.bias"])
        for conv in ("attn.c_attn", "attn.c_proj"):
            ops.append([h + conv + ".bias", h + conv + ".weight"])
        ops.append([h + "ln_2.weight", h + "ln_2.bias"])
        for conv in ("mlp.c_fc", "mlp.c_proj"):
            ops.append([h + conv + ".bias", h + conv + ".weight"])
        i += 1
    ops.append([top + "ln_f.weight", top + "ln_f.bias"])
    if architecture == "GPT2LMHeadModel":
        ops.append(_present(names, "lm_head.weight") or [top + "wte.weight"])
    return ops


def _llama_ops(names, architecture, qk_norm):
    """LlamaForCausalLM.forward (and Mistral's, Qwen2's, Qwen3's copies):
    model.embed_tokens(input_ids); each decoder layer: input_layernorm (the
    RMS norm's `self.weight * hidden_states`), self_attn (q_proj, k_proj,
    v_proj each F.linear(x, weight, bias); Qwen3: q_norm right after q_proj
    and k_norm right after k_proj; then o_proj), post_attention_layernorm,
    mlp (down_proj(act_fn(gate_proj(x)) * up_proj(x))); model.norm; then
    lm_head on the last hidden states (embed_tokens' weight when tied).
    GemmaForCausalLM (modeling_gemma.py, 4.51.3) is this walk too:
    GemmaModel.forward runs embed_tokens, scales by `normalizer` (a
    torch.tensor made in forward, no parameter), the layers, norm;
    GemmaDecoderLayer.forward input_layernorm, self_attn (GemmaAttention:
    q_proj, k_proj, v_proj, then o_proj, biased where attention_bias),
    post_attention_layernorm, mlp (GemmaMLP: down_proj(act_fn(gate_proj(x))
    * up_proj(x))); GemmaRMSNorm takes its weight once, in `output * (1.0 +
    self.weight.float())`; registered self_attn, mlp, input_layernorm,
    post_attention_layernorm (the norms after the MLP, as LLaMA's)."""
    top = "model." if architecture.endswith("ForCausalLM") else ""
    ops = [[top + "embed_tokens.weight"]]
    i = 0
    while f"{top}layers.{i}.input_layernorm.weight" in names:
        layer = f"{top}layers.{i}."
        ops.append([layer + "input_layernorm.weight"])
        attn = layer + "self_attn."
        for proj in ("q", "k", "v"):
            ops.append(_present(names, f"{attn}{proj}_proj.weight",
                                f"{attn}{proj}_proj.bias"))
            if qk_norm and proj in ("q", "k"):
                ops.append([f"{attn}{proj}_norm.weight"])
        ops.append(_present(names, attn + "o_proj.weight",
                            attn + "o_proj.bias"))
        ops.append([layer + "post_attention_layernorm.weight"])
        ops += _feed_forward_ops(names, layer)
        i += 1
    return ops + _norm_and_head_ops(names, architecture, top)


def _norm_and_head_ops(names, architecture, top):
    """LLaMA's model loop after the layers: model.norm, then lm_head
    (embed_tokens' weight when tied) where the class has a head."""
    ops = [[top + "norm.weight"]]
    if architecture.endswith("ForCausalLM"):
        ops.append(_present(names, "lm_head.weight")
                   or [top + "embed_tokens.weight"])
    return ops


def _stack_ops(names, architecture, layer_ops):
    """A LLaMA-like stack's ops: model.embed_tokens, layer_ops(prefix) for
    each decoder layer, model.norm, then lm_head (or the tied
    embed_tokens) for a ForCausalLM class."""
    top = "model." if architecture.endswith("ForCausalLM") else ""
    ops = [[top + "embed_tokens.weight"]]
    i = 0
    while f"{top}layers.{i}.input_layernorm.weight" in names:
        ops += layer_ops(f"{top}layers.{i}.")
        i += 1
    ops.append([top + "norm.weight"])
    if architecture.endswith("ForCausalLM"):
        ops.append(_present(names, "lm_head.weight")
                   or [top + "embed_tokens.weight"])
    return ops


def _phi3_ops(names, architecture):
    """Phi3ForCausalLM.forward (_stack_ops); each Phi3DecoderLayer:
    input_layernorm, self_attn.qkv_proj (one F.linear; q, k and v are its
    slices), self_attn.o_proj, post_attention_layernorm, mlp.gate_up_proj
    (gate and up its chunks), mlp.down_proj."""
    return _stack_ops(names, architecture, lambda layer: [
        [f"{layer}{module}.weight"] for module in (
            "input_layernorm", "self_attn.qkv_proj", "self_attn.o_proj",
            "post_attention_layernorm", "mlp.gate_up_proj",
            "mlp.down_proj")])


def _cohere_ops(names, architecture):
    """CohereForCausalLM.forward (_stack_ops); each CohereDecoderLayer:
    input_layernorm (CohereLayerNorm's `self.weight.to(torch.float32) *
    hidden_states`), self_attn (q_proj, k_proj, v_proj, each F.linear with
    its bias where attention_bias; then q_norm and k_norm where
    use_qk_norm; o_proj), then mlp (gate_proj, up_proj, down_proj) on the
    same norm output. In backward autograd runs the MLP's nodes first
    (created last): the reverse of this list."""
    def layer_ops(layer):
        attn = layer + "self_attn."
        ops = [[layer + "input_layernorm.weight"]]
        for proj in ("q_proj", "k_proj", "v_proj"):
            ops.append(_present(names, f"{attn}{proj}.weight",
                                f"{attn}{proj}.bias"))
        ops += [[f"{attn}{norm}.weight"] for norm in ("q_norm", "k_norm")
                if f"{attn}{norm}.weight" in names]
        ops.append(_present(names, attn + "o_proj.weight",
                            attn + "o_proj.bias"))
        return ops + [[f"{layer}mlp.{proj}.weight"]
                      for proj in ("gate_proj", "up_proj", "down_proj")]
    return _stack_ops(names, architecture, layer_ops)


def _gemma2_ops(names, architecture, qk_norm=False):
    """Gemma2ForCausalLM.forward (_stack_ops); each Gemma2DecoderLayer:
    input_layernorm, self_attn (q_proj, k_proj, v_proj, o_proj, each with
    its bias where attention_bias), post_attention_layernorm,
    pre_feedforward_layernorm, mlp (gate_proj, up_proj, down_proj),
    post_feedforward_layernorm (GemmaRMSNorm's `output * (1.0 +
    self.weight.float())` each). With `qk_norm`, Gemma3ForCausalLM's
    (modeling_gemma3.py, 4.51.3): Gemma3Attention runs q_norm and k_norm
    after q_proj, k_proj and v_proj (on the transposed query and key
    states, before RoPE), then o_proj."""
    def layer_ops(layer):
        ops = [[layer + "input_layernorm.weight"]]
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            if qk_norm and proj == "o_proj":
                ops += [[f"{layer}self_attn.{norm}.weight"]
                        for norm in ("q_norm", "k_norm")]
            ops.append(_present(names, f"{layer}self_attn.{proj}.weight",
                                f"{layer}self_attn.{proj}.bias"))
        ops += [[layer + "post_attention_layernorm.weight"],
                [layer + "pre_feedforward_layernorm.weight"]]
        ops += [[f"{layer}mlp.{proj}.weight"]
                for proj in ("gate_proj", "up_proj", "down_proj")]
        return ops + [[layer + "post_feedforward_layernorm.weight"]]
    return _stack_ops(names, architecture, layer_ops)
def _llama4_ops(names, architecture):
    """Llama4ForCausalLM.forward (modeling_llama4.py, 4.51.3; _stack_ops);
    each Llama4TextDecoderLayer: input_layernorm, self_attn (q_proj,
    k_proj, v_proj, o_proj, each with its bias where attention_bias; the
    L2 qk_norm has no weight), post_attention_layernorm, feed_forward: in
    a sparse layer Llama4TextMoe.forward runs the router (a Linear), then
    the experts (torch.bmm with gate_up_proj, then with down_proj: every
    expert on every token, one operation each), then the shared expert
    (Llama4TextMLP: gate_proj, up_proj, down_proj); in a dense layer that
    MLP alone."""
    def layer_ops(layer):
        ops = [[layer + "input_layernorm.weight"]]
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            ops.append(_present(names, f"{layer}self_attn.{proj}.weight",
                                f"{layer}self_attn.{proj}.bias"))
        ops.append([layer + "post_attention_layernorm.weight"])
        ff = layer + "feed_forward."
        if ff + "router.weight" in names:
            ops += [[ff + "router.weight"], [ff + "experts.gate_up_proj"],
                    [ff + "experts.down_proj"]]
            ff += "shared_expert."
        return ops + [[f"{ff}{proj}.weight"]
                      for proj in ("gate_proj", "up_proj", "down_proj")]
    return _stack_ops(names, architecture, layer_ops)


def _feed_forward_ops(names, layer):
    """A layer's MLP: LlamaMLP's gate_proj, up_proj, down_proj; or the
    sparse block (4.51.3): MixtralSparseMoeBlock.forward runs self.gate,
    then `for expert_idx in range(self.num_experts)` every expert, one no
    token chose on an empty batch (the skip of unchosen experts,
    transformers PR #32429, came after 4.51), MixtralBlockSparseTop2MLP
    as act_fn(w1(x)) * w3(x), then w2; Qwen2MoeSparseMoeBlock and
    Qwen3MoeSparseMoeBlock the same with gate_proj, up_proj, down_proj
    experts, then Qwen2-MoE's shared_expert (its MLP) and
    shared_expert_gate."""
    for block in ("block_sparse_moe.", "mlp."):
        if layer + block + "gate.weight" in names:
            break
    else:
        return [_present(names, f"{layer}mlp.{proj}.weight",
                         f"{layer}mlp.{proj}.bias")
                for proj in ("gate_proj", "up_proj", "down_proj")]
    moe = layer + block
    ops = [[moe + "gate.weight"]]
    e = 0
    while f"{moe}experts.{e}.w1.weight" in names:
        ops += [[f"{moe}experts.{e}.{w}.weight"] for w in ("w1", "w3", "w2")]
        e += 1
    while f"{moe}experts.{e}.gate_proj.weight" in names:
        ops += [[f"{moe}experts.{e}.{p}.weight"]
                for p in ("gate_proj", "up_proj", "down_proj")]
        e += 1
    if moe + "shared_expert.gate_proj.weight" in names:
        ops += [[f"{moe}shared_expert.{p}.weight"]
                for p in ("gate_proj", "up_proj", "down_proj")]
        ops.append([moe + "shared_expert_gate.weight"])
    return ops


def _gpt_neox_ops(names, architecture):
    """GPTNeoXForCausalLM.forward -> GPTNeoXModel.forward (modeling_gpt_neox
    .py): self.embed_in(input_ids); each GPTNeoXLayer: self.attention(
    self.input_layernorm(hidden_states)) (F.layer_norm(weight, bias); the
    attention's query_key_value then dense, each F.linear(x, weight, bias)),
    then self.mlp(self.post_attention_layernorm(...)) (dense_h_to_4h,
    dense_4h_to_h) with the parallel residual or without it;
    self.final_layer_norm; then self.embed_out (embed_in's weight when
    tied)."""
    top = "gpt_neox." if architecture == "GPTNeoXForCausalLM" else ""
    ops = [[top + "embed_in.weight"]]
    i = 0
    while f"{top}layers.{i}.input_layernorm.weight" in names:
        layer = f"{top}layers.{i}."
        for module in ("input_layernorm", "attention.query_key_value",
                       "attention.dense", "post_attention_layernorm",
                       "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"):
            ops.append(_present(names, f"{layer}{module}.weight",
                                f"{layer}{module}.bias"))
        i += 1
    ops.append([top + "final_layer_norm.weight", top + "final_layer_norm.bias"])
    if architecture == "GPTNeoXForCausalLM":
        ops.append(_present(names, "embed_out.weight")
                   or [top + "embed_in.weight"])
    return ops


def _opt_ops(names, architecture, before):
    """OPTForCausalLM.forward -> OPTDecoder.forward (modeling_opt.py):
    self.embed_tokens(input_ids), self.embed_positions(...), project_in;
    each OPTDecoderLayer: self_attn_layer_norm (where do_layer_norm_before;
    else after the residual), self_attn (q_proj, k_proj, v_proj, then
    out_proj), final_layer_norm (before fc1; else last), fc1, fc2; the
    decoder's final_layer_norm, project_out; then lm_head (embed_tokens'
    weight when tied). A norm without elementwise_affine has no parameter
    and gathers nothing."""
    top = "model.decoder." if architecture == "OPTForCausalLM" else "decoder."
    ops = [[top + "embed_tokens.weight"], [top + "embed_positions.weight"],
           _present(names, top + "project_in.weight")]
    i = 0
    while f"{top}layers.{i}.fc1.weight" in names:
        layer = f"{top}layers.{i}."
        first, second = (("self_attn_layer_norm", "final_layer_norm")
                         if before else (None, "self_attn_layer_norm"))
        modules = ([first] if first else []) + [
            "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
            "self_attn.out_proj", second, "fc1", "fc2"]
        if not before:
            modules.append("final_layer_norm")
        for module in modules:
            ops.append(_present(names, f"{layer}{module}.weight",
                                f"{layer}{module}.bias"))
        i += 1
    ops.append(_present(names, top + "final_layer_norm.weight",
                        top + "final_layer_norm.bias"))
    ops.append(_present(names, top + "project_out.weight"))
    if architecture == "OPTForCausalLM":
        ops.append(_present(names, "lm_head.weight")
                   or [top + "embed_tokens.weight"])
    return [op for op in ops if op]


def _gptj_ops(names, architecture):
    """GPTJForCausalLM.forward -> GPTJModel.forward (modeling_gptj.py):
    self.wte(input_ids); each GPTJBlock: ln_1, then attn (q_proj, k_proj,
    v_proj, out_proj, no biases) and mlp (fc_in, fc_out) on ln_1's output;
    self.ln_f; then lm_head: F.linear(x, weight, bias), the weight wte's
    when tied, the bias lm_head's own."""
    top = "transformer." if architecture == "GPTJForCausalLM" else ""
    ops = [[top + "wte.weight"]]
    i = 0
    while f"{top}h.{i}.ln_1.weight" in names:
        block = f"{top}h.{i}."
        for module in ("ln_1", "attn.q_proj", "attn.k_proj", "attn.v_proj",
                       "attn.out_proj", "mlp.fc_in", "mlp.fc_out"):
            ops.append(_present(names, f"{block}{module}.weight",
                                f"{block}{module}.bias"))
        i += 1
    ops.append([top + "ln_f.weight", top + "ln_f.bias"])
    if architecture == "GPTJForCausalLM":
        ops.append((_present(names, "lm_head.weight")
                    or [top + "wte.weight"]) + ["lm_head.bias"])
    return ops


def _falcon_ops(names, architecture):
    """FalconForCausalLM.forward -> FalconModel.forward (modeling_falcon
    .py): self.word_embeddings(input_ids); each FalconDecoderLayer: its
    norms first (ln_attn(hidden_states) and ln_mlp(hidden_states) where it
    has both, else input_layernorm: F.layer_norm(weight, bias)), then
    self_attention's query_key_value and dense, post_attention_layernorm
    where it has one (the sequential layer, after the attention's
    residual), mlp's dense_h_to_4h and dense_4h_to_h; each FalconLinear is
    `input @ self.weight.T` then `+ self.bias`: the transpose takes the
    weight, the addition the bias, two operations; self.ln_f; then
    self.lm_head (word_embeddings' weight when tied)."""
    top = "transformer." if architecture == "FalconForCausalLM" else ""
    ops = [[top + "word_embeddings.weight"]]
    i = 0
    while f"{top}h.{i}.self_attention.dense.weight" in names:
        layer = f"{top}h.{i}."
        if layer + "ln_attn.weight" in names:
            modules = ["ln_attn", "ln_mlp"]
        else:
            modules = ["input_layernorm"]
        modules += ["self_attention.query_key_value", "self_attention.dense"]
        if layer + "post_attention_layernorm.weight" in names:
            modules.append("post_attention_layernorm")
        modules += ["mlp.dense_h_to_4h", "mlp.dense_4h_to_h"]
        for module in modules:
            if module.endswith("norm") or module.startswith("ln_"):
                ops.append([layer + module + ".weight",
                            layer + module + ".bias"])
                continue
            ops.append([layer + module + ".weight"])
            ops += [[p] for p in _present(names, layer + module + ".bias")]
        i += 1
    ops.append([top + "ln_f.weight", top + "ln_f.bias"])
    if architecture == "FalconForCausalLM":
        ops.append(_present(names, "lm_head.weight")
                   or [top + "word_embeddings.weight"])
    return ops


def _bloom_ops(names, architecture):
    """BloomForCausalLM.forward -> BloomModel.forward (modeling_bloom.py):
    self.word_embeddings(input_ids), self.word_embeddings_layernorm; each
    BloomBlock: input_layernorm, self_attention's query_key_value and dense
    (nn.Linear: F.linear(x, weight, bias)), post_attention_layernorm, mlp's
    dense_h_to_4h and dense_4h_to_h; self.ln_f; then self.lm_head
    (word_embeddings' weight when tied)."""
    top = "transformer." if architecture == "BloomForCausalLM" else ""
    ops = [[top + "word_embeddings.weight"],
           [top + "word_embeddings_layernorm.weight",
            top + "word_embeddings_layernorm.bias"]]
    i = 0
    while f"{top}h.{i}.input_layernorm.weight" in names:
        block = f"{top}h.{i}."
        for module in ("input_layernorm", "self_attention.query_key_value",
                       "self_attention.dense", "post_attention_layernorm",
                       "mlp.dense_h_to_4h", "mlp.dense_4h_to_h"):
            ops.append([block + module + ".weight", block + module + ".bias"])
        i += 1
    ops.append([top + "ln_f.weight", top + "ln_f.bias"])
    if architecture == "BloomForCausalLM":
        ops.append(_present(names, "lm_head.weight")
                   or [top + "word_embeddings.weight"])
    return ops


def _deepseek_v3_ops(names, architecture):
    """DeepseekV3ForCausalLM.forward (modeling_deepseek_v3.py, 4.51.3):
    LLaMA's model loop; each DeepseekV3DecoderLayer: input_layernorm,
    self_attn (q_b_proj(q_a_layernorm(q_a_proj(x))) or q_proj(x); then
    kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj; o_proj; each linear
    F.linear(x, weight, bias)), post_attention_layernorm, then the dense
    DeepseekV3MLP (gate_proj, up_proj, down_proj) or DeepseekV3MoE:
    self.gate (the router's F.linear on weight.type(fp32)), then
    DeepseekV3MoE.moe's `for expert_idx in range(len(self.experts))`, each
    expert that some token chose (`if token_indices.numel() > 0`: taken
    here as every expert, as b s k tokens against the experts make it),
    then self.shared_experts on the residual."""
    top = "model." if architecture.endswith("ForCausalLM") else ""
    ops = [[top + "embed_tokens.weight"]]
    i = 0
    while f"{top}layers.{i}.input_layernorm.weight" in names:
        layer = f"{top}layers.{i}."
        attn = layer + "self_attn."
        ops.append([layer + "input_layernorm.weight"])
        for module in ("q_proj", "q_a_proj", "q_a_layernorm", "q_b_proj",
                       "kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj",
                       "o_proj"):
            op = _present(names, f"{attn}{module}.weight",
                          f"{attn}{module}.bias")
            if op:
                ops.append(op)
        ops.append([layer + "post_attention_layernorm.weight"])
        mlp = layer + "mlp."
        projections = ("gate_proj", "up_proj", "down_proj")
        if mlp + "gate.weight" not in names:
            ops += [[f"{mlp}{p}.weight"] for p in projections]
        else:
            ops.append([mlp + "gate.weight"])
            e = 0
            while f"{mlp}experts.{e}.gate_proj.weight" in names:
                ops += [[f"{mlp}experts.{e}.{p}.weight"] for p in projections]
                e += 1
            if mlp + "shared_experts.gate_proj.weight" in names:
                ops += [[f"{mlp}shared_experts.{p}.weight"]
                        for p in projections]
        i += 1
    return ops + _norm_and_head_ops(names, architecture, top)


def _deepseek_v2_ops(names, architecture):
    """DeepseekV2ForCausalLM.forward from the model's remote code
    (transformers 4.51.3 has none), read in deepseek-ai/ESFT
    deepseek/modeling_deepseek.py at 4bfa99486b03a3b646635b32a3aad0552763d925:
    DeepseekV2Model.forward runs self.embed_tokens (l. 1499), the layers,
    self.norm (l. 1557), then self.lm_head (l. 1684). Each
    DeepseekV2DecoderLayer.forward: self.input_layernorm (l. 1251), self_attn
    (DeepseekV2Attention.forward, and DeepseekV2FlashAttention2's alike:
    q_proj, or q_b_proj(q_a_layernorm(q_a_proj(x))) (l. 819-821);
    kv_a_proj_with_mqa (l. 827); kv_b_proj(kv_a_layernorm(...)) (l. 833);
    o_proj (l. 903)), self.post_attention_layernorm (l. 1267), self.mlp
    (l. 1268): DeepseekV2MLP (down_proj(act_fn(gate_proj(x)) *
    up_proj(x)), l. 414-417) or DeepseekV2MoE.forward (l. 598-617): self.gate
    (MoEGate, F.linear on self.weight.type(torch.float32), l. 452), then
    `for i, expert in enumerate(self.experts)` every expert, chosen or not
    (an empty batch), as the training branch of InternLM/xtuner's copy
    (xtuner/model/transformers_models/deepseek_v2/modeling_deepseek.py at
    0fe3ea1cc601cac9f35b2e10bfc23b993e43492d, DeepseekV2MoE.forward,
    `if self.training`) runs them too, then self.shared_experts(identity)
    where n_shared_experts is not None (l. 616). These are the calls and
    the order of DeepSeek-V3's walk (_deepseek_v3_ops). Where that walk
    takes every expert as chosen (4.51.3's DeepseekV3MoE skips an expert no
    token chose), V2's training branch runs every expert whatever the
    routing: exact here."""
    return _deepseek_v3_ops(names, architecture)


def _bert_ops(names, architecture):
    """BertForMaskedLM.forward and BertModel.forward (modeling_bert.py,
    4.51.3): BertEmbeddings.forward runs self.word_embeddings(input_ids),
    self.token_type_embeddings(token_type_ids), then
    self.position_embeddings(position_ids) (registered before the token
    types), then self.LayerNorm; each BertLayer: BertAttention's self
    (BertSelfAttention.forward: self.query, then self.key and self.value;
    BertSdpaSelfAttention.forward the same), its output (BertSelfOutput:
    self.dense, self.LayerNorm(hidden_states + input_tensor)), then
    feed_forward_chunk: self.intermediate (dense), self.output (BertOutput:
    dense, LayerNorm); nn.Linear's F.linear and nn.LayerNorm's
    F.layer_norm take weight and bias. BertModel ends with self.pooler
    (BertPooler: self.dense on the first token), taken as used by the loss
    (a pooler with no gradient leaves its chunk unreduced: GeminiDDP's
    _post_backward raises). BertForMaskedLM's bert has no pooler; then
    self.cls: BertLMPredictionHead.forward runs self.transform
    (BertPredictionHeadTransform: dense, act, LayerNorm), then
    self.decoder, an nn.Linear whose weight is the word embeddings' when
    tied and whose bias is the head's own `bias` (self.decoder.bias =
    self.bias)."""
    top = "bert." if architecture == "BertForMaskedLM" else ""
    emb = top + "embeddings."
    ops = [[emb + "word_embeddings.weight"],
           [emb + "token_type_embeddings.weight"],
           [emb + "position_embeddings.weight"],
           [emb + "LayerNorm.weight", emb + "LayerNorm.bias"]]
    i = 0
    while f"{top}encoder.layer.{i}.attention.self.query.weight" in names:
        layer = f"{top}encoder.layer.{i}."
        for module in ("attention.self.query", "attention.self.key",
                       "attention.self.value", "attention.output.dense",
                       "attention.output.LayerNorm", "intermediate.dense",
                       "output.dense", "output.LayerNorm"):
            ops.append([f"{layer}{module}.weight", f"{layer}{module}.bias"])
        i += 1
    if architecture != "BertForMaskedLM":
        return ops + [["pooler.dense.weight", "pooler.dense.bias"]]
    head = "cls.predictions."
    ops += [[head + "transform.dense.weight", head + "transform.dense.bias"],
            [head + "transform.LayerNorm.weight",
             head + "transform.LayerNorm.bias"]]
    decoder = (_present(names, head + "decoder.weight")
               or [emb + "word_embeddings.weight"])
    return ops + [decoder + [head + "bias"]]


def layers(description, config=None):
    """The decoder layer of each of operations(description, config), None
    for the embeddings, final norm and head: layers_of over its names."""
    return layers_of(operations(description, config) or [],
                     description.names)


def layers_of(ops, names):
    """The decoder layer (transformer.h.<i>, model.layers.<i>, BERT's
    encoder.layer.<i>: the module each modeling file passes to
    self._gradient_checkpointing_func) of each op (parameter indices into
    `names`; a LoRA adapter's are its module's), None outside one."""
    out = []
    for op in ops:
        m = re.search(r"(?:^|\.)(?:h|layers|layer)\.(\d+)\.", names[op[0]])
        out.append(int(m.group(1)) if m else None)
    return out


def operations(description, config=None):
    """The ops of a models.Description as lists of parameter indices, or
    None for a family not transcribed. `config` (the config dict): where
    the order depends on a value (OPT's do_layer_norm_before)."""
    names = set(description.names)
    model_type = description.model_type
    if model_type == "gpt2":
        ops = _gpt2_ops(names, description.architecture)
    elif model_type == "gpt_neox":
        ops = _gpt_neox_ops(names, description.architecture)
    elif model_type == "gptj":
        ops = _gptj_ops(names, description.architecture)
    elif model_type == "falcon":
        ops = _falcon_ops(names, description.architecture)
    elif model_type == "bloom":
        ops = _bloom_ops(names, description.architecture)
    elif model_type == "opt":
        ops = _opt_ops(names, description.architecture,
                       (config or {}).get("do_layer_norm_before", True))
    elif model_type == "deepseek_v3":
        ops = _deepseek_v3_ops(names, description.architecture)
    elif model_type == "deepseek_v2":
        ops = _deepseek_v2_ops(names, description.architecture)
    elif model_type == "bert":
        ops = _bert_ops(names, description.architecture)
    elif model_type in ("llama", "mistral", "qwen2", "qwen3", "mixtral",
                        "qwen2_moe", "qwen3_moe", "gemma"):
        ops = _llama_ops(names, description.architecture,
                         qk_norm=model_type in ("qwen3", "qwen3_moe"))
    elif model_type == "phi3":
        ops = _phi3_ops(names, description.architecture)
    elif model_type == "cohere":
        ops = _cohere_ops(names, description.architecture)
    elif model_type == "gemma2":
        ops = _gemma2_ops(names, description.architecture)
    elif model_type == "gemma3_text":
        ops = _gemma2_ops(names, description.architecture, qk_norm=True)
    elif model_type == "llama4_text":
        ops = _llama4_ops(names, description.architecture)
    else:
        return None
    index = {name: i for i, name in enumerate(description.names)}
    return [[index[name] for name in op] for op in ops]


def adapted_operations(description, config, adapted):
    """The ops of a model with PEFT's LoRA adapters (adapted: models.lora.
    adapt's Adapted of `description`) as lists of indices into
    adapted.names, or None for a family not transcribed. PEFT's
    lora.Linear.forward (huggingface/peft at 5d602fdb,
    src/peft/tuners/lora/layer.py l. 1048-1062) runs `result =
    self.base_layer(x, ...)` (the wrapped module's own forward: its
    operations as the family runs them, over the parameters renamed
    <module>.base_layer.<leaf>), then, for the active adapter "default",
    `result + lora_B(lora_A(dropout(x))) * scaling`: lora_A's F.linear,
    then lora_B's, each one operation taking its weight. So each adapted
    module's two come right after the last operation taking a parameter of
    the module (FalconLinear's bias addition; GPT-2's Conv1D addmm); two
    modules ending at one operation, in the order they are registered."""
    base = operations(description, config)
    if base is None:
        return None
    adapted_modules = [m for m, _, _ in adapted.modules]
    wrapped = set(adapted_modules)
    index = {name: i for i, name in enumerate(adapted.names)}

    def module_of(p):
        return description.names[p].rsplit(".", 1)[0]

    last = {}
    for k, op in enumerate(base):
        for p in op:
            if module_of(p) in wrapped:
                last[module_of(p)] = k
    ending = {}
    for module in adapted_modules:
        ending.setdefault(last[module], []).append(module)
    out = []
    for k, op in enumerate(base):
        names = []
        for p in op:
            module, leaf = description.names[p].rsplit(".", 1)
            names.append(f"{module}.base_layer.{leaf}" if module in wrapped
                         else description.names[p])
        out.append([index[name] for name in names])
        for module in ending.get(k, []):
            out += [[index[f"{module}.lora_A.default.weight"]],
                    [index[f"{module}.lora_B.default.weight"]]]
    return out


# ---------------------------------------------------------------------------
# 2. The replay.

class _Chunk:
    def __init__(self, cid, size, degree, tensors):
        self.id = cid
        self.size = size
        self.shard = size // degree
        self.tensors = tensors       # parameter indices
        self.accessed = False        # fp16 chunk gathered
        self.grad_accessed = False   # its gradient chunk gathered
        self.grad_ready = set()      # tensors READY_FOR_REDUCE there


class _Replay:
    def __init__(self, chunks, chunk_of, settings):
        self.chunks = chunks
        self.chunk_of = chunk_of
        self.state = {p: HOLD for c in chunks for p in c.tensors}
        self.reuse = (settings.master_weights
                      and not settings.gradient_accumulation)
        static = settings.placement == 0
        shard = (settings.shard_param_frac
                 if settings.shard_param_frac is not None else 1.0)
        # placement_policy.py: offload_param_frac is ignored unless
        # shard_param_frac == 1 and offload_optim_frac == 1; the oracle takes
        # every fp16 shard to the host when it is in force.
        self.fp16_on_device = not (static and settings.offload_param_frac > 0
                                   and shard == 1.0
                                   and settings.offload_optim_frac == 1.0)
        # setup_grads_device: an optimizer-offloaded chunk's gradients live
        # on the host (auto: every chunk's).
        self.grad_on_device = static and settings.offload_optim_frac == 0
        self.max_prefetch = settings.max_prefetch
        self.async_works = []
        self.above = 0
        self.peak = (0, 0)
        # The gathered fp16 chunks (a dict as an ordered set) and the count
        # of gathered buffers, kept as the flags change: the same as
        # scanning every chunk at every step, without the scan.
        self.gathered = {}
        self.buffers = 0

    def _set_accessed(self, c, value):
        if c.accessed != value:
            self.buffers += 1 if value else -1
            if value:
                self.gathered[c] = None
            else:
                del self.gathered[c]
        c.accessed = value

    def _set_grad_accessed(self, c, value):
        if c.grad_accessed != value:
            self.buffers += 1 if value else -1
        c.grad_accessed = value

    def _buffers(self):
        return self.buffers

    def _cost(self, chunk, grad):
        kept = self.grad_on_device if grad else self.fp16_on_device
        return chunk.size - (chunk.shard if kept else 0)

    def _note(self, transient=0):
        self.peak = max(self.peak, (self.above + transient, self._buffers()))

    def _gather(self, chunks):
        for c in chunks:
            self._set_accessed(c, True)
            self.above += self._cost(c, False)
        if chunks:
            self._note(max(c.shard for c in chunks))

    def _drop(self, chunks, grad):
        if not chunks:
            return
        self._note(max(c.shard for c in chunks))
        for c in chunks:
            if grad:
                self._set_grad_accessed(c, False)
                c.grad_ready = set()
            else:
                self._set_accessed(c, False)
            self.above -= self._cost(c, grad)

    def _can_release(self, c):
        return all(self.state[p] in (HOLD, HOLD_AFTER_BWD) for p in c.tensors)

    def pre_op(self, params, index, compute_list):
        mine = []
        for p in params:
            c = self.chunk_of.get(p)
            if c is not None and c not in mine:
                mine.append(c)
        self.async_works = [c for c in self.async_works if c not in mine]
        for p in params:
            if p in self.state:
                self.state[p] = COMPUTE
        evict = [c for c in self.gathered if c not in mine
                 and c not in self.async_works and self._can_release(c)]
        self._drop(evict, grad=False)
        self._gather([c for c in mine if not c.accessed])
        prefetch = []
        can_prefetch = self.max_prefetch - len(self.async_works)
        for later in compute_list[index + 1:]:
            if len(prefetch) >= can_prefetch:
                break
            for c in later:
                if len(prefetch) >= can_prefetch:
                    break
                if c not in prefetch and not c.accessed:
                    prefetch.append(c)
        self._gather(prefetch)
        self.async_works += prefetch
        self._note()

    def post_op(self, params, backward):
        for p in params:
            if p in self.state:
                self.state[p] = HOLD_AFTER_BWD if backward else HOLD

    def grads(self, params):
        """grad_handle for each of `params` (their gradients complete)."""
        placed = [p for p in params if p in self.state]
        touched = []
        for p in placed:
            c = self.chunk_of[p]
            if c not in touched:
                touched.append(c)
        if self.reuse:
            for p in placed:
                self.state[p] = READY_FOR_REDUCE
            ready = [c for c in touched if all(
                self.state[p] == READY_FOR_REDUCE for p in c.tensors)]
            for c in ready:
                for p in c.tensors:
                    self.state[p] = HOLD
            self._drop(ready, grad=False)
            return
        fresh = [c for c in touched if not c.grad_accessed]
        for c in fresh:
            self._set_grad_accessed(c, True)
            self.above += self._cost(c, True)
        if fresh:
            self._note()
        for p in placed:
            self.chunk_of[p].grad_ready.add(p)
            self.state[p] = HOLD
        ready = [c for c in touched if len(c.grad_ready) == len(c.tensors)]
        self._drop(ready, grad=True)
        self._drop([c for c in ready if c.accessed
                    and self._can_release(c)], grad=False)


def _backward_steps(ops, layers):
    """(op, whether it is a backward op) in backward's order: reversed ops;
    with `layers`, each layer's forward ops again before its backward."""
    steps = []
    k = len(ops) - 1
    while k >= 0:
        layer = None if layers is None else layers[k]
        if layer is None:
            steps.append((ops[k], True))
            k -= 1
            continue
        first = k
        while first > 0 and layers[first - 1] == layer:
            first -= 1
        steps += [(op, False) for op in ops[first:k + 1]]
        steps += [(op, True) for op in reversed(ops[first:k + 1])]
        k = first - 1
    return steps


def replay(groups, placed, ops, settings, layers=None):
    """(elements above the steady state, buffers) at the peak of the second
    iteration; see the module docstring."""
    chunks, chunk_of = [], {}
    for group, params in zip(groups, placed):
        if group.config.keep_gathered:
            continue
        taken = 0
        for c in group.chunks:
            tensors = params[taken:taken + c.num_params]
            taken += c.num_params
            chunk = _Chunk(len(chunks), c.size, group.config.dp_degree,
                           tensors)
            chunks.append(chunk)
            for p in tensors:
                chunk_of[p] = chunk
    r = _Replay(chunks, chunk_of, settings)
    backward = _backward_steps(ops, layers)
    compute_list = []
    for op in ops + [op for op, _ in backward]:
        mine = []
        for p in op:
            if p in chunk_of and chunk_of[p] not in mine:
                mine.append(chunk_of[p])
        compute_list.append(mine)
    for k, op in enumerate(ops):
        r.pre_op(op, k, compute_list)
        r.post_op(op, backward=False)
    uses = {}
    for op, grads in backward:
        for p in set(op) if grads else ():
            uses[p] = uses.get(p, 0) + 1
    for j, (op, grads) in enumerate(backward):
        r.pre_op(op, len(ops) + j, compute_list)
        r.post_op(op, backward=True)
        if not grads:
            continue
        done = []
        for p in dict.fromkeys(op):
            uses[p] -= 1
            if uses[p] == 0:
                done.append(p)
        r.grads(done)
    return r.peak


def _checkpointing_sweep(count, seed):
    """(models whose peak the recomputation raises, models, largest ratio)."""
    import random
    import layout_oracle as lo
    import models
    rng = random.Random(seed)
    raised = total = 0
    worst = 1.0
    for _ in range(count):
        config = models.random_config(rng.choice(TRANSCRIBED), rng)
        try:
            d = models.describe(config)
        except ValueError:
            continue
        dp = rng.randint(1, 4)
        chunk = dp * rng.randint(1, sum(d.numels) // dp + 2)
        settings = lo.Settings(0, True, False, True, 0, 0, None, 0.0, 0.0,
                               None, rng.choice([0, 0, 1, 2]))
        groups = [lo.Group(lo.Config(dp, chunk, False), lo._place(
            list(enumerate(d.numels)), chunk, dp), 0)]
        placed = [list(range(len(d.numels)))]
        ops = operations(d)
        plain = replay(groups, placed, ops, settings)[0]
        recomputed = replay(groups, placed, ops, settings, layers(d))[0]
        total += 1
        raised += recomputed > plain
        worst = max(worst, recomputed / plain)
    return raised, total, worst


if __name__ == "__main__":
    import argparse
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpointing", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    raised, total, worst = _checkpointing_sweep(args.checkpointing, args.seed)
    print(f"{raised} of {total} peaks raised by the recomputation; "
          f"at most x{worst:.3f}")
