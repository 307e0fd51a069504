#!/usr/bin/env python3
"""The C++ model families (server/models, through chunkplan-describe-tool)
against the independent Python oracle (tests/oracle/models): every
parameter's name and numel, in order, the model type, class and hidden
size, and the operations of one forward pass (tests/oracle/
gathered_oracle.py's transcription; none where it has none), on every real config of the oracle's data under each of its family's
classes, and on fresh random configs of every family (a new seed each run,
printed; CHUNKPLAN_SEED=N repeats a run).

    models_differential_test.py PATH/TO/chunkplan-describe-tool
"""

import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "oracle"))
import decoder_traits  # noqa: E402
import gathered_oracle  # noqa: E402
import models  # noqa: E402
from models import FAMILIES, MODEL_TYPES, PUBLISHED, describe, \
    random_config  # noqa: E402
from models.layers import LinearWeight  # noqa: E402
from models.lora import adapt  # noqa: E402

TOOL = None  # set from argv in main
RANDOM_CONFIGS_PER_FAMILY = 50
# The families of issue 43, whose every key gets the hostile values.
NEW_FAMILIES = ("qwen3", "qwen3_moe", "deepseek_v2", "deepseek_v3",
                "llama4_text", "gemma3_text", "cohere", "falcon", "gptj",
                "bloom")
# Values a config.json may hold where a size, a count, a flag, a list or a
# name belongs: wrong types, out of range, null, empty. (2**64 and past:
# models_hostile_test.cc; the oracle would build 2**64 layers.)
HOSTILE_VALUES = (-1, 0, 1, 2, 1.5, 4.0, "8", True, False, None, [], [0, -1],
                  {}, "", -2**63)
# Enough to tell a config apart without flooding the log.
MAX_REPORTED = 5
# LoRA adapters on random configs of every family (their operations).
LORA_CONFIGS_PER_FAMILY = 10


def run_tool(requests, loras=None):
    """The tool's answers (dicts) to (config, architecture) requests, all
    in one process; `loras`: one {"rank", "targets"} a request."""
    lines = "".join(
        json.dumps(dict({"config": config, "architecture": architecture or ""},
                        **({"lora": loras[i]} if loras else {})))
        + "\n" for i, (config, architecture) in enumerate(requests))
    done = subprocess.run([TOOL, "--batch", "--max_params=100000000"],
                          input=lines, capture_output=True, text=True,
                          check=True, timeout=120)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(requests), done.stderr
    return answers


def oracle(config, architecture):
    """The oracle's description as the tool's dict, or None where it
    refuses the config."""
    try:
        d = describe(config, architecture)
    except ValueError:
        return None
    return {"model_type": d.model_type, "architecture": d.architecture,
            "hidden_size": d.hidden_size, "names": d.names,
            "numels": d.numels,
            "keys_read": decoder_traits.keys_read(config, d),
            "config_keys": sorted(config),
            "operations": gathered_oracle.operations(d, config) or [],
            # The decoder layer of each operation (-1 outside one): what
            # gradient checkpointing re-runs.
            "operation_layers": [
                -1 if layer is None else layer
                for layer in gathered_oracle.layers(d, config)]}


def first_difference(want, got):
    """A short account of where the C++ answer departs from the oracle's."""
    if want is None and "error" in got:
        return None  # both refuse
    if want is None or "error" in got:
        return f"oracle {'refuses' if want is None else 'answers'}, " \
               f"C++ {got.get('error') or 'answers'}"
    for key in ("model_type", "architecture", "hidden_size"):
        if want[key] != got[key]:
            return f"{key}: oracle {want[key]!r}, C++ {got[key]!r}"
    pairs = list(zip(want["names"], want["numels"]))
    got_pairs = list(zip(got["names"], got["numels"]))
    for i, (w, g) in enumerate(zip(pairs, got_pairs)):
        if w != g:
            return f"parameter {i}: oracle {w}, C++ {g}"
    if len(pairs) != len(got_pairs):
        return f"oracle {len(pairs)} parameters, C++ {len(got_pairs)}"
    if want["operations"] != got["operations"]:
        for k, (w, g) in enumerate(zip(want["operations"],
                                       got["operations"])):
            if w != g:
                return (f"operation {k}: oracle {[want['names'][p] for p in w]}"
                        f", C++ {[got['names'][p] for p in g]}")
        return (f"oracle {len(want['operations'])} operations, C++ "
                f"{len(got['operations'])}")
    if want["operation_layers"] != got["operation_layers"]:
        return (f"operation layers: oracle {want['operation_layers']}, "
                f"C++ {got['operation_layers']}")
    if got["total"] != sum(got["numels"]):
        return f"C++ total {got['total']} is not the sum of its numels"
    # Every key accounted for: read as the oracle's family reads it, the
    # rest ignored (known harmless or not), each key in one list.
    if got["config_keys_read"] != want["keys_read"]:
        return f"keys read: oracle {want['keys_read']}, " \
               f"C++ {got['config_keys_read']}"
    ignored = sorted(got["config_keys_ignored"] + got["config_keys_harmless"])
    unread = [k for k in want["config_keys"] if k not in want["keys_read"]]
    if ignored != unread:
        return f"keys ignored: oracle {unread}, C++ {ignored}"
    return None


class DifferentialCase(unittest.TestCase):

    def compare(self, cases):
        """cases: (label, config, architecture). Every C++ answer equals
        the oracle's; both refuse the same configs."""
        answers = run_tool([(c, a) for _, c, a in cases])
        mismatches = []
        for (label, config, architecture), got in zip(cases, answers):
            problem = first_difference(oracle(config, architecture), got)
            if problem:
                mismatches.append(f"{label} ({architecture or 'default'}): "
                                  f"{problem}\n  config: {json.dumps(config)}")
        self.assertEqual(mismatches[:MAX_REPORTED], [],
                         f"{len(mismatches)} of {len(cases)} differ")
        return answers

    def test_published_configs_under_every_class(self):
        cases = []
        for name, path, architecture, _, _ in PUBLISHED:
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
            for arch in (None, *MODEL_TYPES[config["model_type"]]):
                cases.append((name, config, arch))
        answers = self.compare(cases)
        # None of them is refused: the comparison covered real answers.
        self.assertFalse([a for a in answers if "error" in a])

    def test_edge_configs(self):
        """Hand-made corners where the rules choose (README of the oracle):
        null against absent, sizes read only where a module needs them,
        optional head_dim, empty architectures; both sides answer, or both
        refuse, alike."""
        moe = {"model_type": "qwen2_moe", "hidden_size": 8,
               "num_attention_heads": 2, "num_key_value_heads": 1,
               "num_hidden_layers": 3,
               "intermediate_size": 6, "num_experts": 2, "vocab_size": 11}
        cases = [
            # Every layer dense: the expert sizes are never read.
            dict(moe, mlp_only_layers=[0, 1, 2], moe_intermediate_size=None),
            dict(moe, mlp_only_layers=[2, 1, 0, -1, 7]),
            # Every layer sparse: intermediate_size is never read.
            dict(moe, intermediate_size=None),
            dict(moe, decoder_sparse_step=5, moe_intermediate_size=None),
            dict(moe, decoder_sparse_step=2, moe_intermediate_size=None),
            dict(moe, num_experts=0, moe_intermediate_size="x"),
            dict(moe, num_experts=0, intermediate_size=None),
            dict(moe, mlp_only_layers=None, qkv_bias=False),
            {"model_type": "llama", "hidden_size": 10, "head_dim": 3,
             "num_attention_heads": 4, "num_key_value_heads": None,
             "num_hidden_layers": 1, "intermediate_size": 5,
             "vocab_size": 7, "architectures": []},
            {"model_type": "llama", "hidden_size": 10,
             "num_attention_heads": 4, "num_hidden_layers": 1},
            {"model_type": "mistral", "head_dim": None, "hidden_size": 12,
             "num_attention_heads": 4, "num_key_value_heads": 2,
             "num_hidden_layers": 1, "vocab_size": 5,
             "intermediate_size": 3},
            {"model_type": "gemma", "num_key_value_heads": None},
            {"model_type": "gemma2", "num_hidden_layers": 1,
             "tie_word_embeddings": None},
            {"model_type": "phi3", "num_key_value_heads": 3},
            {"model_type": "opt", "word_embed_proj_dim": None,
             "num_hidden_layers": 1, "do_layer_norm_before": False},
            {"model_type": "gpt2", "n_inner": None, "n_layer": 1,
             "architectures": None},
            {"model_type": "bert", "position_embedding_type": None},
            {"model_type": "gpt_neox", "num_hidden_layers": 1,
             "tie_word_embeddings": True, "attention_bias": False},
            # The issue-43 families: nulls, defaults and refusals.
            {"model_type": "qwen3", "head_dim": None},
            {"model_type": "qwen3", "num_hidden_layers": 1,
             "num_key_value_heads": None, "attention_bias": True},
            {"model_type": "qwen3_moe", "num_hidden_layers": 2,
             "num_experts": 2, "mlp_only_layers": [1],
             "moe_intermediate_size": None, "decoder_sparse_step": 3},
            {"model_type": "deepseek_v2", "num_hidden_layers": 2,
             "n_routed_experts": None, "moe_intermediate_size": None},
            {"model_type": "deepseek_v2", "num_hidden_layers": 3,
             "n_routed_experts": 2, "moe_layer_freq": 2,
             "first_k_dense_replace": 1, "q_lora_rank": None},
            {"model_type": "deepseek_v2", "ep_size": 2},
            {"model_type": "deepseek_v3", "num_hidden_layers": 2,
             "first_k_dense_replace": 5, "moe_intermediate_size": None},
            {"model_type": "deepseek_v3", "n_shared_experts": None},
            {"model_type": "llama4_text", "num_hidden_layers": 3,
             "moe_layers": [], "num_local_experts": None},
            {"model_type": "llama4_text", "num_hidden_layers": 3,
             "moe_layers": [2, -1, 0], "intermediate_size_mlp": 4,
             "head_dim": None},
            {"model_type": "gemma3_text", "head_dim": None},
            {"model_type": "cohere", "num_hidden_layers": 1,
             "use_qk_norm": True, "num_key_value_heads": 8},
            {"model_type": "falcon", "n_embed": 64},
            {"model_type": "falcon", "num_hidden_layers": 1,
             "new_decoder_architecture": True, "num_ln_in_parallel_attn": 1},
            {"model_type": "falcon", "num_hidden_layers": 1,
             "parallel_attn": False, "new_decoder_architecture": True},
            {"model_type": "falcon", "num_attention_heads": 7},
            {"model_type": "gptj", "n_layer": 1, "tie_word_embeddings": True},
            {"model_type": "bloom", "n_head": 3},
        ]
        answers = self.compare([(f"edge #{i}", c, None)
                                for i, c in enumerate(cases)])
        # Both outcomes are exercised.
        refused = sum("error" in a for a in answers)
        self.assertTrue(0 < refused < len(answers), refused)

    def test_hostile_values_of_every_key_of_the_new_families(self):
        """Every key a new family knows (its config class's defaults and
        every key the oracle reads from a random config of it), set to each
        of HOSTILE_VALUES in fresh random configs: the C++ refuses exactly
        what the oracle refuses, and answers the rest alike (the keys read
        included). A new seed each run, printed."""
        seed = int(os.environ.get("CHUNKPLAN_SEED",
                                  random.SystemRandom().randrange(2**32)))
        print(f"hostile keys: seed {seed} (CHUNKPLAN_SEED={seed} repeats "
              "it)", flush=True)
        rng = random.Random(seed)
        for family in NEW_FAMILIES:
            with self.subTest(family=family, seed=seed):
                base = random_config(family, rng)
                model_type = base["model_type"]
                keys = set(models.family_defaults(model_type))
                for arch in MODEL_TYPES[model_type]:
                    try:
                        keys |= set(describe(base, arch).keys_read)
                    except ValueError:
                        pass
                # Not the families' own: checked by test_edge_configs.
                keys -= {"model_type", "architectures"}
                cases = []
                for key in sorted(keys):
                    for value in HOSTILE_VALUES:
                        config = dict(random_config(family, rng))
                        config[key] = value
                        cases.append((f"{family} {key}={value!r}", config,
                                      None))
                answers = self.compare(cases)
                refused = sum("error" in a for a in answers)
                self.assertTrue(0 < refused < len(answers), refused)

    def test_random_configs_of_every_family(self):
        seed = int(os.environ.get("CHUNKPLAN_SEED",
                                  random.SystemRandom().randrange(2**32)))
        print(f"models_differential_test: seed {seed} "
              f"(CHUNKPLAN_SEED={seed} repeats it)", flush=True)
        rng = random.Random(seed)
        for family in FAMILIES:
            with self.subTest(family=family, seed=seed):
                cases = []
                for i in range(RANDOM_CONFIGS_PER_FAMILY):
                    config = random_config(family, rng)
                    for arch in (None, *MODEL_TYPES[config["model_type"]]):
                        cases.append((f"{family} #{i}", config, arch))
                answers = self.compare(cases)
                # Most random configs are valid: the test compared lists.
                described = [a for a in answers if "error" not in a]
                self.assertGreater(len(described), len(cases) // 2)

    def test_lora_adapters_of_every_family(self):
        """PEFT's adapters (models.lora.adapt) on random configs of every
        family, on random targets among its linear modules (a leaf name,
        which adapts it in every layer, or one module's full name): the
        names, numels, frozen flags and operations (the base's, then each
        adapted module's lora_A and lora_B: gathered_oracle.
        adapted_operations) equal. A new seed each run, printed."""
        seed = int(os.environ.get("CHUNKPLAN_SEED",
                                  random.SystemRandom().randrange(2**32)))
        print(f"lora: seed {seed} (CHUNKPLAN_SEED={seed} repeats it)",
              flush=True)
        rng = random.Random(seed)
        cases = []
        for family in FAMILIES:
            for _ in range(LORA_CONFIGS_PER_FAMILY):
                config = random_config(family, rng)
                try:
                    d = describe(config)
                except ValueError:
                    continue
                modules = [n.rsplit(".", 1)[0] for n, x in
                           zip(d.names, d.numels)
                           if isinstance(x, LinearWeight)]
                if not modules:
                    continue
                pool = sorted({m.rsplit(".", 1)[-1] for m in modules})
                targets = rng.sample(pool, rng.randint(1, min(3, len(pool))))
                if rng.random() < 0.3:
                    targets = [rng.choice(modules)]
                cases.append((family, config, d, rng.randint(1, 4), targets))
        answers = run_tool([(config, None) for _, config, _, _, _ in cases],
                           [{"rank": r, "targets": t}
                            for _, _, _, r, t in cases])
        mismatches = []
        for (family, config, d, rank, targets), got in zip(cases, answers):
            a = adapt(d, rank, targets)
            ops = gathered_oracle.adapted_operations(d, config, a)
            want = {"names": a.names, "numels": a.numels,
                    "frozen": [not t for t in a.trainable],
                    "operations": ops,
                    "operation_layers": [
                        -1 if layer is None else layer for layer in
                        gathered_oracle.layers_of(ops or [], a.names)]}
            if "error" in got:
                problem = f"C++ {got['error']}"
            else:
                problem = next((f"{key}: oracle {want[key]}, C++ {got[key]}"
                                for key in want if want[key] != got[key]),
                               None)
            if problem:
                mismatches.append(f"{family} r={rank} {targets}: "
                                  f"{problem}\n  config: {json.dumps(config)}")
        self.assertEqual(mismatches[:MAX_REPORTED], [],
                         f"{len(mismatches)} of {len(cases)} differ")
        # Every family was adapted, and with operations.
        self.assertEqual({c[0] for c in cases}, set(FAMILIES))
        self.assertTrue(all(a["operations"] for a in answers))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    TOOL = sys.argv.pop(1)
    unittest.main(verbosity=2)
