"""A newcomer's path, as printed: the README's console examples run against
the built binaries, scripts/run.sh builds and names both command lines, and
the command line's words (--help, table labels).

  ReadmeExamplesTest  every `$ ` command of the README's ```console blocks
                      that runs chunkplan (the C++ command line, or
                      `python3 -m chunkplan`, which runs it), run by bash
                      from a directory
                      whose build/ and examples/ are the real ones, against
                      a real chunkplan-server where the example names
                      127.0.0.1:50051; its printed output must be what it
                      prints (times and search_nanos aside)
  RunScriptTest       scripts/run.sh with a recording cmake and a stand-in
                      server: it builds chunkplan_python too and prints the
                      Python library's lines, which then run against the
                      real build
  HelpAndWordsTest    chunkplan --help lists every command and flag; the
                      tables say "ColossalAI's search", not "seed"; the
                      frontier's value column carries its unit; README and
                      docs say "seed" only in identifiers; README and
                      docs/performance.md at most 200 lines

Environment: CHUNKPLAN_CLI, CHUNKPLAN_SERVER (the built binaries),
CHUNKPLAN_BUILD_DIR (the build tree: bin/ and python/).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from server_process import ServerProcess  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CHUNKPLAN_CLI", "")
SERVER = os.environ.get("CHUNKPLAN_SERVER", "")
BUILD = os.environ.get("CHUNKPLAN_BUILD_DIR", "")
TIMEOUT_S = 120
README_ADDRESS = "127.0.0.1:50051"
# A line of output that changes from run to run.
_VARYING = re.compile(r"^(plan )?time\s")
# "seed" as a word, not in an identifier (seed_waste, SEED_WASTE,
# CHUNKPLAN_TEST_SEED, --seed, FRONTIER_(SEED|PEAK)) nor a random seed.
_SEED_WORD = re.compile(r"(?<![\w(|-])seed(?![_|])(?!\w)", re.IGNORECASE)
_RANDOM_SEED = re.compile(r"(random|test|fresh|a|its|the run's) seed|seed \d",
                          re.IGNORECASE)


def console_examples(text):
    """[(command, printed output lines)] of every ```console block: a
    command is a `$ ` line and its `\\` continuations; its output, the lines
    up to the next command or the block's end."""
    examples = []
    for block in re.findall(r"```console\n(.*?)```", text, re.DOTALL):
        command, output = None, []
        lines = iter(block.splitlines())
        for line in lines:
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, output))
                command, output = line[2:], []
                while command.endswith("\\"):
                    command += "\n" + next(lines)
            elif command is not None:
                output.append(line)
        if command is not None:
            examples.append((command, output))
    return examples


def runs_chunkplan(command):
    return "build/bin/chunkplan " in command or "-m chunkplan " in command


def comparable(lines):
    """Output lines as the README and a run can agree on them: no time
    lines, JSON without search_nanos, trailing blanks dropped."""
    out = []
    for line in lines:
        if _VARYING.match(line):
            continue
        if line.startswith('{"'):
            value = json.loads(line)
            value.pop("search_nanos", None)
            line = json.dumps(value, sort_keys=True)
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def needs_build(test):
    for name, value in (("CHUNKPLAN_CLI", CLI), ("CHUNKPLAN_SERVER", SERVER)):
        if not os.access(value, os.X_OK):
            test.skipTest(f"chunkplan not built ({name}={value!r})")
    if not (pathlib.Path(BUILD) / "python" / "chunkplan").is_dir():
        test.skipTest(f"the Python client is not built in {BUILD!r}")


class ReadmeExamplesTest(unittest.TestCase):
    def setUp(self):
        needs_build(self)
        self.dir = tempfile.mkdtemp()
        os.symlink(BUILD, os.path.join(self.dir, "build"))
        os.symlink(ROOT / "examples", os.path.join(self.dir, "examples"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_example(self, command, address):
        return subprocess.run(
            ["bash", "-c", "set -o pipefail; " +
             command.replace(README_ADDRESS, address)],
            cwd=self.dir, capture_output=True, text=True, timeout=TIMEOUT_S)

    def test_every_chunkplan_example_runs_as_printed(self):
        examples = [e for e in console_examples(
            (ROOT / "README.md").read_text()) if runs_chunkplan(e[0])]
        firsts = [next(c for c, _ in examples if "build/bin/chunkplan" in c),
                  next(c for c, _ in examples if "--hf-config" in c)]
        self.assertTrue(all(firsts))
        with ServerProcess(SERVER, "--threads=2") as server:
            for command, printed in examples:
                with self.subTest(command=command):
                    result = self.run_example(command, server.target)
                    failure = bool(printed) and re.match(
                        r"^[A-Z_]+: ", printed[0]) is not None
                    self.assertEqual(result.returncode != 0, failure,
                                     result.stderr)
                    got = result.stderr if failure else result.stdout
                    self.assertEqual(comparable(got.splitlines()),
                                     comparable(printed))


class RunScriptTest(unittest.TestCase):
    """scripts/run.sh with cmake and chunkplan-server stood in for: what it
    builds and what it prints."""

    def setUp(self):
        needs_build(self)
        self.dir = pathlib.Path(tempfile.mkdtemp())
        tools = self.dir / "tools"
        tools.mkdir()
        (tools / "cmake").write_text(
            f'#!/bin/sh\necho "$@" >> {self.dir}/cmake.log\n')
        fake_build = self.dir / "fake-build"
        (fake_build / "bin").mkdir(parents=True)
        (fake_build / "bin" / "chunkplan-server").write_text(
            '#!/bin/sh\necho "server $@"\n')
        for path in (tools / "cmake", fake_build / "bin" / "chunkplan-server"):
            path.chmod(0o755)
        env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}",
                   BUILD_DIR=str(fake_build), CHUNKPLAN_SKIP_DEPS="1")
        self.result = subprocess.run(
            [str(ROOT / "scripts" / "run.sh")], env=env, capture_output=True,
            text=True, timeout=TIMEOUT_S)
        self.fake_build = str(fake_build)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_builds_the_python_client(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr)
        log = (self.dir / "cmake.log").read_text()
        build_line = next(line for line in log.splitlines()
                          if line.startswith("--build"))
        targets = build_line.split("--target", 1)[1].split()
        self.assertEqual(set(targets), {"chunkplan-server", "chunkplan",
                                        "chunkplan_python"})
        self.assertIn("server --listen=127.0.0.1:50051", self.result.stdout)

    def test_printed_python_lines_run(self):
        lines = [line.strip() for line in self.result.stdout.splitlines()
                 if "import chunkplan" in line]
        self.assertEqual(len(lines), 2, self.result.stdout)
        self.assertTrue(all(line.startswith(
            f"PYTHONPATH={self.fake_build}/python /usr/bin/python3 -c "
            "'import chunkplan; ") for line in lines), lines)
        self.assertNotIn("-m chunkplan", self.result.stdout)
        with ServerProcess(SERVER, "--threads=1") as server:
            for line in lines:
                command = line.replace(self.fake_build, BUILD).replace(
                    README_ADDRESS, server.target)
                result = subprocess.run(["bash", "-c", command], cwd=ROOT,
                                        capture_output=True, text=True,
                                        timeout=TIMEOUT_S)
                self.assertEqual(result.returncode, 0, (line, result.stderr))
                self.assertEqual(result.stdout, "({1: {'chunk_size': 527872, "
                                 "'keep_gathered': False}}, 6960896, 0)\n")


class HelpAndWordsTest(unittest.TestCase):
    def setUp(self):
        needs_build(self)

    def cli(self, *args, stdin=None):
        return subprocess.run([CLI, *args], input=stdin, capture_output=True,
                              text=True, timeout=TIMEOUT_S)

    def test_help_lists_commands_and_flags(self):
        result = self.cli("--help")
        text = result.stdout + result.stderr
        self.assertNotIn("No flags matched", text)
        for command in ("search", "layout", "frontier", "health", "gpus",
                        "version"):
            self.assertIn(f"chunkplan {command}", text)
        for flag in ("request", "local", "server", "engine", "format",
                     "deadline", "service", "tls_ca", "tls_cert", "tls_key"):
            self.assertRegex(text, rf"(?m)^\s+--{flag} \(")

    def layout_request(self, objective=None):
        request = json.loads((ROOT / "examples" / "gpt2_colossalai.json")
                             .read_text())
        body = {"search": request}
        if objective:
            body["objective"] = objective
        return json.dumps(body)

    def test_tables_say_colossalais_search(self):
        search = self.cli("search", "--local", "--request",
                          str(ROOT / "examples" / "gpt2_colossalai.json"),
                          "--format", "table").stdout
        layout = self.cli("layout", "--local", "--request", "-", "--format",
                          "table", stdin=self.layout_request()).stdout
        frontier = self.cli("frontier", "--local", "--request", "-",
                            "--format", "table",
                            stdin=self.layout_request()).stdout
        usage = self.cli("--help").stdout
        for text in (search, layout, frontier, usage):
            self.assertTrue(text)
            self.assertIsNone(_SEED_WORD.search(text), text)
        self.assertIn("search's waste 0 elements (ColossalAI's search's "
                      "figure", layout)

    def test_frontier_value_has_its_unit(self):
        for objective, unit in ((None, "elements"),
                                ("OBJECTIVE_LAYOUT_PADDING", "elements"),
                                ("OBJECTIVE_PEAK_RANK_BYTES", "bytes")):
            result = self.cli("frontier", "--local", "--request", "-",
                              "--format", "table",
                              stdin=self.layout_request(objective))
            self.assertEqual(result.returncode, 0, result.stderr)
            # The first line states the parameter total; then a blank one.
            header = result.stdout.splitlines()[2]
            self.assertIn(f"value ({unit})", header)
            self.assertNotRegex(header, r"\bvalue  ")

    def test_docs_say_seed_only_in_identifiers(self):
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
            for number, line in enumerate(path.read_text().splitlines(), 1):
                words = _SEED_WORD.findall(_RANDOM_SEED.sub("", line))
                self.assertEqual(words, [], f"{path.name}:{number}: {line}")

    def test_a_newcomer_reads_the_readme_and_performance_to_the_end(self):
        # The house issue's bound: what a newcomer reads first stays short;
        # the details live in docs/.
        for path in (ROOT / "README.md", ROOT / "docs" / "performance.md"):
            count = len(path.read_text().splitlines())
            self.assertLessEqual(count, 200, f"{path.name}: {count} lines")


if __name__ == "__main__":
    unittest.main()
