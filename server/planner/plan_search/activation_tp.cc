#include "server/planner/plan_search/activation_tp.h"

#include <algorithm>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/activation_estimate.h"

namespace chunkplan::planner::activation {
namespace {

// What a rank keeps of n features split by Linear1D_Col or _Row: n / tp,
// or n whole where n < tp (from_native_module returns the module).
Wide Split(Wide n, Wide tp) { return n < tp ? n : n / tp; }

// The rank's vocabulary widths: lm_head's rows (the logits' storage) and
// the logits' columns once the padding is sliced off; whether sliced.
struct HeadWidths {
  Wide rows, width;
  bool sliced;
};

HeadWidths HeadOf(const TensorParallelShape& tp, const Dims& d) {
  const Wide t = tp.tp_size;
  if (tp.column_head) return {Split(d.v, t), Split(d.v, t), false};
  const Wide rows = Wide{tp.padded_vocab} / t;
  return {rows, std::min(rows, d.v), true};
}

}  // namespace

Checked HeadSteps(const Dims& d, Checked grad,
                  std::initializer_list<Wide> widths, Wide rows, bool bias) {
  Checked step = Wide{0};
  for (const Wide width : widths) {
    if (width == 0) continue;
    const Checked next = Mul({d.bs, width, 2});
    step = Max(step, Sum({grad, next}));
    grad = next;
  }
  // (lm_head reads e features: OPT's word_embed_proj_dim, else h)
  return Max(step, Sum({grad, Mul({d.bs, d.e, 2}), Mul({rows, d.e, 2}),
                        Mul({bias ? rows : Wide{0}, 2})}));
}

bool SplitByTp(const TensorParallelShape& tp) {
  return tp.tp_size > 1 && tp.not_split.empty();
}

absl::Status ToTpRank(const TensorParallelShape& tp, Dims* d) {
  const Wide t = tp.tp_size;
  if (d->a % t != 0) {
    return absl::InvalidArgumentError(
        "shape.num_attention_heads must be divisible by shape.tp.tp_size");
  }
  if (d->kv % t != 0) {
    return absl::InvalidArgumentError(
        "shape.num_key_value_heads must be divisible by shape.tp.tp_size");
  }
  if (tp.padded_vocab < d->v || tp.padded_vocab % t != 0) {
    return absl::InvalidArgumentError(
        "shape.tp.padded_vocab must be a multiple of shape.tp.tp_size and "
        "at least shape.vocab_size");
  }
  d->a /= t;
  d->kv /= t;
  d->inter = Split(d->inter, t);
  return absl::OkStatus();
}

TpTerms TpRankTerms(const TensorParallelShape& tp, const Dims& d,
                    bool head_bias) {
  const HeadWidths head = HeadOf(tp, d);
  const Wide rows = d.b * (d.s - 1);  // labels[..., 1:]
  const Wide logit_bytes = tp.logits_fp32 ? 4 : 2;
  TpTerms out;
  out.embedding_rows = Wide{tp.padded_vocab} / tp.tp_size;
  out.embedding_mask = d.bs;
  out.loss = Sum({Mul({rows, head.width, tp.loss_fp32 ? Wide{4} : Wide{2}}),
                  Mul({rows, 9})});
  out.held_logits =
      tp.logits_fp32
          ? Mul({d.bs, head.width, 4})
          : Mul({d.bs, tp.logits_contiguous ? head.width : head.rows, 2});
  const Checked grad_logits = Mul({d.bs, head.width, logit_bytes});
  out.loss_backward =
      Less(Sum({Mul({rows, head.width, logit_bytes}), grad_logits}), out.loss);
  // The steps after the loss's: the upcast's 16-bit copy, the padding
  // slice's full rows, lm_head's input and weight gradients.
  const Checked step =
      HeadSteps(d, grad_logits,
                {tp.logits_fp32 ? head.width : Wide{0},
                 // (a full slice is the tensor itself in
                 // Python's indexing: no step)
                 head.sliced && d.v < head.rows ? head.rows : Wide{0}},
                head.rows, head_bias);
  out.head_backward = Less(step, out.loss);
  return out;
}

Checked GatheredHeadBackward(const TensorParallelShape& tp, const Dims& d,
                             bool head_bias, const Checked& loss) {
  const HeadWidths head = HeadOf(tp, d);
  const Wide t = tp.tp_size;
  // The gathered width: the padded vocabulary (sliced to d.v after the
  // gather) or the column head's rows times tp (d.v; a head kept whole
  // where d.v < tp gathers nothing).
  const bool gathers = head.sliced || d.v >= t;
  const Checked step = HeadSteps(
      d, Mul({d.bs, d.v, tp.logits_fp32 ? Wide{4} : Wide{2}}),
      {tp.logits_fp32 ? d.v : Wide{0}, head.sliced ? head.rows * t : Wide{0},
       gathers ? head.rows : Wide{0}},
      head.rows, head_bias);
  return Less(step, loss);
}

}  // namespace chunkplan::planner::activation

namespace chunkplan::planner {

std::optional<std::string> TpActivationNote(const TransformerShape& shape,
                                            uint32_t tp_size) {
  if (tp_size <= 1) return std::nullopt;
  std::string why = shape.tp.not_split;
  if (shape.tp.tp_size != tp_size) {
    why = "the model's shape was not described at this tp_size";
  }
  if (why.empty()) return std::nullopt;
  return absl::StrCat("activations not split by tp: ", why,
                      "; activation_bytes is the estimate without tensor "
                      "parallelism (tp_size 1)");
}

}  // namespace chunkplan::planner
