#include "server/service/workload_convert.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/service/proto_convert.h"

namespace chunkplan::service {

absl::Status CheckWorkloadSizes(const v1::Workload& workload) {
  if (workload.micro_batch() == 0) {
    return absl::InvalidArgumentError("workload.micro_batch: 0; at least 1");
  }
  if (workload.sequence_length() == 0) {
    return absl::InvalidArgumentError(
        "workload.sequence_length: 0; at least 1");
  }
  return absl::OkStatus();
}

namespace {

// The attention the workload names; flash_attention true is
// flash_attention_2.
absl::StatusOr<planner::Attention> AttentionOf(const v1::Workload& w) {
  using planner::Attention;
  if (w.flash_attention() && w.attention() != v1::ATTENTION_DEFAULT &&
      w.attention() != v1::ATTENTION_FLASH_ATTENTION_2) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload.flash_attention: true means attention "
                     "ATTENTION_FLASH_ATTENTION_2; attention is ",
                     v1::Attention_Name(w.attention())));
  }
  if (w.flash_attention()) return Attention::kFlashAttention2;
  switch (w.attention()) {
    case v1::ATTENTION_EAGER:
      return Attention::kEager;
    case v1::ATTENTION_SDPA:
      return Attention::kSdpa;
    case v1::ATTENTION_FLASH_ATTENTION_2:
      return Attention::kFlashAttention2;
    default:
      return Attention::kDefault;
  }
}

}  // namespace

planner::TensorParallelShape TpShapeOf(const models::ModelDescription& m) {
  planner::TensorParallelShape tp;
  tp.tp_size = m.tp_size;
  if (m.tp_size <= 1) return tp;
  if (m.tp_policy.empty()) {
    tp.not_split =
        "the policy turns tensor parallelism off: every rank runs the whole "
        "model";
  } else if (!m.tp_causal_lm.modelled) {
    tp.not_split = absl::StrCat("model_type \"", m.model_type,
                                "\": ShardFormer's forward for it (policy ",
                                m.tp_policy, ") is not modelled");
  } else if (m.tp_sequence_parallelism && !m.tp_causal_lm.sp_modelled) {
    // What DescribeModel and CheckSequenceParallelMesh let through and is
    // not modelled (none today: GPT-2's and BLOOM's splits are).
    tp.not_split =
        "sequence parallelism (split_gather: each rank's sequence shard, "
        "gathered inputs, ColossalAI's attention forward) is not modelled";
  } else if (m.tp_causal_lm.gathered_head && m.tp_column_head &&
             m.traits.tied_embeddings && m.padded_vocab_size != m.vocab_size) {
    // Linear1D_Col keeps the embedding's padded rows (already sharded) and
    // gathers them; ForCausalLMLoss views the logits by vocab_size.
    tp.not_split = absl::StrCat(
        "model_type \"", m.model_type,
        "\": lm_head (Linear1D_Col) tied to the vocab-parallel embedding "
        "gathers its padded rows, which transformers' loss does not take");
  }
  tp.padded_vocab = m.padded_vocab_size;
  tp.model_type = m.model_type;
  tp.column_head = m.tp_column_head;
  tp.logits_fp32 = m.tp_causal_lm.logits_fp32;
  tp.loss_fp32 = m.tp_causal_lm.loss_fp32;
  // GPT-2 where zero x extra_dp is 1 (the world is the tp group); BLOOM on
  // every mesh.
  tp.sequence_parallel =
      m.tp_sequence_parallelism && m.tp_causal_lm.sp_modelled;
  tp.logits_contiguous = m.tp_causal_lm.logits_contiguous;
  tp.gathered_head = m.tp_causal_lm.gathered_head;
  tp.ties_head = m.tp_causal_lm.ties_head;
  return tp;
}

namespace {

// The planner's shape and layer traits of a decoder-only description.
planner::TransformerShape ShapeOf(const models::ModelDescription& m) {
  const models::DecoderTraits& t = m.traits;
  planner::TransformerShape s;
  s.num_layers = m.num_layers;
  s.hidden_size = m.hidden_size;
  s.num_attention_heads = m.num_attention_heads;
  s.vocab_size = m.vocab_size;
  s.num_key_value_heads = m.num_key_value_heads;
  s.head_dim = t.head_dim;
  s.intermediate_size = m.intermediate_size;
  s.tied_embeddings = t.tied_embeddings;
  s.fused_qkv = t.fused_qkv;
  s.norm = t.norm == "gemma_rms"           ? planner::NormKind::kGemmaRmsNorm
           : t.norm == "layer_norm"        ? planner::NormKind::kLayerNorm
           : t.norm == "cohere_layer_norm" ? planner::NormKind::kCohereLayerNorm
                                           : planner::NormKind::kRmsNorm;
  s.gated_mlp = t.gated_mlp;
  s.activation = t.gelu_new     ? planner::MlpActivation::kGeluNew
                 : t.gelu_fast  ? planner::MlpActivation::kGeluFast
                 : t.relu       ? planner::MlpActivation::kRelu
                 : t.bloom_gelu ? planner::MlpActivation::kBloomGelu
                                : planner::MlpActivation::kSingleOp;
  s.rotary_dim = t.rotary_dim;
  s.parallel_residual = t.parallel_residual;
  s.value_view = t.value_view;
  s.mask_positions = t.mask_positions;
  s.no_final_norm = t.no_final_norm;
  s.post_norm = t.post_norm;
  s.embed_proj_dim = t.embed_proj_dim;
  s.single_norm = t.single_norm;
  s.gptj_rotary = t.gptj_rotary;
  s.fp32_logits = t.fp32_logits;
  s.head_bias = t.head_bias;
  s.no_sdpa = t.no_sdpa;
  s.kv_broadcast = t.kv_broadcast;
  s.indexed_kv = t.indexed_kv;
  s.one_residual_mask = t.one_residual_mask;
  s.direct_sdpa = t.direct_sdpa;
  s.alibi = t.alibi;
  s.embedding_norm = t.embedding_norm;
  s.no_flash = t.no_flash;
  s.rotary = t.rotary;
  s.qk_norm = t.qk_norm;
  s.fp32_softmax = t.fp32_softmax;
  s.scale_by_tensor = t.scale_by_tensor;
  s.embed_scale = t.embed_scale;
  s.attention_output_held = t.attention_output_held;
  s.attention_dropout = t.attention_dropout;
  s.hidden_dropout = t.hidden_dropout;
  s.embedding_dropout = t.embedding_dropout;
  s.moe_layers = t.moe_layers;
  s.num_experts = t.num_experts;
  s.experts_per_token = t.experts_per_token;
  s.moe_intermediate_size = t.moe_intermediate_size;
  s.shared_expert_intermediate_size = t.shared_expert_intermediate_size;
  s.norm_topk_prob = t.norm_topk_prob;
  s.q_lora_rank = t.q_lora_rank;
  s.kv_lora_rank = t.kv_lora_rank;
  s.qk_rope_head_dim = t.qk_rope_head_dim;
  s.v_head_dim = t.v_head_dim;
  s.deepseek_moe = t.deepseek_moe;
  s.deepseek_v2 = t.deepseek_v2;
  s.router_groups = t.router_groups;
  s.seq_aux = t.seq_aux;
  s.llama4 = t.llama4;
  s.l2_qk_norm = t.l2_qk_norm;
  s.temperature_tuning = t.temperature_tuning;
  s.nope_layers = t.nope_layers;
  s.nope_moe_layers = t.nope_moe_layers;
  s.tp = TpShapeOf(m);
  s.fused_gate_up = t.fused_gate_up;
  s.parallel_block = t.parallel_block;
  s.four_norms = t.four_norms;
  s.attn_softcap = t.attn_softcap;
  s.final_softcap = t.final_softcap;
  s.local_rotary = t.local_rotary;
  s.both_rotary_used = t.both_rotary_used;
  if (!t.not_estimated.empty()) {
    s.not_estimated = absl::StrCat(m.architecture, " (model_type \"",
                                   m.model_type, "\"): ", t.not_estimated);
  }
  return s;
}

}  // namespace

absl::StatusOr<planner::PlanWorkload> PlanWorkloadOf(
    const v1::Workload& workload,
    const std::optional<models::ModelDescription>& described,
    const ModelLimits& limits) {
  // A parameter list names no family: it has no shape of its own.
  std::optional<models::ModelDescription> model = described;
  if (model.has_value() && model->param_list) model.reset();
  if (model.has_value() && workload.has_shape_from()) {
    return absl::InvalidArgumentError(
        "workload.shape_from: set with search.model, whose shape the "
        "estimate takes; send one of them");
  }
  if (!model.has_value() && workload.has_shape_from()) {
    absl::StatusOr<models::ModelDescription> shape =
        DescribeConfig(workload.shape_from(), limits);
    if (!shape.ok()) return Prefixed("workload.shape_from: ", shape.status());
    model = *std::move(shape);
  }
  if (!model.has_value()) {
    return absl::InvalidArgumentError(
        "workload: the activation estimate needs the model's shape: send "
        "search.model (a decoder-only family) or, with numels or a "
        "parameter list (search.model.param_list_json), "
        "workload.shape_from");
  }
  if (!model->decoder_only) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload: the activation estimate covers decoder-only models; ",
        model->architecture, " (model_type \"", model->model_type,
        "\") is not one"));
  }
  planner::PlanWorkload out;
  CHUNKPLAN_ASSIGN_OR_RETURN(out.workload.attention, AttentionOf(workload));
  out.shape = ShapeOf(*model);
  const models::AdapterFacts& a = model->adapters;
  out.shape.adapters = {a.rank,          a.dropout,
                        a.layer_modules, a.layer_in_features,
                        a.other_modules, a.other_in_features};
  out.workload.micro_batch = workload.micro_batch();
  out.workload.sequence_length = workload.sequence_length();
  out.workload.activation_checkpointing = workload.activation_checkpointing();
  return out;
}

}  // namespace chunkplan::service
