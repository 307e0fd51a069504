// EstimateActivationBytes against values worked by hand, tensor by tensor,
// from transformers 4.51.3's modeling code and PyTorch's derivatives.yaml
// (docs/plan.md, "Activations", lists each tensor). Each expectation is the
// arithmetic itself; the torch oracle (activation_differential_test)
// measures the eager figures on random shapes.

#include "chunkplan/planner/activation_estimate.h"

#include <cstdint>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

// A LLaMA of L = 2, h = 8, a = kv = 2 (d = 4), intermediate 16, v = 16.
TransformerShape TinyLlama() {
  TransformerShape t;
  t.num_layers = 2;
  t.hidden_size = 8;
  t.num_attention_heads = 2;
  t.vocab_size = 16;
  t.intermediate_size = 16;
  return t;
}

ActivationWorkload Work(uint32_t b, uint32_t s, bool checkpointing,
                        Attention attention = Attention::kDefault) {
  return ActivationWorkload{b, s, checkpointing, attention};
}

TEST(ActivationEstimateTest, MoeLayerSavesTheRouterAndEveryPair) {
  // TinyLlama with one of its two layers sparse: E = 2 experts, k = 1,
  // I_e = 8, the top-k weights renormalized (Mixtral). b = 1, s = 4: T = 4
  // tokens, Tk = 4 pairs. Router: softmax fp32 4TE = 32, topk indices 8Tk
  // = 32, div_'s divisor 4T = 16 and fp32 clone 4Tk = 16: 96. Per pair:
  // nonzero 16, the state 2h = 16, the expert's MLP 8I_e = 64, its output
  // 2h = 16, the weight 2, index_add_'s source 2h = 16: 130, x 4 = 520.
  // The dense MLP it replaces: 4 x 2bsI = 512.
  TransformerShape moe = TinyLlama();
  moe.moe_layers = 1;
  moe.num_experts = 2;
  moe.experts_per_token = 1;
  moe.moe_intermediate_size = 8;
  moe.norm_topk_prob = true;
  auto dense = EstimateActivationBytes(TinyLlama(), Work(1, 4, false));
  auto got = EstimateActivationBytes(moe, Work(1, 4, false));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->layers_bytes, dense->layers_bytes + 96 + 520 - 512);
  // per_layer_bytes: the larger kind, the sparse one (1344 - 512 + 616).
  EXPECT_EQ(got->per_layer_bytes, 1344u - 512 + 616);
  // Qwen2-MoE's shared expert of I_s = 4 adds 8TI_s = 128, sigmoid 2T = 8
  // and its output 2N = 64.
  moe.shared_expert_intermediate_size = 4;
  auto shared = EstimateActivationBytes(moe, Work(1, 4, false));
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->layers_bytes, got->layers_bytes + 128 + 8 + 64);
  moe.experts_per_token = 3;
  EXPECT_THAT(
      EstimateActivationBytes(moe, Work(1, 4, false)).status().message(),
      HasSubstr("shape.experts_per_token must be at most"));
}

TEST(ActivationEstimateTest, DeepseekV3LayerSavesTheLatentAndTheRouter) {
  // TinyLlama with DeepSeek-V3's latent attention: head_dim d = 4
  // (qk_nope 2 + qk_rope 2), v_head_dim 2, kv_lora_rank 4, a plain q_proj;
  // eager, b = 2, s = 4 (bs = 8, P = bas^2 = 64). kv_a_layernorm: fp32 x
  // 4 bs r_kv = 128, rsqrt 4bs = 32, x/rms 2bs r_kv = 64, its output 64:
  // 288. q and k (the cats): 2 x 2bsad = 256. softmax 4P + its copy 2P =
  // 384. v copied from kv_b_proj's output: 2bs a d_v = 64; o_proj's input
  // 64. 1056 a layer, where LLaMA's eager attention saves q, k and v
  // copied (kv = a), softmax and its copy, o_proj's input: 128 x 3 + 384 +
  // 128 = 896.
  TransformerShape mla = TinyLlama();
  mla.head_dim = 4;
  mla.rotary_dim = mla.qk_rope_head_dim = 2;
  mla.v_head_dim = 2;
  mla.kv_lora_rank = 4;
  const ActivationWorkload eager = Work(2, 4, false, Attention::kEager);
  auto llama = EstimateActivationBytes(TinyLlama(), eager);
  auto got = EstimateActivationBytes(mla, eager);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->layers_bytes, llama->layers_bytes + 2 * (1056 - 896));
  // q_lora_rank 4 adds q_a_layernorm's saves and output: 288 a layer.
  mla.q_lora_rank = 4;
  auto lora = EstimateActivationBytes(mla, eager);
  ASSERT_TRUE(lora.ok()) << lora.status();
  EXPECT_EQ(lora->layers_bytes, got->layers_bytes + 2 * 288);
  // Layer 1 DeepseekV3MoE: E = 2, k = 1, I_e = 8, shared experts I_s = 8,
  // norm_topk_prob; T = Tk = 8. Router: the input's fp32 copy 4Th = 256,
  // the weight's 4Eh = 64, sigmoid 4TE = 64, gather's indices 8Tk = 64,
  // div_'s divisor 4T = 32 and clone 4Tk = 32: 512. Per pair: nonzero 16,
  // the state 2h = 16, the MLP 8I_e = 64, its output 16, the fp32 weight
  // 4, the fp32 weighted output 4h = 32: 148, x 8 = 1184. Shared experts
  // 8TI_s = 512. In place of the dense MLP's 4 x 2bsI = 1024.
  mla.moe_layers = 1;
  mla.num_experts = 2;
  mla.experts_per_token = 1;
  mla.moe_intermediate_size = 8;
  mla.shared_expert_intermediate_size = 8;
  mla.norm_topk_prob = mla.deepseek_moe = true;
  auto moe = EstimateActivationBytes(mla, eager);
  ASSERT_TRUE(moe.ok()) << moe.status();
  EXPECT_EQ(moe->layers_bytes, lora->layers_bytes + 512 + 1184 + 512 - 1024);
  mla.qk_rope_head_dim = 5;
  EXPECT_THAT(EstimateActivationBytes(mla, eager).status().message(),
              HasSubstr("shape.qk_rope_head_dim must be at most"));
}

TEST(ActivationEstimateTest, DeepseekV2LayerSavesItsTablesAndDispatch) {
  // DeepseekV3's latent shape above (q_lora_rank 4), eager, b = 2, s = 4,
  // as DeepSeek-V2's remote code runs it (docs/plan.md, "DeepSeek-V2").
  // Each layer gathers its own cos and sin, (1, s, rope) 16-bit: 4 s rope
  // = 32 a layer; no model-level table (V3's 32 outside the layers).
  TransformerShape v3 = TinyLlama();
  v3.head_dim = 4;
  v3.rotary_dim = v3.qk_rope_head_dim = 2;
  v3.v_head_dim = 2;
  v3.kv_lora_rank = v3.q_lora_rank = 4;
  const ActivationWorkload eager = Work(2, 4, false, Attention::kEager);
  auto latent = EstimateActivationBytes(v3, eager);
  ASSERT_TRUE(latent.ok()) << latent.status();
  TransformerShape v2 = v3;
  v2.deepseek_v2 = v2.fp32_logits = v2.no_sdpa = v2.seq_aux = true;
  // Layer 1 DeepseekV2MoE: E = 2, k = 1, I_e = 8, shared experts I_s = 8;
  // T = P = 8 (k = 1: no renormalization). MoEGate: the input's fp32 copy
  // 4Th = 256, the weight's 4Eh = 64, softmax 4TE = 64, topk's indices
  // 8P = 64, the per-sequence aux loss's ce 4bE = 16: 464. Experts: two
  // bool masks each over the P repeated tokens 2EP = 32; per pair the
  // state 2h = 16, the MLP 8I_e = 64, y 16, the fp32 weight 4: 100, x 8 =
  // 800. Shared experts 8TI_s = 512. In place of the dense MLP's 1024.
  v2.moe_layers = 1;
  v2.num_experts = 2;
  v2.experts_per_token = 1;
  v2.moe_intermediate_size = 8;
  v2.shared_expert_intermediate_size = 8;
  v2.norm_topk_prob = true;
  auto got = EstimateActivationBytes(v2, eager);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->layers_bytes,
            latent->layers_bytes + 2 * 32 + 464 + 32 + 800 + 512 - 1024);
  EXPECT_EQ(got->outside_layers_bytes, latent->outside_layers_bytes - 32);
  // The loss over the shifted fp32 logits: log-probabilities over b (s - 1)
  // rows 4 x 6 x 16 = 384, the targets' copy 8 x 6 = 48, total_weight 4;
  // the fp32 logits held, 4bsv = 512.
  EXPECT_EQ(got->loss_bytes, 384u + 48 + 4);
  EXPECT_EQ(got->held_bytes, 512u);
  // Without shared experts the block keeps only its router's fp32 copy of
  // the post-attention norm's output (2N = 128 no longer held).
  v2.shared_expert_intermediate_size = 0;
  auto unshared = EstimateActivationBytes(v2, eager);
  ASSERT_TRUE(unshared.ok()) << unshared.status();
  EXPECT_EQ(unshared->layers_bytes, got->layers_bytes - 512 - 128);
  // group_limited_greedy adds masked_fill's bool mask TE = 16; the aux
  // loss over the batch keeps fi (4E = 8) instead of ce (4bE = 16).
  v2.router_groups = 2;
  v2.seq_aux = false;
  auto grouped = EstimateActivationBytes(v2, eager);
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  EXPECT_EQ(grouped->layers_bytes, unshared->layers_bytes + 16 - 8);
  // The remote code has no sdpa class.
  EXPECT_THAT(EstimateActivationBytes(v2, Work(2, 4, false, Attention::kSdpa))
                  .status()
                  .message(),
              HasSubstr("no sdpa path"));
}

TEST(ActivationEstimateTest, Llama4KindsSaveTheirExtrasAndEveryExpertRow) {
  // TinyLlama at L = 4 as Llama 4: layer 3 without RoPE, layers 1 and 3
  // Llama4TextMoe (E = 2, k = 1, I_e = 8); eager, b = 1, s = 4 (T = 4).
  // A RoPE layer's L2 qk_norm: fp32 q and k 4bs(a + kv)d = 256, rsqrt
  // 4bs(a + kv) = 64: 320, x 3. The NoPE layer's temperature scale 4s = 16.
  // Llama4TextMoe: topk 8Tk = 32, sigmoid 4ET = 32, the index 8ET = 64,
  // the gathered and scaled rows 2 x 2ETh = 256, the scores' copy 2ET =
  // 16, gate_up, act and product 8ETI = 512, the shared expert 8TI = 256:
  // 1168 in place of the dense MLP's 8bsI = 512, x 2.
  TransformerShape llama = TinyLlama();
  llama.num_layers = 4;
  TransformerShape l4 = llama;
  l4.llama4 = l4.l2_qk_norm = l4.temperature_tuning = true;
  l4.nope_layers = l4.nope_moe_layers = 1;
  l4.moe_layers = 2;
  l4.num_experts = 2;
  l4.experts_per_token = 1;
  l4.moe_intermediate_size = 8;
  const ActivationWorkload eager = Work(1, 4, false, Attention::kEager);
  auto base = EstimateActivationBytes(llama, eager);
  auto got = EstimateActivationBytes(l4, eager);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->layers_bytes,
            base->layers_bytes + 3 * 320 + 16 + 2 * (1168 - 512));
  // Checkpointed, the complex64 table (4sd = 64, LLaMA's cos and sin's
  // bytes) is a tensor argument: saved, not held.
  const ActivationWorkload ckpt = Work(1, 4, true, Attention::kEager);
  auto base_ckpt = EstimateActivationBytes(llama, ckpt);
  auto got_ckpt = EstimateActivationBytes(l4, ckpt);
  ASSERT_TRUE(got_ckpt.ok()) << got_ckpt.status();
  EXPECT_EQ(got_ckpt->saved_bytes, base_ckpt->saved_bytes + 64);
  EXPECT_EQ(got_ckpt->held_bytes, base_ckpt->held_bytes - 64);
  l4.nope_moe_layers = 3;
  EXPECT_THAT(EstimateActivationBytes(l4, eager).status().message(),
              HasSubstr("shape.nope_moe_layers must be at most"));
}

TEST(ActivationEstimateTest, TinyLlamaUnderSdpaTheDefault) {
  // b = 1, s = 4: N = bsh = 32. A norm: fp32 x 4N + rsqrt 4bs + x/rms 2N =
  // 208, its output 2N = 64 (kept by the projections): 272, twice. SDPA:
  // q, k, v, out 4 x 2bsad = 256, logsumexp 4bsa = 32. MLP: 4 x 2bsI =
  // 512. A layer: 544 + 288 + 512 = 1344.
  auto got = EstimateActivationBytes(TinyLlama(), Work(1, 4, false));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 1344u);
  EXPECT_EQ(got->layers_bytes, 2688u);
  // input_ids 8bs = 32, cos and sin 4sd = 64, the final norm 208 + 64.
  EXPECT_EQ(got->outside_layers_bytes, 32u + 64 + 272);
  // fp32 log-probabilities 4bsv = 256, targets (at b = 1 the padded
  // labels, 8(s + 1) = 40), the weight 4.
  EXPECT_EQ(got->loss_bytes, 300u);
  EXPECT_EQ(got->saved_bytes, 2688u + 368 + 300);
  EXPECT_EQ(got->held_bytes, 128u);  // the 16-bit logits 2bsv
  EXPECT_EQ(got->total_bytes, 3484u);
  // The loss's backward: two fp32 (b, s, v) gradients, 8bsv = 512, the
  // second once nll_loss's targets (40) and total_weight (4) are released:
  // 468. A layer's: 2N + max(2bsI + 2hI, 6bsI, 8bsad, 2bsad + 2had) = 64 +
  // 384, below what the loss and final norm released (300 + 208 + 64).
  EXPECT_EQ(got->loss_backward_bytes, 468u);
  EXPECT_EQ(got->layer_backward_bytes, 448u);
  EXPECT_EQ(got->recompute_bytes, 0u);
  EXPECT_EQ(got->transient_bytes, 468u);
}

TEST(ActivationEstimateTest, TinyLlamaCheckpointedRunsALayerAgain) {
  auto got = EstimateActivationBytes(TinyLlama(), Work(1, 4, true));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 64u);  // each layer's input, 2N
  // input_ids 32, cache_position 8s = 32 (no mask under SDPA), final norm.
  EXPECT_EQ(got->outside_layers_bytes, 32u + 32 + 272);
  EXPECT_EQ(got->total_bytes, 128u + 336 + 300 + 128 + 64);  // cos, sin held
  EXPECT_EQ(got->recompute_bytes, 1344u);
  // The re-run's saves, its backward and its output 2N (held through
  // checkpoint's inner backward), less what the loss and the final norm
  // released: 1344 + 448 + 64 - 572 = 1284 > 512.
  EXPECT_EQ(got->transient_bytes, 1284u);
}

TEST(ActivationEstimateTest, EagerKeepsTheScores) {
  // P = bas^2 = 32: the fp32 softmax 4P and its 16-bit copy 2P replace
  // the logsumexp; q, k, v, o_proj's input 4 x 64.
  auto got = EstimateActivationBytes(TinyLlama(),
                                     Work(1, 4, false, Attention::kEager));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 544u + 256 + 192 + 512);
  // Checkpointed, the eager (b, 1, s, s) mask is a saved argument: 2bs^2.
  auto ckpt =
      EstimateActivationBytes(TinyLlama(), Work(1, 4, true, Attention::kEager));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_EQ(ckpt->outside_layers_bytes, 32u + 32 + 32 + 272);
}

TEST(ActivationEstimateTest, FlashAttention2KeepsKAndVAtTheirHeads) {
  TransformerShape gqa = TinyLlama();
  gqa.num_attention_heads = 4;  // d = 2
  gqa.num_key_value_heads = 1;  // k, v: 2bs kv d = 16 each
  auto got = EstimateActivationBytes(
      gqa, Work(1, 4, false, Attention::kFlashAttention2));
  ASSERT_TRUE(got.ok()) << got.status();
  // q 64, k 16, v 16, out 64, lse 4bsa = 64, rng_state 16.
  EXPECT_EQ(got->per_layer_bytes, 544u + 240 + 512);
  // SDPA repeats k and v to every head: 4 x 64 + 64.
  auto sdpa = EstimateActivationBytes(gqa, Work(1, 4, false));
  ASSERT_TRUE(sdpa.ok()) << sdpa.status();
  EXPECT_EQ(sdpa->per_layer_bytes, 544u + 320 + 512);
}

// A GPT-2 of L = 1, h = 8, a = 2 (d = 4), v = 16, tied: LayerNorm,
// gelu_new, learned positions, a 16-bit softmax after a 0-dim divisor.
TransformerShape TinyGpt2() {
  TransformerShape t;
  t.num_layers = 1;
  t.hidden_size = 8;
  t.num_attention_heads = 2;
  t.vocab_size = 16;
  t.tied_embeddings = true;
  t.norm = NormKind::kLayerNorm;
  t.gated_mlp = false;
  t.activation = MlpActivation::kGeluNew;
  t.rotary = t.fp32_softmax = false;
  t.scale_by_tensor = true;
  return t;
}

TEST(ActivationEstimateTest, Gpt2LayerWithDropout) {
  // GPT-2: LayerNorm (input 2N, fp32 mean and rstd 8bs), c_fc 4h wide,
  // gelu_new (x, tanh, 0.5x, 1 + tanh), learned positions, a 16-bit
  // softmax after a 0-dim divisor, dropout 1-byte masks. b = 1, s = 4:
  // N = 32, I = 32, P = 32.
  TransformerShape t = TinyGpt2();
  t.attention_dropout = t.hidden_dropout = t.embedding_dropout = true;
  auto got = EstimateActivationBytes(t, Work(1, 4, false, Attention::kEager));
  ASSERT_TRUE(got.ok()) << got.status();
  // Norms 2 x (64 + 32 + 64); q, k, v, c_proj's input 4 x 64; the divisor
  // 2; softmax 2P; mask P and dropped 2P; two residual masks 2N; MLP
  // 4 x 2bsI + c_proj's input 2bsI = 5 x 256.
  EXPECT_EQ(got->per_layer_bytes, 320u + 256 + 2 + 64 + 96 + 64 + 1280);
  // input_ids 32, position_ids 8s = 32, the embedding mask N, ln_f 96 +
  // lm_head's input 64.
  EXPECT_EQ(got->outside_layers_bytes, 32u + 32 + 32 + 160);
}

TEST(ActivationEstimateTest, Gpt2AtTpTwoReRunsItsLastStepAboveItsBackward) {
  // Tp rank 0 of TinyGpt2 with an MLP of 8 under ShardFormer at tp 2 (1
  // head, MLP 4, vocabulary padded to 128: 64 rows, 16 valid), b = 1,
  // s = 64, sdpa, checkpointed: N = 512.
  TransformerShape t = TinyGpt2();
  t.intermediate_size = 8;
  t.fused_qkv = true;  // c_attn
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 128;
  auto unheld = EstimateActivationBytes(t, Work(1, 64, true));
  t.attention_output_held = true;  // GPT2Block's attn_output
  auto got = EstimateActivationBytes(t, Work(1, 64, true));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(unheld.ok()) << unheld.status();
  // Saves: the layer's input 2N; input_ids 512, position_ids 512, the
  // vocab-parallel embedding's bool mask 64, ln_f 1536 + its output 1024;
  // dist_cross_entropy over 63 rows: exp_logits 63 x 16 x 2, bool mask and
  // int64 target 63 x 9; held: lm_head's 16-bit output, 64 padded rows.
  EXPECT_EQ(got->loss_bytes, 2016u + 567);
  EXPECT_EQ(got->total_bytes, 1024u + 3648 + 2583 + 8192);
  // The re-run saves norms 2 x 2560, sdpa's q, k, v, out 4 x 512 and lse
  // 256, the MLP 5 x 512, less the layer's input the checkpoint keeps.
  EXPECT_EQ(got->recompute_bytes, 9984u - 1024);
  // Its last step holds the c_proj output and the residual sum 4N, the
  // attention's output 2N and the incoming gradient 2N over those saves
  // (8960 + 4096), above its backward (8960 + 2048 + the re-run's output
  // 1024); with the tied weight's gradient (64 x 8 x 2), less what the
  // loss and ln_f released (2583 + 1536 + 1024): 8937 > lm_head's 7657.
  EXPECT_EQ(got->head_backward_bytes, 7657u);
  EXPECT_EQ(got->transient_bytes, 13056u + 1024 - 5143);
  // Where the block does not keep the attention's output: 6N, level with
  // the backward's 12032.
  EXPECT_EQ(unheld->transient_bytes, 12032u + 1024 - 5143);
}

TEST(ActivationEstimateTest,
     GatheredHeadKeepsTheWholeLossAndSplitsItsBackward) {
  // TinyLlama at tp 2 with GPT-J's head: VocabParallelLMHead1D gathering
  // its output (padded 128: 64 rows a rank), .to(torch.float32), then
  // transformers' loss on the 16 columns. b = 1, s = 4.
  TransformerShape t = TinyLlama();
  t.fp32_logits = true;
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 128;
  t.tp.logits_fp32 = t.tp.gathered_head = true;
  auto got = EstimateActivationBytes(t, Work(1, 4, false));
  ASSERT_TRUE(got.ok()) << got.status();
  // The whole model's loss: fp32 log-probs 4 x 4 x 16 = 256, the padded
  // targets (s + 1) x 8 = 40, the weight 4; the held fp32 logits 256; the
  // loss's fp32 gradients 2 x 256, the second once the targets and the
  // weight are released.
  EXPECT_EQ(got->loss_bytes, 300u);
  EXPECT_EQ(got->held_bytes, 256u);
  EXPECT_EQ(got->loss_backward_bytes, 512u - 44);
  // The head: fp32 gradient 256 + its 16-bit copy 128; the slice's
  // zero-filled 4 x 128 x 2 = 1024 beside 128; the split's clone 4 x 64 x
  // 2 = 512 beside 1024; lm_head's input 64 and weight 64 x 8 x 2 = 1024
  // gradients beside 512: 1600, less the loss's 300.
  EXPECT_EQ(got->head_backward_bytes, 1300u);
}

TEST(ActivationEstimateTest, GemmaAndQwen3Norms) {
  TransformerShape gemma = TinyLlama();
  gemma.norm = NormKind::kGemmaRmsNorm;  // fp32 x, rsqrt, x/rms, 1 + w
  gemma.embed_scale = true;              // a 0-dim normalizer, 2 bytes
  auto got = EstimateActivationBytes(gemma, Work(1, 4, false));
  ASSERT_TRUE(got.ok()) << got.status();
  const uint64_t norm = 4 * 32 + 16 + 4 * 32 + 4 * 8;  // 304
  EXPECT_EQ(got->per_layer_bytes, 2 * (norm + 64) + 288 + 512);
  EXPECT_EQ(got->outside_layers_bytes, 32u + 64 + 2 + norm + 64);

  TransformerShape qwen3 = TinyLlama();
  qwen3.qk_norm = true;  // RMS norms over (b s a, d) and (b s kv, d)
  auto q3 = EstimateActivationBytes(qwen3, Work(1, 4, false));
  ASSERT_TRUE(q3.ok()) << q3.status();
  EXPECT_EQ(q3->per_layer_bytes, 1344u + 2 * (128 + 32 + 64));
}

TEST(ActivationEstimateTest, Qwen25_7bOnFourGpusCarriesTheLogitsGradient) {
  // The newcomer's case: Qwen2.5-7B (L = 28, h = 3584, a = 28, kv = 4,
  // d = 128, intermediate 18944, v = 152064), s = 2048, b = 1,
  // checkpointing, SDPA.
  TransformerShape q;
  q.num_layers = 28;
  q.hidden_size = 3584;
  q.num_attention_heads = 28;
  q.num_key_value_heads = 4;
  q.head_dim = 128;
  q.intermediate_size = 18944;
  q.vocab_size = 152064;
  auto got = EstimateActivationBytes(q, Work(1, 2048, true));
  ASSERT_TRUE(got.ok()) << got.status();
  const uint64_t n = 2048ull * 3584;  // 7'340'032
  // The re-run layer: norms 2 x (6N + 4bs + 2N), SDPA 4 x 2bsad + 4bsa,
  // MLP 4 x 2bsI.
  EXPECT_EQ(got->recompute_bytes,
            2 * (8 * n + 8192) + (4 * 2 * 2048ull * 28 * 128 + 4 * 2048 * 28) +
                4 * 2 * 2048ull * 18944);
  EXPECT_EQ(got->recompute_bytes, 486'785'024u);
  // The logits' gradients: 8bsv = 2.32 GiB, the second once nll_loss's
  // targets (8 x 2049) and total_weight (4) are released, the largest
  // transient.
  EXPECT_EQ(got->loss_backward_bytes, 8ull * 2048 * 152064 - 8 * 2049 - 4);
  EXPECT_EQ(got->transient_bytes, 2'491'400'180u);
  // Held at the end of forward: 28 inputs 2N, the embedding's indices and
  // the positions, the final norm, the loss's fp32 log-probabilities, the
  // 16-bit logits and the rotary tables.
  EXPECT_EQ(got->total_bytes, 28 * 2 * n + 16384 + 16384 + (8 * n + 8192) +
                                  (4ull * 2048 * 152064 + 8 * 2049 + 4) +
                                  2ull * 2048 * 152064 + 4 * 2048 * 128);
}

TEST(ActivationEstimateTest, MultiQueryEagerKeepsKAndVAsViewsAtBatchOne) {
  // kv = 1: repeat_kv's expand + reshape is a view, and at b = 1 so is
  // matmul's reshape to the batch: K and V kept at 2sd = 32 each, not as
  // wide as q (2bsad = 64); at b = 2 they are copies.
  TransformerShape mqa = TinyLlama();
  mqa.num_key_value_heads = 1;
  auto one = EstimateActivationBytes(mqa, Work(1, 4, false, Attention::kEager));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->per_layer_bytes, 544u + (64 + 32 + 192 + 32 + 64) + 512);
  auto two = EstimateActivationBytes(mqa, Work(2, 4, false, Attention::kEager));
  ASSERT_TRUE(two.ok()) << two.status();
  // b = 2 doubles every term; K and V as wide as q.
  EXPECT_EQ(two->per_layer_bytes, 2 * (544u + 256 + 192 + 512));
  // b = 2: the targets are a copy, 8bs = 64.
  EXPECT_EQ(two->loss_bytes, 4u * 8 * 16 + 64 + 4);
}

TEST(ActivationEstimateTest, RefusesZeroSizesNamingTheField) {
  const struct {
    uint32_t b, s;
    uint64_t layers, hidden, heads, vocab;
    const char* field;
  } cases[] = {
      {0, 4, 2, 8, 2, 16, "workload.micro_batch"},
      {1, 0, 2, 8, 2, 16, "workload.sequence_length"},
      {1, 4, 0, 8, 2, 16, "shape.num_layers"},
      {1, 4, 2, 0, 2, 16, "shape.hidden_size"},
      {1, 4, 2, 8, 0, 16, "shape.num_attention_heads"},
      {1, 4, 2, 8, 2, 0, "shape.vocab_size"},
      {1, 4, 2, 8, 3, 16, "shape.hidden_size / shape.num_attention_heads"},
  };
  for (const auto& c : cases) {
    TransformerShape t = TinyLlama();
    t.num_layers = c.layers;
    t.hidden_size = c.hidden;
    t.num_attention_heads = c.heads;
    t.vocab_size = c.vocab;
    auto got = EstimateActivationBytes(t, Work(c.b, c.s, false));
    ASSERT_FALSE(got.ok()) << c.field;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(c.field));
  }
  TransformerShape t = TinyLlama();
  t.num_key_value_heads = 3;
  EXPECT_THAT(EstimateActivationBytes(t, Work(1, 4, false)).status().message(),
              HasSubstr("shape.num_key_value_heads"));
}

// A BLOOM layer (alibi, the embedding's LayerNorm, GeLUFunction, eager):
// L = 1, h = 8, a = 2 (d = 4), I = 32, v = 16.
TransformerShape TinyBloom() {
  TransformerShape t = TinyLlama();
  t.num_layers = 1;
  t.intermediate_size = 32;
  t.norm = NormKind::kLayerNorm;
  t.gated_mlp = t.rotary = false;
  t.fused_qkv = t.alibi = t.embedding_norm = t.no_sdpa = t.no_flash = true;
  t.activation = MlpActivation::kBloomGelu;
  return t;
}

// TinyBloom at b = 1, s = 3, P = 18. The input norm 48 + 24 and its
// output 48; q, k and v views of the fused output, kept once by baddbmm
// and bmm: 2 x 3 x 24 = 144; the fp32 softmax
// 72 and its 16-bit copy 36; dense's input 48; the second norm 48 + 24 and
// its output 48; GeLUFunction's input 192 and dense_4h_to_h's 192: 924. At
// b = 2 the views become three copies (3 x 96): 2 x (924 - 144) + 288.
TEST(ActivationEstimateTest, BloomKeepsTheFusedOutputOnceWhereViews) {
  TransformerShape t = TinyBloom();
  absl::StatusOr<ActivationBytes> one =
      EstimateActivationBytes(t, Work(1, 3, false));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->per_layer_bytes, 924u);
  // Outside: input_ids 24, the embedding norm 48 + 24, the final norm
  // 48 + 24 and its output 48.
  EXPECT_EQ(one->outside_layers_bytes, 24u + 72 + 72 + 48);
  absl::StatusOr<ActivationBytes> two =
      EstimateActivationBytes(t, Work(2, 3, false));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->per_layer_bytes, 2 * (924u - 144) + 288);
  // No sdpa or flash_attention_2 path: both refused.
  for (Attention a : {Attention::kSdpa, Attention::kFlashAttention2}) {
    EXPECT_EQ(EstimateActivationBytes(t, Work(1, 3, false, a)).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(ActivationEstimateTest, AFamilyNotModelledIsNotEstimated) {
  TransformerShape t = TinyLlama();
  t.not_estimated = "MixtralForCausalLM: routing not modelled";
  auto got = EstimateActivationBytes(t, Work(1, 4, false));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(got.status().message(),
            "activations: not estimated for this family: MixtralForCausalLM: "
            "routing not modelled");
  // The workload's sizes are checked first.
  EXPECT_EQ(EstimateActivationBytes(t, Work(0, 4, false)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// docs/tensor-parallelism.md, "Activations": a tp rank's split where it is
// modelled, else the whole model's estimate and a note saying why.
TEST(ActivationEstimateTest, TpNoteSaysWhyTheEstimateIsNotSplit) {
  TransformerShape t = TinyLlama();
  EXPECT_EQ(TpActivationNote(t, 1), std::nullopt);
  EXPECT_EQ(TpActivationNote(t, 2),
            "activations not split by tp: the model's shape was not "
            "described at this tp_size; activation_bytes is the estimate "
            "without tensor parallelism (tp_size 1)");
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 128;
  EXPECT_EQ(TpActivationNote(t, 2), std::nullopt);
  t.tp.not_split = "sequence parallelism is not modelled";
  EXPECT_EQ(TpActivationNote(t, 2),
            "activations not split by tp: sequence parallelism is not "
            "modelled; activation_bytes is the estimate without tensor "
            "parallelism (tp_size 1)");
  // Not split: the whole model's figures.
  auto whole = EstimateActivationBytes(TinyLlama(), Work(1, 4, false));
  auto noted = EstimateActivationBytes(t, Work(1, 4, false));
  ASSERT_TRUE(whole.ok() && noted.ok());
  EXPECT_EQ(noted->total_bytes, whole->total_bytes);
  EXPECT_EQ(noted->transient_bytes, whole->transient_bytes);
}

TEST(ActivationEstimateTest, TpRefusesHeadsItDoesNotDivide) {
  TransformerShape t = TinyLlama();  // a = 2
  t.tp.tp_size = 4;
  t.tp.padded_vocab = 256;
  EXPECT_EQ(EstimateActivationBytes(t, Work(1, 4, false)).status().message(),
            "shape.num_attention_heads must be divisible by shape.tp.tp_size");
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 8;  // below the vocabulary (16)
  EXPECT_EQ(EstimateActivationBytes(t, Work(1, 4, false)).status().message(),
            "shape.tp.padded_vocab must be a multiple of shape.tp.tp_size and "
            "at least shape.vocab_size");
}

// GPT-2 under sequence parallelism (docs/tensor-parallelism.md): _split
// asserts the sequence a multiple of tp; with checkpointing each block
// keeps its input's shard (s / tp rows), and a block's saves shrink
// wherever its norms, residual masks and norm outputs outweigh the two
// gathered inputs it adds. (Its figures are the oracle's:
// activation_differential_test.)
TEST(ActivationEstimateTest, Gpt2SequenceParallelSplitsTheBlocksSequence) {
  TransformerShape t = TinyGpt2();
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 128;
  t.tp.sequence_parallel = true;
  EXPECT_EQ(EstimateActivationBytes(t, Work(1, 7, true)).status().message(),
            "workload.sequence_length must be a multiple of shape.tp.tp_size "
            "under sequence parallelism (ColossalAI's _split asserts \"The "
            "dimension to split (...) is not a multiple of world size (...), "
            "cannot split tensor evenly\")");
  TransformerShape whole = t;
  whole.tp.sequence_parallel = false;
  const auto sp = EstimateActivationBytes(t, Work(2, 8, true));
  const auto tp = EstimateActivationBytes(whole, Work(2, 8, true));
  ASSERT_TRUE(sp.ok() && tp.ok()) << sp.status() << tp.status();
  EXPECT_EQ(sp->per_layer_bytes * 2, tp->per_layer_bytes);
  EXPECT_EQ(sp->outside_layers_bytes, tp->outside_layers_bytes);
  EXPECT_EQ(sp->loss_bytes, tp->loss_bytes);
}

TEST(ActivationEstimateTest, RefusesEachPartPast64Bits) {
  auto expect = [](const TransformerShape& t, const ActivationWorkload& w,
                   const char* part) {
    auto got = EstimateActivationBytes(t, w);
    ASSERT_FALSE(got.ok()) << part;
    EXPECT_EQ(got.status().message(),
              std::string("activations.") + part + " exceeds 2^64-1 bytes");
  };
  TransformerShape wide = TinyLlama();
  wide.hidden_size = uint64_t{1} << 60;  // norms 8N > 2^64
  wide.num_attention_heads = 1;
  expect(wide, Work(1, 1, false), "per_layer_bytes");
  TransformerShape deep = TinyLlama();
  deep.num_layers = uint64_t{1} << 62;
  expect(deep, Work(1, 4, false), "layers_bytes");
  // s^2 past 2^128 with a = 2^63, b = s = 2^31: only the eager scores.
  TransformerShape heads = TinyLlama();
  heads.num_attention_heads = uint64_t{1} << 62;
  heads.head_dim = 1;
  heads.num_key_value_heads = 1;
  expect(heads, Work(1u << 31, 1u << 31, false, Attention::kEager),
         "per_layer_bytes");
}

// BLOOM under sequence parallelism (docs/tensor-parallelism.md, "BLOOM's
// split"), TinyBloom at tp 2 (a = 1, d = 4, I = 16 a rank), b = 1,
// s = 4: n = 32, on the shard 16. The input norm 32 + 16 and its output
// 32 on the shard; q, k and v (views, b = 1) 3 x 32; the fp32 softmax 64
// and its 16-bit copy 32; dense's input 32; the second norm 32 + 16 and
// its output 32 on the shard; GeLUFunction's input 128 and dense_4h_to_h's
// 128; the two gathered inputs 2 x 64: 768.
TEST(ActivationEstimateTest, BloomSequenceParallelSplitsTheBlocksSequence) {
  TransformerShape t = TinyBloom();
  t.tp.tp_size = 2;
  t.tp.padded_vocab = 128;
  t.tp.sequence_parallel = true;
  const auto sp = EstimateActivationBytes(t, Work(1, 4, false));
  ASSERT_TRUE(sp.ok()) << sp.status();
  EXPECT_EQ(sp->per_layer_bytes, 768u);
  // _split's assert, naming the family where the description gave it.
  t.tp.model_type = "bloom";
  EXPECT_EQ(EstimateActivationBytes(t, Work(1, 5, false)).status().message(),
            "workload.sequence_length must be a multiple of shape.tp.tp_size "
            "under sequence parallelism (model_type \"bloom\" at tp_size 2 "
            "with gemini.enable_sequence_parallelism: ColossalAI's _split "
            "asserts \"The dimension to split (...) is not a multiple of "
            "world size (...), cannot split tensor evenly\")");
}

}  // namespace
}  // namespace chunkplan::planner
