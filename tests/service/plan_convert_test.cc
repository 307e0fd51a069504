// server/service/plan_convert: chunkplan.v1.PlanRequest / PlanResponse <->
// the planner's Plan values, and the workload of a LayoutRequest. Expected
// values come from the wire contract
// (proto/chunkplan/v1/chunk_search.proto, docs/plan.md) and, for a model's
// shape, from the config text itself, not from the converter's output.
#include "server/service/plan_convert.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/proto_convert.h"

namespace chunkplan::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A LLaMA-style decoder: 3 layers, hidden 64, 4 heads, vocabulary 1000.
constexpr char kLlamaConfig[] = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000})";

// BERT: not a decoder-only family.
constexpr char kBertConfig[] = R"({
  "architectures": ["BertForMaskedLM"], "model_type": "bert",
  "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "vocab_size": 1000})";

// kLlamaConfig's shape (read off its text) with micro-batch 2 and sequence
// length 512, as both tests below send them.
void ExpectLlamaWorkload(const planner::PlanWorkload& got, bool checkpointing,
                         bool flash) {
  EXPECT_EQ(got.shape.num_layers, 3u);
  EXPECT_EQ(got.shape.hidden_size, 64u);
  EXPECT_EQ(got.shape.num_attention_heads, 4u);
  EXPECT_EQ(got.shape.vocab_size, 1000u);
  EXPECT_EQ(got.workload.micro_batch, 2u);
  EXPECT_EQ(got.workload.sequence_length, 512u);
  EXPECT_EQ(got.workload.activation_checkpointing, checkpointing);
  EXPECT_EQ(got.workload.attention, flash ? planner::Attention::kFlashAttention2
                                          : planner::Attention::kDefault);
  // The LLaMA layer's traits (server/models/decoder.h, ModelLlamaLayer).
  EXPECT_EQ(got.shape.num_key_value_heads, 2u);
  EXPECT_EQ(got.shape.head_dim, 16u);
  EXPECT_EQ(got.shape.intermediate_size, 128u);
  EXPECT_EQ(got.shape.norm, planner::NormKind::kRmsNorm);
  EXPECT_TRUE(got.shape.gated_mlp);
  EXPECT_TRUE(got.shape.rotary);
  EXPECT_TRUE(got.shape.fp32_softmax);
  EXPECT_FALSE(got.shape.attention_dropout);
  EXPECT_EQ(got.shape.not_estimated, "");
}

v1::PlanRequest FullPlanRequest() {
  v1::PlanRequest r;
  v1::ChunkSearchRequest* s = r.mutable_search();
  for (uint64_t n : {uint64_t{7}, uint64_t{0}, uint64_t{300}}) s->add_numels(n);
  s->add_dp_degrees(4);  // ignored: each option's world size
  s->set_search_range_m(1.5);
  s->set_search_interval(129);
  s->set_min_chunk_size_m(0.25);
  s->set_filter_exlarge_params(false);
  s->set_engine(v1::ENGINE_CPU_SWEEP);
  for (bool f : {true, false, true}) r.add_frozen(f);
  v1::GeminiSettings* g = r.mutable_gemini();
  g->set_precision(v1::PRECISION_BF16);
  g->set_master_weights(false);
  g->set_gradient_accumulation(true);
  g->set_pin_memory(false);
  g->set_optimizer(v1::OPTIMIZER_NONE);
  // The placement fields are the plan's: ignored, even out of range.
  g->set_placement(static_cast<v1::Placement>(7));
  g->set_shard_param_frac(0.5);
  g->set_offload_optim_frac(2.0);
  g->set_offload_param_frac(0.25);
  g->set_device_memory_bytes(12345);
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(uint64_t{80} << 30);
  c->set_host_memory_bytes(uint64_t{1} << 40);
  c->set_gpus_per_node(8);
  for (uint32_t w : {8u, 16u, 32u}) c->add_world_sizes(w);
  c->set_reserve_bytes(uint64_t{2} << 30);
  c->set_margin(0.125);
  r.set_max_options(4);
  return r;
}

TEST(PlanConvert, RequestCarriesEveryFieldAndIgnoresThePlansOwn) {
  const absl::StatusOr<planner::PlanRequest> got = FromProto(FullPlanRequest());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->search.numels, ElementsAre(7u, 0u, 300u));
  EXPECT_TRUE(got->search.dp_degrees.empty());
  EXPECT_EQ(got->search.search_range_m, 1.5);
  EXPECT_EQ(got->search.search_interval, 129u);
  EXPECT_EQ(got->search.min_chunk_size_m, 0.25);
  EXPECT_FALSE(got->search.filter_exlarge_params);
  EXPECT_EQ(got->search.engine, planner::Engine::kCpuSweep);
  EXPECT_THAT(got->frozen, ElementsAre(true, false, true));
  EXPECT_FALSE(got->gemini.master_weights);
  EXPECT_TRUE(got->gemini.gradient_accumulation);
  EXPECT_FALSE(got->gemini.pin_memory);
  EXPECT_EQ(got->gemini.optimizer, planner::Optimizer::kNone);
  EXPECT_EQ(got->gemini.placement, planner::Placement::kStatic);
  EXPECT_FALSE(got->gemini.shard_param_frac.has_value());
  EXPECT_EQ(got->gemini.offload_optim_frac, 0.0);
  EXPECT_EQ(got->gemini.offload_param_frac, 0.0);
  EXPECT_FALSE(got->gemini.device_memory_bytes.has_value());
  EXPECT_EQ(got->precision, "bf16");
  EXPECT_EQ(got->cluster.device_memory_bytes, uint64_t{80} << 30);
  EXPECT_EQ(got->cluster.host_memory_bytes, uint64_t{1} << 40);
  EXPECT_EQ(got->cluster.gpus_per_node, 8u);
  EXPECT_THAT(got->cluster.world_sizes, ElementsAre(8u, 16u, 32u));
  EXPECT_EQ(got->cluster.reserve_bytes, uint64_t{2} << 30);
  EXPECT_EQ(got->cluster.margin, 0.125);
  EXPECT_EQ(got->max_options, 4u);
  EXPECT_FALSE(got->workload.has_value());
  EXPECT_FALSE(got->cluster.whole_nodes);
  EXPECT_EQ(got->cluster.max_nodes, 0u);
  // Whole nodes travel as they are (the planner lists the world sizes).
  v1::PlanRequest whole = FullPlanRequest();
  whole.mutable_cluster()->clear_world_sizes();
  whole.mutable_cluster()->set_whole_nodes(true);
  whole.mutable_cluster()->set_max_nodes(6);
  const absl::StatusOr<planner::PlanRequest> nodes = FromProto(whole);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_TRUE(nodes->cluster.whole_nodes);
  EXPECT_EQ(nodes->cluster.max_nodes, 6u);
  EXPECT_TRUE(nodes->cluster.world_sizes.empty());
}

TEST(PlanConvert, UnsetFieldsTakeTheContractsDefaults) {
  const absl::StatusOr<planner::PlanRequest> got = FromProto(v1::PlanRequest());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->precision, "fp16");  // PRECISION_FP16 is 0
  EXPECT_TRUE(got->gemini.master_weights);
  EXPECT_TRUE(got->gemini.pin_memory);
  EXPECT_EQ(got->search.min_chunk_size_m, 32.0);
  EXPECT_TRUE(got->search.filter_exlarge_params);
  EXPECT_EQ(got->max_options, 0u);  // the planner reads 0 as 10
  EXPECT_TRUE(got->cluster.world_sizes.empty());
  EXPECT_FALSE(got->cluster.margin.has_value());  // the planner's 5%
}

TEST(PlanConvert, AModelsShapeFillsTheWorkload) {
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(kLlamaConfig);
  r.mutable_search()->add_dp_degrees(2);  // ignored, not "at most one"
  r.mutable_search()->add_dp_degrees(4);
  r.mutable_workload()->set_micro_batch(2);
  r.mutable_workload()->set_sequence_length(512);
  r.mutable_workload()->set_flash_attention(true);
  const absl::StatusOr<planner::PlanRequest> got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  // search_interval 0 with a model: GeminiPlugin's 1024.
  EXPECT_EQ(got->search.search_interval, 1024u);
  EXPECT_TRUE(got->search.dp_degrees.empty());
  // embed_tokens, 3 x (q, k, v, o, gate, up, down, 2 norms), norm, lm_head.
  EXPECT_EQ(got->search.numels.size(), 1u + 3 * 9 + 2);
  ASSERT_TRUE(got->workload.has_value());
  ExpectLlamaWorkload(*got->workload, /*checkpointing=*/false,
                      /*flash=*/true);
}

TEST(PlanConvert, FlashAttentionTrueMeansFlashAttention2) {
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(kLlamaConfig);
  r.mutable_workload()->set_micro_batch(2);
  r.mutable_workload()->set_sequence_length(512);
  r.mutable_workload()->set_attention(v1::ATTENTION_EAGER);
  absl::StatusOr<planner::PlanRequest> got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->workload->workload.attention, planner::Attention::kEager);
  r.mutable_workload()->set_flash_attention(true);
  got = FromProto(r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            "workload.flash_attention: true means attention "
            "ATTENTION_FLASH_ATTENTION_2; attention is ATTENTION_EAGER");
  r.mutable_workload()->set_attention(v1::ATTENTION_FLASH_ATTENTION_2);
  got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->workload->workload.attention,
            planner::Attention::kFlashAttention2);
}

TEST(PlanConvert, AWorkloadNeedsADecoderOnlyModel) {
  v1::PlanRequest numels = FullPlanRequest();
  numels.mutable_workload()->set_micro_batch(1);
  absl::StatusOr<planner::PlanRequest> got = FromProto(numels);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));

  v1::PlanRequest bert;
  bert.mutable_search()->mutable_model()->set_hf_config_json(kBertConfig);
  bert.mutable_workload()->set_micro_batch(1);
  got = FromProto(bert);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));
  EXPECT_THAT(got.status().message(), HasSubstr("bert"));
  // Without a workload the same model plans.
  bert.clear_workload();
  EXPECT_TRUE(FromProto(bert).ok());
}

TEST(PlanConvert, OutOfRangeEnumsAndModelErrorsNameTheField) {
  v1::PlanRequest engine;
  engine.mutable_search()->set_engine(static_cast<v1::Engine>(9));
  EXPECT_THAT(FromProto(engine).status().message(),
              HasSubstr("search.engine is 9"));
  v1::PlanRequest precision;
  precision.mutable_gemini()->set_precision(static_cast<v1::Precision>(3));
  EXPECT_THAT(FromProto(precision).status().message(),
              HasSubstr("gemini.precision is 3"));
  v1::PlanRequest optimizer;
  optimizer.mutable_gemini()->set_optimizer(static_cast<v1::Optimizer>(4));
  EXPECT_THAT(FromProto(optimizer).status().message(),
              HasSubstr("gemini.optimizer is 4"));
  v1::PlanRequest model;
  model.mutable_search()->mutable_model()->set_hf_config_json("[]");
  const absl::Status bad = FromProto(model).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("search.model: "));
  // The server's limits reach the description.
  model.mutable_search()->mutable_model()->set_hf_config_json(kLlamaConfig);
  const absl::Status large =
      FromProto(model, ModelLimits{10, 1 << 20}).status();
  EXPECT_EQ(large.code(), absl::StatusCode::kResourceExhausted);
}

TEST(PlanConvert, ResponseCarriesEveryField) {
  planner::PlanResult result;
  planner::PlanOption o;
  o.world_size = 16;
  o.nodes = 2;
  o.gemini.placement = planner::Placement::kStatic;
  o.gemini.offload_optim_frac = 0.25;
  o.gemini.offload_param_frac = 0.5;
  o.gemini.master_weights = false;
  o.configs = {{16, 4096, false}, {1, 100, true}};
  o.objective = planner::Objective::kPeakRankBytes;
  o.chunk_size_from = planner::ChunkSizeFrom::kPeakRankBytesWide;
  o.most_loaded_rank.device_bytes = 11;
  o.most_loaded_rank.host_bytes = 12;
  o.gathered_chunk_bytes = 13;
  o.verdict.host_bytes_per_node = 14;
  o.layout_padding = 15;
  o.activation_bytes = 16;
  o.verdict.device_need_bytes = 17;
  o.verdict.device_memory_bytes = 10;
  o.verdict.reserve_bytes = 3;
  o.verdict.margin = 0.25;
  o.verdict.margin_bytes = 3;
  o.verdict.headroom_bytes = 0;
  o.verdict.device_excess_bytes = 10;
  o.verdict.host_memory_bytes = 20;
  o.verdict.host_excess_bytes = 0;
  o.verdict.fits = false;
  o.verdict.tight = false;
  o.verdict.why_not = "device: 17 > 7 by 10";
  o.colossalai = "placement_policy=\"static\"";
  o.notes = {"a", "b"};
  result.options = {o};
  result.options_considered = 30;
  result.plan_nanos = 99;
  const v1::PlanResponse got = ToProto(result, v1::PRECISION_BF16);
  ASSERT_EQ(got.options_size(), 1);
  const v1::PlanOption& p = got.options(0);
  EXPECT_EQ(p.world_size(), 16u);
  EXPECT_EQ(p.nodes(), 2u);
  EXPECT_EQ(p.gemini().precision(), v1::PRECISION_BF16);
  EXPECT_EQ(p.gemini().placement(), v1::PLACEMENT_STATIC);
  EXPECT_EQ(p.gemini().offload_optim_frac(), 0.25);
  EXPECT_EQ(p.gemini().offload_param_frac(), 0.5);
  EXPECT_TRUE(p.gemini().has_master_weights());
  EXPECT_FALSE(p.gemini().master_weights());
  EXPECT_FALSE(p.gemini().has_shard_param_frac());
  EXPECT_FALSE(p.gemini().has_device_memory_bytes());
  ASSERT_EQ(p.configs_size(), 2);
  EXPECT_EQ(p.configs(0).dp_degree(), 16u);
  EXPECT_EQ(p.configs(0).chunk_size(), 4096u);
  EXPECT_TRUE(p.configs(1).keep_gathered());
  EXPECT_EQ(p.objective(), v1::OBJECTIVE_PEAK_RANK_BYTES);
  EXPECT_EQ(p.chunk_size_from(), "peak_rank_bytes_wide");
  EXPECT_EQ(p.most_loaded_rank().device_bytes(), 11u);
  EXPECT_EQ(p.most_loaded_rank().host_bytes(), 12u);
  EXPECT_EQ(p.gathered_chunk_bytes(), 13u);
  EXPECT_EQ(p.host_bytes_per_node(), 14u);
  EXPECT_EQ(p.layout_padding(), 15u);
  EXPECT_EQ(p.activation_bytes(), 16u);
  EXPECT_EQ(p.device_need_bytes(), 17u);
  EXPECT_FALSE(p.fits());
  EXPECT_EQ(p.why_not(), "device: 17 > 7 by 10");
  // The verdict, whole; the four fields above repeat it.
  const v1::Verdict& v = p.verdict();
  EXPECT_EQ(v.device_need_bytes(), 17u);
  EXPECT_EQ(v.device_memory_bytes(), 10u);
  EXPECT_EQ(v.reserve_bytes(), 3u);
  EXPECT_EQ(v.margin(), 0.25);
  EXPECT_EQ(v.margin_bytes(), 3u);
  EXPECT_EQ(v.device_excess_bytes(), 10u);
  EXPECT_EQ(v.host_bytes_per_node(), 14u);
  EXPECT_EQ(v.host_memory_bytes(), 20u);
  EXPECT_FALSE(v.fits());
  EXPECT_FALSE(v.tight());
  EXPECT_EQ(v.why_not(), "device: 17 > 7 by 10");
  EXPECT_EQ(p.colossalai(), "placement_policy=\"static\"");
  EXPECT_THAT(p.notes(), ElementsAre("a", "b"));
  EXPECT_EQ(got.options_considered(), 30u);
  EXPECT_EQ(got.plan_nanos(), 99u);
}

TEST(PlanConvert, PrecisionNamesAreGeminiPlugins) {
  EXPECT_EQ(PrecisionName(v1::PRECISION_FP16), "fp16");
  EXPECT_EQ(PrecisionName(v1::PRECISION_BF16), "bf16");
}

// The oracle's order: a bad cluster answers before the workload's family
// (numels cannot describe a shape), and the workload's sizes before it too.
TEST(PlanConvert, TheClusterAndWorkloadSizesAnswerBeforeTheModel) {
  v1::PlanRequest r = FullPlanRequest();
  r.mutable_workload()->set_micro_batch(1);
  r.mutable_workload()->set_sequence_length(8);
  const auto message = [&r] {
    const absl::StatusOr<planner::PlanRequest> got = FromProtoInOrder(r);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(got.status().message());
  };
  EXPECT_THAT(message(), HasSubstr("workload: the activation estimate needs "
                                   "the model's shape"));
  r.mutable_cluster()->add_world_sizes(16);  // a repeat
  EXPECT_THAT(message(), HasSubstr("cluster.world_sizes[3]"));
  r.mutable_cluster()->mutable_world_sizes()->RemoveLast();
  r.mutable_cluster()->set_margin(1.0);
  EXPECT_THAT(message(), HasSubstr("cluster.margin"));
  r.mutable_cluster()->clear_margin();
  r.mutable_workload()->set_sequence_length(0);
  EXPECT_THAT(message(), HasSubstr("workload.sequence_length"));
  r.mutable_cluster()->set_device_memory_bytes(0);
  EXPECT_THAT(message(), HasSubstr("cluster.device_memory_bytes"));
}

// A request whose only fault is its cluster converts: Planner::Plan checks
// the cluster, once, and answers its first fault.
TEST(PlanConvert, TheClusterOfARequestThatConvertsIsThePlannersToCheck) {
  v1::PlanRequest r = FullPlanRequest();
  r.mutable_cluster()->add_world_sizes(16);  // a repeat
  const absl::StatusOr<planner::PlanRequest> got = FromProtoInOrder(r);
  ASSERT_TRUE(got.ok()) << got.status();
  const absl::StatusOr<planner::PlanResult> plan =
      planner::Planner().Plan(*got);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("cluster.world_sizes[3]"));
}

// The Layout request's workload (proto/chunkplan/v1/chunk_search.proto):
// converted as Plan's (the shape read off the config text above), refused
// without a decoder-only model, and activation_bytes carried back.
v1::LayoutRequest WithWorkload(const char* config) {
  v1::LayoutRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(config);
  r.mutable_workload()->set_micro_batch(2);
  r.mutable_workload()->set_sequence_length(512);
  r.mutable_workload()->set_activation_checkpointing(true);
  return r;
}

TEST(LayoutWorkloadConvert, AModelsShapeFillsTheWorkload) {
  const absl::StatusOr<planner::LayoutRequest> got =
      FromProto(WithWorkload(kLlamaConfig));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->search.numels.size(), 1u + 3 * 9 + 2);
  ASSERT_TRUE(got->workload.has_value());
  ExpectLlamaWorkload(*got->workload, /*checkpointing=*/true,
                      /*flash=*/false);
  v1::LayoutRequest none = WithWorkload(kLlamaConfig);
  none.clear_workload();
  const absl::StatusOr<planner::LayoutRequest> without = FromProto(none);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->workload.has_value());
}

// A small GPT-2: 2 layers, n_embd 64, 4 heads, vocabulary 1000 (tied).
constexpr char kGpt2Config[] = R"({
  "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
  "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 1000})";

// The Layout request's tp split for `config` at tp 2, with or without
// sequence parallelism (GeminiPlugin's split_gather).
planner::TensorParallelShape TpOf(const char* config, bool sp) {
  v1::LayoutRequest r = WithWorkload(config);
  r.mutable_gemini()->set_tp_size(2);
  r.mutable_gemini()->set_enable_sequence_parallelism(sp);
  const absl::StatusOr<planner::LayoutRequest> got = FromProto(r);
  EXPECT_TRUE(got.ok()) << got.status();
  if (!got.ok() || !got->workload.has_value()) return {};
  return got->workload->shape.tp;
}

// Layout (and Frontier, which converts the same request) with
// enable_sequence_parallelism, which GeminiPlugin runs as split_gather
// with no sequence_parallel_process_group (docs/tensor-parallelism.md).
absl::Status SequenceParallelLayout(const char* config, uint32_t dp,
                                    uint32_t extra_dp) {
  v1::LayoutRequest r = WithWorkload(config);
  r.mutable_search()->add_dp_degrees(dp);
  r.mutable_gemini()->set_tp_size(2);
  r.mutable_gemini()->set_extra_dp_size(extra_dp);
  r.mutable_gemini()->set_enable_sequence_parallelism(true);
  return FromProto(r).status();
}

TEST(LayoutWorkloadConvert, SequenceParallelismGeminiPluginCannotRunIsRefused) {
  // GPT-2 without sequence parallelism: the split is modelled
  // (gpt2_lmhead_model_forward: 16-bit logits and loss, padded to 128).
  const planner::TensorParallelShape gpt2 = TpOf(kGpt2Config, false);
  EXPECT_EQ(gpt2.tp_size, 2u);
  EXPECT_EQ(gpt2.not_split, "");
  EXPECT_EQ(gpt2.padded_vocab, 1024u);
  EXPECT_FALSE(gpt2.logits_fp32 || gpt2.loss_fp32 || gpt2.column_head);
  // LLaMA with it: ColossalAI's attention forward asserts the group that
  // GeminiPlugin does not make (shardformer/modeling/llama.py:503-505), on
  // every mesh.
  const absl::Status llama = SequenceParallelLayout(kLlamaConfig, 1, 1);
  EXPECT_EQ(llama.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(llama.message(),
              HasSubstr("gemini.enable_sequence_parallelism: model_type "
                        "\"llama\" at tp_size 2"));
  EXPECT_THAT(llama.message(),
              HasSubstr("asserts \"Must specify sp_size and sp_group for "
                        "sequence parallel\" (shardformer/modeling/"
                        "llama.py:503-505)"));
  // GPT-2 with it: split over the tp group, gathered over the world; where
  // the world is the tp group (zero x extra_dp 1) the two agree and the
  // split is modelled (the blocks on the rank's sequence shard).
  const planner::TensorParallelShape gpt2_sp = TpOf(kGpt2Config, true);
  EXPECT_EQ(gpt2_sp.not_split, "");
  EXPECT_TRUE(gpt2_sp.sequence_parallel);
  EXPECT_FALSE(gpt2.sequence_parallel);
  EXPECT_TRUE(SequenceParallelLayout(kGpt2Config, 1, 1).ok());
  // Elsewhere dist_cross_entropy's shape assert fails (loss.py:324).
  for (const auto& [dp, extra_dp] : {std::pair{2u, 1u}, std::pair{1u, 2u}}) {
    const absl::Status wide = SequenceParallelLayout(kGpt2Config, dp, extra_dp);
    EXPECT_EQ(wide.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(wide.message(),
                HasSubstr("gemini.enable_sequence_parallelism: model_type "
                          "\"gpt2\" at tp_size 2 with zero x extra_dp 2"));
    EXPECT_THAT(wide.message(),
                HasSubstr("\"label shape ... does not match logit shape "
                          "...\" (shardformer/layer/loss.py:324)"));
  }
}

// Plan with enable_sequence_parallelism: a tp degree whose forward fails
// everywhere is refused where named and skipped where tp is searched; GPT-2
// runs only on the meshes whose world is the tp group, the others skipped,
// and where none is left the refusal answers.
TEST(PlanConvert, SequenceParallelismSkipsTheMeshesGeminiPluginCannotRun) {
  const planner::Planner planner;
  v1::PlanRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(kGpt2Config);
  r.mutable_search()->set_search_range_m(0.001);
  r.mutable_gemini()->set_tp_size(2);
  r.mutable_gemini()->set_enable_sequence_parallelism(true);
  v1::Cluster* c = r.mutable_cluster();
  c->set_device_memory_bytes(uint64_t{80} << 30);
  c->set_gpus_per_node(8);
  c->add_world_sizes(2);
  c->add_world_sizes(4);
  absl::StatusOr<planner::PlanRequest> plain = FromProtoInOrder(r);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<planner::PlanResult> got = planner.Plan(*plain);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_GT(got->options.size(), 0u);
  for (const planner::PlanOption& o : got->options) {
    EXPECT_EQ(o.world_size, 2u);
  }
  c->clear_world_sizes();
  c->add_world_sizes(4);
  plain = FromProtoInOrder(r);
  ASSERT_TRUE(plain.ok()) << plain.status();
  got = planner.Plan(*plain);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(),
              HasSubstr("gemini.enable_sequence_parallelism: model_type "
                        "\"gpt2\" at tp_size 2 with zero x extra_dp 2"));

  // LLaMA: named, refused; searched, every option at tp 1.
  r.mutable_search()->mutable_model()->set_hf_config_json(kLlamaConfig);
  EXPECT_THAT(FromProtoInOrder(r).status().message(),
              HasSubstr("gemini.enable_sequence_parallelism: model_type "
                        "\"llama\" at tp_size 2"));
  r.mutable_gemini()->clear_tp_size();
  r.set_search_tp(true);
  plain = FromProtoInOrder(r);
  ASSERT_TRUE(plain.ok()) << plain.status();
  got = planner.Plan(*plain);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_GT(got->options.size(), 0u);
  for (const planner::PlanOption& o : got->options) {
    EXPECT_EQ(o.gemini.tp_size, 1u);
  }
}

// The other policies' sequence parallelism under GeminiPlugin (docs/
// tensor-parallelism.md, the table): Mixtral's attention forward asserts
// the group GeminiPlugin does not make, on every mesh (Command's policy
// is refused at every tp_size already);
// BLOOM's forward splits and gathers over the tp group, so it runs on every
// mesh (its split not modelled: the note); OPT's, Falcon's and GPT-J's
// policies turn it off with a warning, so the split is as without it.
TEST(LayoutWorkloadConvert, SequenceParallelismOfTheOtherPolicies) {
  constexpr char kMixtral[] = R"({
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "num_local_experts": 4, "num_experts_per_tok": 2})";
  for (const auto& [config, family, where] :
       {std::tuple{kMixtral, "mixtral", "mixtral.py:592-594"}}) {
    const absl::Status refused = SequenceParallelLayout(config, 1, 1);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << family;
    EXPECT_THAT(refused.message(),
                HasSubstr(absl::StrCat(
                    "gemini.enable_sequence_parallelism: model_type \"", family,
                    "\" at tp_size 2")));
    EXPECT_THAT(refused.message(),
                HasSubstr(absl::StrCat(
                    "asserts \"Must specify sp_size and sp_group for "
                    "sequence parallel\" (shardformer/modeling/",
                    where, ")")));
  }
  constexpr char kBloom[] = R"({
    "architectures": ["BloomForCausalLM"], "model_type": "bloom",
    "hidden_size": 64, "n_layer": 2, "n_head": 4, "vocab_size": 1000})";
  constexpr char kOpt[] = R"({
    "architectures": ["OPTForCausalLM"], "model_type": "opt",
    "hidden_size": 64, "ffn_dim": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "word_embed_proj_dim": 64,
    "vocab_size": 1000})";
  constexpr char kFalcon[] = R"({
    "architectures": ["FalconForCausalLM"], "model_type": "falcon",
    "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_kv_heads": 2, "new_decoder_architecture": true,
    "vocab_size": 1000})";
  constexpr char kGptj[] = R"({
    "architectures": ["GPTJForCausalLM"], "model_type": "gptj",
    "n_embd": 64, "n_layer": 2, "n_head": 4, "rotary_dim": 8,
    "vocab_size": 1000})";
  for (const char* config : {kBloom, kOpt, kFalcon, kGptj}) {
    for (const auto& [dp, extra_dp] :
         {std::pair{1u, 1u}, std::pair{2u, 1u}, std::pair{1u, 2u}}) {
      EXPECT_TRUE(SequenceParallelLayout(config, dp, extra_dp).ok())
          << config << " " << SequenceParallelLayout(config, dp, extra_dp);
    }
  }
  // BLOOM's split over the tp group is modelled (the blocks on the rank's
  // sequence shard, activation_sp.h) on every mesh.
  const planner::TensorParallelShape bloom_sp = TpOf(kBloom, true);
  EXPECT_EQ(bloom_sp.not_split, "");
  EXPECT_TRUE(bloom_sp.sequence_parallel);
  EXPECT_FALSE(TpOf(kBloom, false).sequence_parallel);
  for (const char* ignored : {kOpt, kFalcon, kGptj}) {
    EXPECT_EQ(TpOf(ignored, true).not_split, TpOf(ignored, false).not_split)
        << ignored;
  }
}

TEST(LayoutWorkloadConvert, AWorkloadNeedsADecoderOnlyModel) {
  v1::LayoutRequest numels;
  numels.mutable_search()->add_numels(100);
  numels.mutable_workload()->set_micro_batch(1);
  numels.mutable_workload()->set_sequence_length(8);
  absl::StatusOr<planner::LayoutRequest> got = FromProto(numels);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));

  // A zero size is named before the model is looked at.
  numels.mutable_workload()->set_sequence_length(0);
  EXPECT_THAT(FromProto(numels).status().message(),
              HasSubstr("workload.sequence_length"));

  got = FromProto(WithWorkload(kBertConfig));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));
  EXPECT_THAT(got.status().message(), HasSubstr("bert"));
}

// The Layout request's cluster: copied (margin included), checked before
// the model is described; the verdict travels back only where there is one.
TEST(LayoutClusterConvert, TheClusterGoesAndTheVerdictComesBack) {
  v1::LayoutRequest r = WithWorkload(kLlamaConfig);
  r.mutable_cluster()->set_device_memory_bytes(1000);
  r.mutable_cluster()->set_reserve_bytes(7);
  r.mutable_cluster()->set_margin(0.5);
  absl::StatusOr<planner::LayoutRequest> got = FromProto(r);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->cluster.has_value());
  EXPECT_EQ(got->cluster->device_memory_bytes, 1000u);
  EXPECT_EQ(got->cluster->reserve_bytes, 7u);
  EXPECT_EQ(got->cluster->margin, 0.5);
  EXPECT_FALSE(FromProto(WithWorkload(kLlamaConfig))->cluster.has_value());

  r.mutable_search()->mutable_model()->set_hf_config_json("not json");
  r.mutable_cluster()->add_world_sizes(8);
  EXPECT_THAT(FromProto(r).status().message(),
              HasSubstr("cluster.world_sizes"));

  planner::LayoutResult result;
  EXPECT_FALSE(ToProto(result).has_verdict());
  result.verdict = planner::Verdict{};
  result.verdict->device_need_bytes = 42;
  result.verdict->tight = true;
  const v1::LayoutResponse out = ToProto(result);
  ASSERT_TRUE(out.has_verdict());
  EXPECT_EQ(out.verdict().device_need_bytes(), 42u);
  EXPECT_TRUE(out.verdict().tight());
  EXPECT_EQ(out.verdict().margin(), 0.05);
}

TEST(LayoutWorkloadConvert, ActivationBytesTravelBack) {
  planner::LayoutResult result;
  result.activation_bytes = 101'580;
  EXPECT_EQ(ToProto(result).activation_bytes(), 101'580u);
  EXPECT_EQ(ToProto(planner::LayoutResult{}).activation_bytes(), 0u);
}

}  // namespace
}  // namespace chunkplan::service
