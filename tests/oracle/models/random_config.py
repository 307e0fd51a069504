"""Helpers of the families' random_config functions: small configs that
sometimes leave a key out, so that the config class's default applies."""


def maybe(rng, config, key, value):
    """config[key] = value, or (half the time) the key left out."""
    if rng.random() < 0.5:
        config[key] = value


def common_head(rng, config, family):
    """Adds, each at random or left out, tie_word_embeddings and the
    architectures entry (one of the family's classes); returns config."""
    maybe(rng, config, "tie_word_embeddings", rng.random() < 0.5)
    maybe(rng, config, "architectures", [rng.choice(family.architectures)])
    return config


def heads_and_width(rng, max_heads=4, max_head_dim=8):
    """(num_attention_heads, num_key_value_heads, head_dim): a grouped
    query attention shape, kv heads dividing the heads."""
    kv_heads = rng.randint(1, max_heads)
    heads = kv_heads * rng.randint(1, 3)
    return heads, kv_heads, rng.randint(1, max_head_dim)
