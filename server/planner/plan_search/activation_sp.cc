#include "server/planner/plan_search/activation_sp.h"

#include <algorithm>
#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"

namespace chunkplan::planner::activation {
namespace {

Checked Largest(std::initializer_list<Checked> steps) {
  Checked out = Wide{0};
  for (const Checked& s : steps) out = Max(out, s);
  return out;
}

// The input ids (int64) and GPT-2's positions (none beside BLOOM's ALiBi).
Checked IdsAndPositions(const TransformerShape& t, const Dims& d) {
  return Sum({Mul({d.bs, 8}), t.alibi ? Checked{Wide{0}} : Mul({d.s, 8})});
}

}  // namespace

absl::Status CheckSequenceSplit(const TensorParallelShape& tp, const Dims& d) {
  if (d.s % tp.tp_size != 0) {
    const std::string family =
        tp.model_type.empty()
            ? ""
            : absl::StrCat("model_type \"", tp.model_type, "\" at tp_size ",
                           tp.tp_size,
                           " with gemini.enable_sequence_parallelism: ");
    return absl::InvalidArgumentError(absl::StrCat(
        "workload.sequence_length must be a multiple of shape.tp.tp_size "
        "under sequence parallelism (",
        family,
        "ColossalAI's _split asserts \"The dimension to split (...) is not a "
        "multiple of world size (...), cannot split tensor evenly\")"));
  }
  return absl::OkStatus();
}

Checked OnShard(Checked x, Wide tp) {
  if (!x.has_value()) return std::nullopt;
  return *x / tp;
}

SpLayerTerms SequenceParallelLayer(const TransformerShape& t, const Dims& d,
                                   const SpLayerPieces& pieces, bool ckpt) {
  const Wide tp = t.tp.tp_size;
  const Checked n = Mul({d.bs, d.h});
  const Checked n2 = Mul({n, 2});         // a (b, s, h) 16-bit tensor
  const Checked ns2 = OnShard(n2, tp);    // its shard
  const Checked gathered = Mul({n2, 2});  // c_attn's and c_fc's
  const Checked mask = t.hidden_dropout ? OnShard(n, tp) : Checked{Wide{0}};
  const Checked drop_grad = t.hidden_dropout ? ns2 : Checked{Wide{0}};
  const Checked chunks = d.b > 1 ? n2 : Checked{Wide{0}};
  const Checked bi = Mul({d.bs, d.inter, 2});
  // The activation's backward above the saves, less the down projection's
  // input: gelu_new's last product (2 b s I); BLOOM's GeLUFunction, the
  // incoming gradient and bloom_gelu_back's five temporaries (6 x 2 b s I).
  const Checked act =
      Mul({bi, t.activation == MlpActivation::kBloomGelu ? Wide{5} : Wide{2}});
  const Wide ad = d.a * d.d;
  // A LayerNorm's saves on the shard: its input and fp32 mean and rstd.
  const Checked ln = Sum({ns2, OnShard(Mul({d.bs, 8}), tp)});
  const Checked layer = Sum({Less(pieces.layer, pieces.sharded),
                             OnShard(pieces.sharded, tp), gathered});
  const Checked three_ns = Mul({OnShard(n, tp), 3});  // a norm's backward
  // The MLP's backward, every save held but what is released: its
  // dropout; c_proj's gather (t shards and their cat); c_proj's matmul;
  // gelu_new's last product; c_fc's Col backward (its input's gradient,
  // the chunks, the shard, its weight's); ln_2's.
  const Checked weight_i = Mul({d.h, d.inter, 2});
  const Checked mlp_released = Sum({mask, pieces.mlp});
  Checked step =
      Largest({drop_grad, Less(Sum({drop_grad, Mul({n2, 2})}), mask),
               Less(Sum({n2, bi, weight_i}), mask), Less(act, mask),
               Less(Sum({bi, n2, chunks, ns2, weight_i}), mlp_released),
               Less(three_ns, Sum({mlp_released, ns2}))});
  // The attention's, once the MLP's saves, ln_2's and c_fc's shard are
  // released: its dropout, c_proj's gather and matmul, the attention.
  const Checked after_mlp = Sum({mlp_released, ln, ns2});
  const Checked q = Mul({d.bs, ad, 2});
  const Checked after_attention =
      Sum({after_mlp, mask, q, pieces.attn_released});
  step = Largest({step, Less(drop_grad, after_mlp),
                  Less(Sum({drop_grad, Mul({n2, 2})}), Sum({after_mlp, mask})),
                  Less(Sum({n2, q, Mul({d.h, ad, 2})}), Sum({after_mlp, mask})),
                  Less(pieces.attn_work, after_attention)});
  // c_attn's Col backward and ln_1's, once all but ln_1's saves, its
  // output's shard and the gathered inputs are released.
  const Checked rest = Less(layer, Sum({ln, ns2, gathered}));
  const Checked qkv = Mul({d.bs, ad, 6});
  step =
      Largest({step, Less(Sum({qkv, n2, chunks, ns2, Mul({d.h, ad, 6})}), rest),
               Less(three_ns, rest)});
  SpLayerTerms out;
  out.saved = layer;
  out.backward = Sum({ns2, step});
  out.inside = out.backward;
  if (!ckpt) return out;
  // Re-run: all its saves but the checkpointed input (ln_1's saved
  // input); its output and the gradient beside its backward; or its last
  // Row's output (2n) beside the reduce-scattered shard (and the chunks
  // where b > 1), the bias sum, the held attn_output and the gradient.
  const Checked recompute = Less(layer, ns2);
  const Checked forward_end =
      Sum({recompute, ns2, ns2,
           Max(Sum({n2, ns2, chunks}), Sum({n2, Mul({ns2, 2})}))});
  out.inside = Max(Sum({recompute, out.backward, ns2}), forward_end);
  return out;
}

Checked GatheredInputs(const Dims& d, uint64_t layers, bool ckpt) {
  if (ckpt) return Wide{0};
  return Mul({d.bs, d.h, 4, layers});
}

Checked SequenceParallelKept(const TransformerShape& t, const Dims& d,
                             Checked logits, bool ckpt) {
  return Sum(
      {IdsAndPositions(t, d), logits, GatheredInputs(d, t.num_layers, ckpt)});
}

Checked SequenceParallelEmbedding(const TransformerShape& t, const Dims& d,
                                  Wide rows, Checked released) {
  const bool tied = t.tied_embeddings;
  const Checked during =
      Sum({Mul({d.bs, d.h, 2}), Mul({rows, d.h, tied ? Wide{4} : Wide{2}})});
  const Checked summed = tied ? Less(Mul({rows, d.h, 6}), IdsAndPositions(t, d))
                              : Checked{Wide{0}};
  return Max(Less(during, released), Less(summed, released));
}

}  // namespace chunkplan::planner::activation
