"""Parameter numels of the torch.nn layers Hugging Face models are built of,
each in the order the layer registers its parameters (weight, then bias)."""


def linear(in_features, out_features, bias=True):
    """nn.Linear(in_features, out_features, bias): weight, bias."""
    return [in_features * out_features] + ([out_features] if bias else [])


def conv1d(in_features, out_features):
    """transformers' Conv1D(nf=out_features, nx=in_features), GPT-2's
    linear layer with the weight transposed: weight, bias."""
    return linear(in_features, out_features, bias=True)


def embedding(num_embeddings, dim):
    """nn.Embedding(num_embeddings, dim): weight."""
    return [num_embeddings * dim]


def layer_norm(dim, elementwise_affine=True):
    """nn.LayerNorm(dim, elementwise_affine): weight, bias; none without
    the affine part."""
    return [dim, dim] if elementwise_affine else []


def rms_norm(dim):
    """LlamaRMSNorm / MistralRMSNorm / MixtralRMSNorm(dim): weight."""
    return [dim]
