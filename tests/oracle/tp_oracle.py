"""Tensor parallelism inside Gemini, as ColossalAI does it: the parameters
one tp rank keeps after ShardFormer applies the family's policy, and the
mesh GeminiPlugin builds. Transcribed from ColossalAI's text
(../shared/reference/colossalai/: booster/plugin/gemini_plugin.py,
shardformer/policies/*.py, shardformer/layer/{linear,embedding,
qkv_fused_linear}.py, shardformer/shard/shard_config.py), never from
chunkplan's C++, which it checks. Stdlib only.

  shard(description, config, tp, sequence_parallelism=False) -> Sharded
  rank_description(description, sharded) -> the description at the rank
  mesh(world, tp, extra_dp) -> (zero, extra_dp, tp)
  sequence_parallel_mesh(model_type, tp, zero_x_extra_dp, sp) -> None

`description` is the whole model as tests/oracle/models describes it;
`config` the config.json dict. A refusal raises TpRefused with
ColossalAI's own words (SpRefused where enable_sequence_parallelism is the
setting that fails).
"""

import dataclasses
from typing import List

from models import _BY_MODEL_TYPE
from models.hf_config import HfConfig

MAKE_VOCAB_SIZE_DIVISIBLE_BY = 64  # ShardConfig's default; GeminiPlugin
                                   # passes none


class TpRefused(ValueError):
    """ColossalAI refuses the setting (an assert, a ValueError, no policy)."""


class SpRefused(TpRefused):
    """The step fails under enable_sequence_parallelism: the setting named
    is gemini.enable_sequence_parallelism, not tp_size."""


# The layers a policy swaps in (shardformer/layer).
COL = "Linear1D_Col"                  # weight [out, in]: out/tp rows, bias/tp
ROW = "Linear1D_Row"                  # weight [out, in]: in/tp cols, bias whole
VOCAB = "VocabParallel"               # Embedding1D / LMHead1D: padded rows/tp
GPT2_COL = "GPT2FusedLinearConv1D_Col"  # weight [in, out]: out/tp, split_sizes
GPT2_ROW = "GPT2FusedLinearConv1D_Row"  # weight [in, out]: in/tp, bias whole

_DECODER = {"self_attn.q_proj": COL, "self_attn.k_proj": COL,
            "self_attn.v_proj": COL, "self_attn.o_proj": ROW,
            "mlp.gate_proj": COL, "mlp.up_proj": COL, "mlp.down_proj": ROW,
            "embed_tokens": VOCAB}


@dataclasses.dataclass(frozen=True)
class Policy:
    """One family's policy: submodule suffix -> (layer, split_sizes rule)."""
    file: str
    replaced: dict
    heads_key: str = "num_attention_heads"
    kv_key: str = None          # asserted divisible where set
    kv_not_less: bool = False   # llama.py / command.py: also kv >= tp
    tp_off_when: tuple = ()     # (key, value) pairs: falcon.py's warning
    sp_ignored: bool = False    # "... doesn't support sequence parallelism"
    refuses: str = None         # deepseek_v3.py's assert
    # Sequence parallelism kept on under GeminiPlugin, which gives
    # ShardConfig no sequence_parallel_process_group (gemini_plugin.py:
    # 560-568, so the policy's sp_group is None) and no mode (split_gather,
    # shard_config.py's __post_init__). sp_assert: the policy swaps in its
    # attention forward whenever enable_sequence_parallelism (llama.py,
    # qwen2.py, qwen3.py, mixtral.py: get_*_flash_attention_forward(
    # shard_config, sp_mode, sp_size, sp_group); command.py swaps it in
    # always), which asserts "Must specify sp_size and sp_group for
    # sequence parallel" at this file:line of shardformer/modeling/ once
    # sp_mode is set. sp_world: GPT-2's forward splits the sequence over
    # the tp group and gathers it over the sequence group, None: the whole
    # world; the loss's shape assert fails unless the world is the tp
    # group (zero x extra_dp = 1). Neither: BLOOM, whose model forward
    # (bloom.py: get_bloom_sequence_parallel_forward_fn) splits and
    # gathers over the tp group, so it runs on every mesh.
    sp_assert: str = None
    sp_world: bool = False
    # The policy's postprocess under tensor parallelism (and no pipeline,
    # which GeminiPlugin never makes): class -> its binding_map's
    # (source module, bound module) pairs; `dst_mod.weight =
    # src_mod.weight` makes one tensor of the two, which
    # model.parameters() lists once, under the first-registered name
    # (opt.py:433-444, OPTForCausalLMPolicy only).
    binds: dict = dataclasses.field(default_factory=dict)


# The classes chunkplan serves, by model_type, and their policies
# (auto_policy.py's _POLICY_LIST; a model_type absent here has none).
POLICIES = {
    "llama": Policy("llama", dict(_DECODER, lm_head=VOCAB),
                    kv_key="num_key_value_heads", kv_not_less=True,
                    sp_assert="llama.py:503-505"),
    # command.py:79-85 swaps in modeling/command.py's attention forward at
    # every tp_size; it asserts a dict mask (:395-398), which only the
    # model forward installed with enable_flash_attention or sequence
    # parallelism builds (GeminiPlugin's default: neither).
    "cohere": Policy("command", dict(_DECODER, lm_head=VOCAB),
                     kv_key="num_key_value_heads", kv_not_less=True,
                     refuses=("Flash Attention Error: attention_mask should "
                              "be a dict.")),
    "mistral": Policy("mistral", dict(_DECODER, lm_head=VOCAB),
                      kv_key="num_key_value_heads", sp_ignored=True),
    "qwen2": Policy("qwen2", dict(_DECODER, lm_head=VOCAB),
                    kv_key="num_key_value_heads",
                    sp_assert="qwen2.py:493-495"),
    "qwen3": Policy("qwen3", dict(_DECODER, lm_head=COL),
                    kv_key="num_key_value_heads",
                    sp_assert="qwen3.py:479-481"),
    "mixtral": Policy("mixtral", {
        "self_attn.q_proj": COL, "self_attn.k_proj": COL,
        "self_attn.v_proj": COL, "self_attn.o_proj": ROW,
        "block_sparse_moe.gate": COL, "embed_tokens": VOCAB, "lm_head": COL},
        kv_key="num_key_value_heads", sp_assert="mixtral.py:592-594"),
    "gpt2": Policy("gpt2", {
        "wte": VOCAB, "attn.c_attn": (GPT2_COL, 3), "attn.c_proj": GPT2_ROW,
        "mlp.c_fc": (GPT2_COL, 1), "mlp.c_proj": GPT2_ROW, "lm_head": VOCAB},
        heads_key="n_head", sp_world=True),
    "gptj": Policy("gptj", {
        "wte": VOCAB, "attn.k_proj": COL, "attn.q_proj": COL,
        "attn.v_proj": COL, "attn.out_proj": ROW, "mlp.fc_in": COL,
        "mlp.fc_out": ROW, "lm_head": VOCAB}, heads_key="n_head",
        sp_ignored=True),
    "opt": Policy("opt", {
        "q_proj": COL, "k_proj": COL, "v_proj": COL, "out_proj": ROW,
        "fc1": COL, "fc2": ROW, "embed_tokens": VOCAB, "lm_head": VOCAB},
        sp_ignored=True,
        binds={"OPTForCausalLM": (("model.decoder.embed_tokens", "lm_head"),)}),
    "bloom": Policy("bloom", {
        "self_attention.query_key_value": COL, "self_attention.dense": ROW,
        "mlp.dense_h_to_4h": COL, "mlp.dense_4h_to_h": ROW,
        "word_embeddings": VOCAB, "lm_head": VOCAB}, heads_key="n_head"),
    "falcon": Policy("falcon", {
        "self_attention.query_key_value": COL, "self_attention.dense": ROW,
        "mlp.dense_h_to_4h": COL, "mlp.dense_4h_to_h": ROW,
        "word_embeddings": VOCAB, "lm_head": VOCAB}, kv_key="num_kv_heads",
        tp_off_when=(("new_decoder_architecture", False),
                     ("multi_query", True)), sp_ignored=True),
    # BertLMPredictionHead's decoder, whose bias is cls.predictions.bias.
    "bert": Policy("bert", {
        "attention.self.query": COL, "attention.self.key": COL,
        "attention.self.value": COL, "attention.output.dense": ROW,
        "intermediate.dense": COL, "output.dense": ROW,
        "word_embeddings": VOCAB, "cls.predictions.decoder": VOCAB,
        "cls.predictions": VOCAB}),
    "deepseek_v3": Policy("deepseek_v3", {}, refuses=(
        "DeepSeekV3 does not support tensor parallelism")),
}


@dataclasses.dataclass(frozen=True)
class Sharded:
    names: List[str]
    numels: List[int]
    policy: str            # "" where nothing was sharded
    padded_vocab_size: int  # 0 where no vocab-parallel layer applies
    notes: List[str]

    @property
    def total(self):
        return sum(self.numels)


def padded_vocab(vocab, tp):
    """VocabParallelEmbedding1D: up to a multiple of 64 * tp."""
    multiple = MAKE_VOCAB_SIZE_DIVISIBLE_BY * tp
    return vocab if vocab % multiple == 0 else \
        vocab + multiple - vocab % multiple


def mesh(world, tp, extra_dp):
    """GeminiPlugin's ProcessGroupMesh(zero, extra_dp, tp)."""
    zero = world // (tp * extra_dp)
    if world != tp * extra_dp * zero:
        raise TpRefused("The global group size can't be evenly divided by "
                        "the subgroup size.")
    return zero, extra_dp, tp


def _rule(policy, module):
    for suffix, layer in policy.replaced.items():
        if module == suffix or module.endswith("." + suffix):
            return layer
    return None


def _features(features, what, tp, name):
    """from_native_module: False (kept whole) where features < tp."""
    if features < tp:
        return False
    if features % tp:
        raise TpRefused(f"{name}: The size of {what}:{features} is not integer "
                        f"multiples of tensor parallel size: {tp}!")
    return True


def _local(layer, name, numel, hidden, vocab, tp):
    module, param = name.rsplit(".", 1)
    bias = param == "bias"
    fused = 1
    if isinstance(layer, tuple):
        layer, fused = layer
    if layer == VOCAB:
        rows = vocab
        width = numel // rows
        return padded_vocab(rows, tp) // tp * width
    if layer == COL:
        out = numel if bias else numel // hidden  # in_features = hidden
        return numel // tp if _features(out, "out_features", tp, name) \
            else numel
    if layer == ROW:
        if bias:
            return numel
        in_ = numel // hidden  # out_features = hidden
        return numel // tp if _features(in_, "in_features", tp, name) \
            else numel
    if layer == GPT2_COL:
        out = numel if bias else numel // hidden
        if not _features(out, "out_features", tp, name):
            return numel
        size = out // fused
        if size % tp:
            raise TpRefused(f"{name}: size {size} is not divisible by "
                            f"world_size {tp}")
        return numel // tp
    if layer == GPT2_ROW:
        if bias:
            return numel
        in_ = numel // hidden
        return numel // tp if _features(in_, "in_features", tp, name) \
            else numel
    raise AssertionError(layer)


def shard(description, config, tp, sequence_parallelism=False):
    """tp rank 0's parameters (every rank's: each split is even), in
    model.parameters() order: the names may be fewer than the
    description's where the policy binds one weight to another."""
    if tp < 1:
        raise TpRefused("tp_size must be at least 1")
    notes = []
    whole = Sharded(list(description.names), list(description.numels), "", 0,
                    notes)
    if tp == 1:
        if sequence_parallelism:  # gemini_plugin.py: off without tp
            notes.append("sequence parallelism off without tp")
        return whole
    model_type = description.model_type
    policy = POLICIES.get(model_type)
    if policy is None:
        raise TpRefused(f"Auto policy for {description.architecture} is not "
                        "implemented")
    if policy.refuses:
        raise TpRefused(policy.refuses)
    cfg = HfConfig(config, _BY_MODEL_TYPE[model_type].defaults)
    if policy.tp_off_when and all(cfg.flag(k) == v
                                  for k, v in policy.tp_off_when):
        notes.append("tensor parallelism off (falcon.py's warning)")
        return whole
    heads = cfg.size(policy.heads_key)
    if heads % tp:
        raise TpRefused("The number of attention heads must be divisible by "
                        "tensor parallel size.")
    if policy.kv_key:
        kv = cfg.optional_size(policy.kv_key) or heads
        if policy.kv_not_less and (kv < tp or kv % tp):
            raise TpRefused("The number of key_value heads must be divisible "
                            "by, and must not be less than tensor parallel "
                            "size.")
        if kv % tp:
            raise TpRefused("The number of key_value heads must be divisible "
                            "by tensor parallel size.")
    if sequence_parallelism and policy.sp_ignored:
        notes.append("sequence parallelism ignored by the policy")
    if sequence_parallelism and policy.sp_assert:
        raise SpRefused('"Must specify sp_size and sp_group for sequence '
                        f'parallel" (shardformer/modeling/{policy.sp_assert})')
    hidden = description.hidden_size
    vocab = cfg.size("vocab_size")
    bound = _bound(policy, description)
    names, numels = [], []
    for name, numel in zip(description.names, description.numels):
        if name in bound:
            continue
        layer = _rule(policy, name.rsplit(".", 1)[0])
        names.append(name)
        numels.append(numel if layer is None else
                      _local(layer, name, numel, hidden, vocab, tp))
    has_vocab = any(v == VOCAB for v in policy.replaced.values())
    return Sharded(names, numels, policy.file,
                   padded_vocab(vocab, tp) if has_vocab else 0, notes)


def rank_description(description, sharded):
    """`description` (the whole model) as tp rank 0 holds it: the names and
    numels of `sharded` (shard's answer for it), whose indices the
    operation sequences (gathered_oracle.operations) and frozen flags of a
    tp request refer to."""
    return dataclasses.replace(description, names=list(sharded.names),
                               numels=list(sharded.numels))


def _bound(policy, description):
    """The parameter names postprocess's binding_map takes out of the
    list: each bound module's weight, now its source's (listed under the
    source's name, registered first), where both modules have one."""
    names = set(description.names)
    out = set()
    for src, dst in policy.binds.get(description.architecture, ()):
        if src + ".weight" in names and dst + ".weight" in names:
            out.add(dst + ".weight")
    return out


def sequence_parallel_mesh(model_type, tp, zero_x_extra_dp,
                           sequence_parallelism):
    """Raises SpRefused where the mesh (zero x extra_dp) cannot run the
    policy's sequence parallelism (GPT-2's gather over the whole world:
    dist_cross_entropy's "label shape ... does not match logit shape ..."
    assert, shardformer/layer/loss.py:324); shard() has refused what
    fails on every mesh."""
    policy = POLICIES.get(model_type)
    if (tp > 1 and sequence_parallelism and policy is not None
            and policy.sp_world and not policy.sp_ignored
            and zero_x_extra_dp > 1):
        raise SpRefused('dist_cross_entropy asserts "label shape ... does '
                        'not match logit shape ..." '
                        "(shardformer/layer/loss.py:324)")
