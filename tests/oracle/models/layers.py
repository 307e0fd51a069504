"""Parameters of the torch.nn layers Hugging Face models are built of.

Each function returns a list of (name, numel) pairs in the order the layer
registers its parameters (weight, then bias), the names as
named_parameters() gives them under the layer's own name.
"""


class LinearWeight(int):
    """The numel of a linear layer's weight, an int that also knows the
    layer's in_features and out_features (where a LoRA adapter attaches:
    models/lora.py)."""

    def __new__(cls, in_features, out_features):
        weight = super().__new__(cls, in_features * out_features)
        weight.in_features = in_features
        weight.out_features = out_features
        return weight


def linear(name, in_features, out_features, bias=True):
    """nn.Linear(in_features, out_features, bias): weight, bias."""
    params = [(name + ".weight", LinearWeight(in_features, out_features))]
    if bias:
        params.append((name + ".bias", out_features))
    return params


def conv1d(name, in_features, out_features):
    """transformers' Conv1D(nf=out_features, nx=in_features), GPT-2's
    linear layer with the weight transposed: weight, bias."""
    return linear(name, in_features, out_features, bias=True)


def embedding(name, num_embeddings, dim):
    """nn.Embedding(num_embeddings, dim): weight."""
    return [(name + ".weight", num_embeddings * dim)]


def layer_norm(name, dim, elementwise_affine=True, bias=True):
    """nn.LayerNorm(dim, elementwise_affine, bias): weight, bias; none
    without the affine part."""
    if not elementwise_affine:
        return []
    return [(name + ".weight", dim)] + ([(name + ".bias", dim)] if bias
                                        else [])


def rms_norm(name, dim):
    """The RMS norms of LLaMA and its descendants (LlamaRMSNorm,
    GemmaRMSNorm, ...): weight."""
    return [(name + ".weight", dim)]


def scoped(prefix, params):
    """params as named under a parent module's attribute `prefix` (none
    where prefix is empty)."""
    if not prefix:
        return list(params)
    return [(prefix + "." + name, numel) for name, numel in params]


def repeated(prefix, count, block):
    """A ModuleList `prefix` of `count` modules: block(i) gives the
    parameters of module i, named under it."""
    params = []
    for i in range(count):
        params += scoped("%s.%d" % (prefix, i), block(i))
    return params


def with_head(cfg, model, base_prefix, head_name, width, vocab):
    """A language-model class around a bare model's parameters `model`: the
    bare model as attribute `base_prefix`, then the head `head_name`
    (nn.Linear(width, vocab, bias=False)) unless tie_word_embeddings ties
    it to the input embeddings, which are then listed once."""
    params = scoped(base_prefix, model)
    if not cfg.flag("tie_word_embeddings"):
        params += linear(head_name, width, vocab, bias=False)
    return params
