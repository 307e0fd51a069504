"""The command line of the Python package is the C++ binary: the
`chunkplan` console script ([project.scripts] in pyproject.toml) and
`python3 -m chunkplan` run it (chunkplan.binary) in place of Python, so
its flags, output, input and exit codes are the binary's; it is found by
$CHUNKPLAN_CLI, beside a build tree's package, or on PATH (never a console
script of this package, never itself in a loop); without one it says how
to get it. The package installed with pip (offline, into a venv that sees
Debian's packages) gets the console script. Needs the built binary
(CHUNKPLAN_CLI); skips, saying "chunkplan not built", without it."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tomllib

import pytest

import chunkplan
from chunkplan import binary
from oracle_cases import ROOT

TIMEOUT_S = 120
PACKAGE = pathlib.Path(chunkplan.__file__).resolve().parent


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get(binary.CLI_ENV, "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"chunkplan not built ({binary.CLI_ENV}={path!r})")
    return os.path.abspath(path)


def run(args, env, stdin=None, python=sys.executable):
    return subprocess.run([python, "-m", "chunkplan", *args], input=stdin,
                          capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_S)


@pytest.fixture
def lone_package(tmp_path):
    """A copy of the package with no build tree beside it: PYTHONPATH."""
    shutil.copytree(PACKAGE, tmp_path / "site" / "chunkplan")
    return str(tmp_path / "site")


def environment(pythonpath, path, cli=None):
    env = {k: v for k, v in os.environ.items() if k != binary.CLI_ENV}
    env.update(PYTHONPATH=pythonpath, PATH=os.pathsep.join(map(str, path)))
    if cli:
        env[binary.CLI_ENV] = cli
    return env


def test_the_binary_runs_with_its_flags_input_and_exit_codes(cli):
    env = dict(os.environ, **{binary.CLI_ENV: cli})
    version = run(["version"], env)
    assert version.returncode == 0, version.stderr
    assert version.stdout == subprocess.run(
        [cli, "version"], capture_output=True, text=True).stdout
    request = (ROOT / "examples" / "gpt2_colossalai.json").read_text()
    search = run(["search", "--local", "--request", "-"], env, stdin=request)
    assert search.returncode == 0, search.stderr
    assert json.loads(search.stdout)["configs"][0]["chunk_size"] == "527872"
    usage = run(["serch"], env)
    assert usage.returncode == 2
    assert usage.stderr.startswith("INVALID_ARGUMENT: unknown subcommand")


def test_found_on_path_past_console_scripts(cli, lone_package, tmp_path):
    scripts, bins = tmp_path / "scripts", tmp_path / "bins"
    scripts.mkdir()
    bins.mkdir()
    # What pip writes for [project.scripts]: found first, and passed over.
    (scripts / "chunkplan").write_text(
        "#!/usr/bin/python3\nimport sys\nfrom chunkplan.binary import main\n"
        "sys.exit(main())\n")
    (scripts / "chunkplan").chmod(0o755)
    (bins / "chunkplan").symlink_to(cli)
    env = environment(lone_package, [scripts, bins, "/usr/bin", "/bin"])
    result = run(["version"], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("chunkplan ")
    assert binary.find_cli.__module__ == "chunkplan.binary"


def test_without_the_binary_it_says_how_to_get_it(lone_package):
    result = run(["version"], environment(lone_package, ["/usr/bin", "/bin"]))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("NOT_FOUND: no chunkplan binary at ")
    for words in ("cmake --build build --target chunkplan", "docker run",
                  binary.CLI_ENV):
        assert words in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_wrapper_that_runs_the_script_again_stops(lone_package, tmp_path):
    (tmp_path / "chunkplan").write_text(
        f'#!/bin/sh\nexec {sys.executable} -m chunkplan "$@"\n')
    (tmp_path / "chunkplan").chmod(0o755)
    result = run(["version"],
                 environment(lone_package, [tmp_path, "/usr/bin", "/bin"]))
    assert result.returncode == 1
    assert result.stderr.startswith("FAILED_PRECONDITION: the chunkplan "
                                    "found is this Python console script")


def test_pyproject_declares_the_console_script():
    with open(ROOT / "client" / "python" / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["scripts"] == {"chunkplan": "chunkplan.binary:main"}
    module, _, name = project["scripts"]["chunkplan"].partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is binary.main


def test_pip_installs_the_console_script(cli, tmp_path):
    """pip install <build>/python into a venv (offline: no index, no
    build isolation, Debian's setuptools): bin/chunkplan is the console
    script, and it runs the binary on PATH."""
    build = PACKAGE.parent
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv",
                           "--system-site-packages", str(venv)],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    if made.returncode != 0 or not (venv / "bin" / "pip").exists():
        pytest.skip(f"no venv with pip here: {made.stderr.strip()}")
    installed = subprocess.run(
        [venv / "bin" / "pip", "install", "--no-deps", "--no-index",
         "--no-build-isolation", "--quiet", str(build)],
        capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    script = venv / "bin" / "chunkplan"
    assert b"chunkplan.binary" in script.read_bytes()
    bins = tmp_path / "bins"
    bins.mkdir()
    (bins / "chunkplan").symlink_to(cli)
    env = environment("", [venv / "bin", bins, "/usr/bin", "/bin"])
    del env["PYTHONPATH"]
    result = subprocess.run(["chunkplan", "gpus"], capture_output=True,
                            text=True, env=env, timeout=TIMEOUT_S,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("name ")
    missing = subprocess.run(
        ["chunkplan", "gpus"], capture_output=True, text=True,
        env=dict(env, PATH=os.pathsep.join([str(venv / "bin"), "/usr/bin",
                                            "/bin"])),
        timeout=TIMEOUT_S, cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr.startswith("NOT_FOUND: ")
