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


def leave_out(rng, config, key):
    """Half the time, deletes config[key] (the default applies)."""
    if rng.random() < 0.5:
        del config[key]


def decoder_shape(rng, model_type, head_dim="either"):
    """A small LLaMA-like shape: grouped-query heads (kv heads dividing the
    heads), layers, intermediate size, vocabulary, and the width: heads *
    head_dim with no head_dim key ("derived"), a head_dim key apart from
    the width ("explicit", as Gemma publishes), or either."""
    kv_heads = rng.randint(1, 4)
    heads = kv_heads * rng.randint(1, 3)
    width = rng.randint(1, 8)
    config = {"model_type": model_type, "num_attention_heads": heads,
              "num_key_value_heads": kv_heads,
              "num_hidden_layers": rng.randint(1, 3),
              "intermediate_size": rng.randint(1, 40),
              "vocab_size": rng.randint(1, 300)}
    if head_dim == "explicit" or (head_dim == "either"
                                  and rng.random() < 0.5):
        # Still a multiple of the heads, which transformers 5 checks.
        config.update(hidden_size=heads * rng.randint(1, 8), head_dim=width)
    else:
        config["hidden_size"] = heads * width
    return config
