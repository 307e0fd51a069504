"""Client TLS options against a stand-in TLS server (Python's gRPC, answering
with the oracle), with a throw-away CA, server and client certificate made by
the openssl command line: the library's Client, and the chunkplan binary's
--tls* flags (CHUNKPLAN_CLI; skipped, saying "chunkplan not built", without
it)."""

import os
import shutil
import subprocess

import grpc
import pytest
from google.protobuf import json_format

import chunkplan
from chunkplan.v1 import chunk_search_pb2
from fake_server import FakeServer
from oracle_cases import (GPT2_CHUNK_SIZE, ROOT, chunk_search_oracle,
                          gpt2_example_numels)

TIMEOUT_S = 60
SERVER_NAME = "chunkplan.test"


def oracle_handler(request, context):
    answer = chunk_search_oracle.search(json_format.MessageToDict(
        request, preserving_proto_field_name=True))
    if "error" in answer:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, answer["error"])
    return json_format.ParseDict(answer,
                                 chunk_search_pb2.ChunkSearchResponse())


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   capture_output=True, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """PEM paths: ca.pem; server.pem/key (SAN DNS:chunkplan.test only);
    client.pem/key; all signed by the CA."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not found (needed to make test certificates)")
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=chunkplan test CA", cwd=d)
    for name, ext in (("server", f"subjectAltName=DNS:{SERVER_NAME}\n"
                       "extendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        (d / f"{name}.ext").write_text(ext)
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={name}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem",
                "-CAkey", "ca.key", "-set_serial", "1", "-days", "2",
                "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)
    return d


def read(path):
    return path.read_bytes()


@pytest.fixture(scope="module")
def tls_server(pki):
    credentials = grpc.ssl_server_credentials(
        [(read(pki / "server.key"), read(pki / "server.pem"))])
    with FakeServer(oracle_handler, credentials) as server:
        yield server


@pytest.fixture(scope="module")
def mtls_server(pki):
    credentials = grpc.ssl_server_credentials(
        [(read(pki / "server.key"), read(pki / "server.pem"))],
        root_certificates=read(pki / "ca.pem"), require_client_auth=True)
    with FakeServer(oracle_handler, credentials) as server:
        yield server


def search(client):
    """ColossalAI's GPT-2 case through `client`."""
    return client.search_chunk_configuration(
        gpt2_example_numels(), 1, 128, 0, timeout=TIMEOUT_S)


def expected_configs():
    return {1: {"chunk_size": GPT2_CHUNK_SIZE, "keep_gathered": False}}


@pytest.mark.parametrize("as_path", [False, True])
def test_server_verified_by_name(pki, tls_server, as_path):
    roots = pki / "ca.pem" if as_path else read(pki / "ca.pem")
    with chunkplan.Client(tls_server.target, root_certificates=roots,
                          tls_server_name=SERVER_NAME) as client:
        assert search(client)[0] == expected_configs()


def test_wrong_name_is_refused(pki, tls_server):
    # The certificate names chunkplan.test, not 127.0.0.1.
    with chunkplan.Client(tls_server.target,
                          root_certificates=pki / "ca.pem") as client:
        with pytest.raises(chunkplan.UnavailableError):
            search(client)


def test_untrusted_server_is_refused(pki, tls_server):
    # Trusting the client's certificate as a CA does not make the server's
    # chain valid.
    with chunkplan.Client(tls_server.target,
                          root_certificates=pki / "client.pem",
                          tls_server_name=SERVER_NAME) as client:
        with pytest.raises(chunkplan.UnavailableError):
            search(client)


def test_plaintext_to_tls_is_refused(tls_server):
    with chunkplan.Client(tls_server.target) as client:
        with pytest.raises(chunkplan.UnavailableError):
            search(client)


def test_mutual_tls(pki, mtls_server):
    with chunkplan.Client(mtls_server.target,
                          root_certificates=pki / "ca.pem",
                          tls_server_name=SERVER_NAME,
                          certificate_chain=pki / "client.pem",
                          private_key=pki / "client.key") as client:
        assert search(client)[0] == expected_configs()
    with chunkplan.Client(mtls_server.target,
                          root_certificates=pki / "ca.pem",
                          tls_server_name=SERVER_NAME) as client:
        with pytest.raises(chunkplan.UnavailableError):
            search(client)


def test_key_and_chain_go_together(pki):
    with pytest.raises(ValueError, match="together"):
        chunkplan.Client("127.0.0.1:1", certificate_chain=pki / "client.pem")


def test_ready_made_credentials(pki, tls_server):
    credentials = grpc.ssl_channel_credentials(read(pki / "ca.pem"))
    with chunkplan.Client(tls_server.target, credentials=credentials,
                          tls_server_name=SERVER_NAME) as client:
        assert search(client)[0] == expected_configs()


def run_cli(*args):
    cli = os.environ.get("CHUNKPLAN_CLI", "")
    if not os.access(cli, os.X_OK):
        pytest.skip(f"chunkplan not built (CHUNKPLAN_CLI={cli!r})")
    return subprocess.run(
        [cli, "search", "--request",
         str(ROOT / "examples" / "gpt2_colossalai.json"), "--deadline",
         "60s", *args], capture_output=True, text=True, timeout=TIMEOUT_S)


def test_command_line_tls_flags(pki, mtls_server):
    mutual = ("--server", mtls_server.target, "--tls-cert",
              str(pki / "client.pem"), "--tls-key", str(pki / "client.key"))
    result = run_cli(*mutual, "--tls-ca", str(pki / "ca.pem"),
                     "--tls-server-name", SERVER_NAME)
    assert result.returncode == 0, result.stderr
    assert '"chunk_size":"%d"' % GPT2_CHUNK_SIZE in result.stdout
    # The system's roots (--tls) do not hold the test CA; without the
    # name, the certificate (for chunkplan.test) does not match 127.0.0.1.
    for flags in (("--tls", "--tls-server-name", SERVER_NAME),
                  ("--tls-ca", str(pki / "ca.pem"))):
        result = run_cli(*mutual, *flags)
        assert result.returncode == 1, result.stderr
        assert result.stderr.splitlines()[-1].startswith("UNAVAILABLE: ")
    result = run_cli("--server", mtls_server.target, "--tls-server-name",
                     SERVER_NAME)
    assert result.returncode == 2
    assert result.stderr == ("INVALID_ARGUMENT: --tls_server_name needs TLS "
                             "(--tls or --tls_ca)\n")
