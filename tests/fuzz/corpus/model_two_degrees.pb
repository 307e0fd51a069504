{®Gáz„?Bg
e{"model_type": "gpt2", "n_embd": 16, "n_head": 2, "n_layer": 2, "n_positions": 32, "vocab_size": 100}