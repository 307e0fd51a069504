"""`python3 -m chunkplan search --hf-config ...` against the real server:
the JSON and the table carry the oracle's answer; failures print one
"CODE: message" line and exit 1 (2 for usage)."""

import json
import re
import socket
import subprocess
import sys

import pytest

from oracle_cases import GPT2_CHUNK_SIZE, HF_CONFIGS, oracle_tuple
import models as oracle_models  # noqa: E402  (tests/oracle/models)

TIMEOUT_S = 120
ERROR_LINE = re.compile(r"^[A-Z_]+: \S.*\n$")
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
LLAMA_7B = str(HF_CONFIGS / "llama-2-7b.json")


def run(*args):
    return subprocess.run([sys.executable, "-m", "chunkplan", *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def search_json(server, *args):
    result = run("search", "--server", server.target, "--json", *args)
    assert result.returncode == 0, result.stderr
    # Only the interval's line beside the JSON.
    assert re.fullmatch(r"search interval \d+ \([^\n]+\)\n", result.stderr), (
        result.stderr)
    assert result.stdout.count("\n") == 1
    return json.loads(result.stdout)


def answer_part(response):
    """The seed's tuple from the protobuf JSON of a response."""
    config_dict = {int(c["dp_degree"]): {
        "chunk_size": int(c["chunk_size"]),
        "keep_gathered": bool(c["keep_gathered"])}
        for c in response["configs"]}
    return (config_dict, int(response["total_param_size"]),
            int(response["min_chunk_waste"]))


def assert_fails(result, exit_code, prefix):
    assert result.returncode == exit_code, result.stderr
    assert result.stdout == ""
    assert ERROR_LINE.match(result.stderr), result.stderr
    assert result.stderr.startswith(prefix), result.stderr


def test_json_gpt2_published(server):
    response = search_json(server, "--hf-config", GPT2_TEST,
                           "--search-range-m", "1", "--search-interval",
                           "128", "--min-chunk-size-m", "0", "--dp", "4")
    assert set(response) == {"configs", "total_param_size",
                             "min_chunk_waste", "engine", "candidates",
                             "search_nanos"}
    # protobuf JSON: 64-bit integers as strings.
    assert isinstance(response["total_param_size"], str)
    config_dict, _, _ = answer_part(response)
    assert config_dict == {4: {"chunk_size": GPT2_CHUNK_SIZE,
                               "keep_gathered": False}}


def test_defaults_are_geminis(server):
    """Range 32, minimum 32, filter on, and GeminiPlugin's interval without
    hidden_dim: 1024, not the model's hidden size (4096), said on stderr."""
    result = run("search", "--server", server.target, "--json",
                 "--hf-config", LLAMA_7B, "--dp", "8")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(
        "search interval 1024 (GeminiPlugin's default: no hidden_dim"), (
        result.stderr)
    response = json.loads(result.stdout)
    numels = oracle_models.describe(LLAMA_7B).numels
    expected = oracle_tuple({"numels": numels, "dp_degrees": [8],
                             "search_range_m": 32, "search_interval": 1024,
                             "min_chunk_size_m": 32,
                             "filter_exlarge_params": True})
    assert answer_part(response) == expected
    assert list(answer_part(response)[0]) == list(expected[0])
    assert int(response["candidates"]) == 32 * 2**20 // 1024 + 1


def test_hidden_dim_is_the_interval(server):
    """--hidden-dim H: GeminiPlugin's hidden_dim, the interval, said in the
    table."""
    result = run("search", "--server", server.target, "--hf-config",
                 GPT2_TEST, "--hidden-dim", "128", "--search-range-m", "1",
                 "--min-chunk-size-m", "0")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "search interval 128 (--hidden-dim: GeminiPlugin's hidden_dim)\n"), (
        result.stdout)
    # ColossalAI's published chunk size for its GPT-2 test at interval 128.
    assert re.search(r"(?m)^\s*1\s+527872\s+0\.50\s+no$", result.stdout)
    both = run("search", "--server", server.target, "--hf-config", GPT2_TEST,
               "--hidden-dim", "128", "--search-interval", "128")
    assert both.returncode == 2, both.stderr


def test_flags_reach_the_request(server):
    args = ["--hf-config", str(HF_CONFIGS / "opt-30b.json"),
            "--architecture", "OPTModel", "--search-range-m", "0.5",
            "--search-interval", "1000", "--min-chunk-size-m", "1",
            "--no-filter", "--engine", "cpu_sweep"]
    response = search_json(server, *args)
    assert response["engine"] == "ENGINE_CPU_SWEEP"
    expected = oracle_tuple({
        "numels": oracle_models.describe(HF_CONFIGS / "opt-30b.json",
                                         "OPTModel").numels,
        "search_range_m": 0.5, "search_interval": 1000,
        "min_chunk_size_m": 1, "filter_exlarge_params": False})
    assert answer_part(response) == expected


def test_table(server):
    result = run("search", "--hf-config", GPT2_TEST, "--server",
                 server.target, "--search-range-m", "1",
                 "--search-interval", "128", "--min-chunk-size-m", "0")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert re.search(r"(?m)^model\s+gpt2 \(GPT2LMHeadModel\), 28 parameters, "
                     r"hidden size 128$", out), out
    # 527872 / 2**20 = 0.5034 MiB
    assert re.search(r"(?m)^\s*1\s+527872\s+0\.50\s+no$", out), out
    total = sum(oracle_models.describe(GPT2_TEST).numels)
    assert re.search(r"(?m)^total params\s+%d$" % total, out), out
    assert re.search(r"(?m)^engine\s+[A-Z_]+$", out), out
    assert re.search(r"(?m)^time\s+\d+\.\d+ (µs|ms)$", out), out


def test_server_error_is_one_line(server):
    result = run("search", "--hf-config", GPT2_TEST, "--server",
                 server.target, "--dp", "0")
    assert_fails(result, 1, "INVALID_ARGUMENT: dp_degrees")


def test_model_errors_are_the_servers(server):
    """The server describes the model: an architecture of another family is
    its INVALID_ARGUMENT, naming the class."""
    result = run("search", "--hf-config", GPT2_TEST, "--architecture",
                 "BertModel", "--server", server.target)
    assert_fails(result, 1, "INVALID_ARGUMENT: ")
    assert "BertModel" in result.stderr, result.stderr


def test_nothing_listening():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        target = "127.0.0.1:%d" % sock.getsockname()[1]
        result = run("search", "--hf-config", GPT2_TEST, "--server", target,
                     "--timeout", "60")
    assert_fails(result, 1, "UNAVAILABLE: ")


@pytest.mark.parametrize("args, exit_code, prefix", [
    (["search", "--hf-config", "/nonexistent/config.json"], 1,
     "NOT_FOUND: "),
    (["search"], 2, "INVALID_ARGUMENT: "),
    ([], 2, "INVALID_ARGUMENT: "),
    (["serch", "--hf-config", GPT2_TEST], 2, "INVALID_ARGUMENT: "),
    (["search", "--hf-config", GPT2_TEST, "--dp", "two"], 2,
     "INVALID_ARGUMENT: "),
    (["search", "--hf-config", GPT2_TEST, "--engine", "gpu"], 2,
     "INVALID_ARGUMENT: "),
    (["search", "--hf-config", GPT2_TEST, "--tls-cert", "c.pem"], 2,
     "INVALID_ARGUMENT: --tls-cert and --tls-key"),
])
def test_failures_before_any_call(args, exit_code, prefix):
    assert_fails(run(*args), exit_code, prefix)
