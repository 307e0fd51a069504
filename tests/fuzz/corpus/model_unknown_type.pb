{®Gáz„?B
{"model_type": "t5"}