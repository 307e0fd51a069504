{®Gáz„?B
{"model_type": 