#!/usr/bin/python3
"""End-to-end tests of TLS: chunkplan-server's --tls_cert, --tls_key and
--tls_client_ca, and the CLI's --tls_ca, --tls_cert and --tls_key.

Certificates are made at test time with openssl: a CA, a server certificate
for 127.0.0.1 and localhost, a client certificate the CA signed, and a
second CA with a client certificate of its own. The searched answer is
ColossalAI's published GPT-2 figure (chunk size 527872).

Environment: CHUNKPLAN_SERVER and CHUNKPLAN_CLI (required), as in
server_test.py; CHUNKPLAN_OPENSSL (default: openssl on PATH).

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/tls_test.py -v
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import (GPT2_CHUNK_SIZE, GPT2_EXAMPLE, PATIENCE_S,  # noqa: E402
                         Server, run_cli, run_server_to_exit)

_certs = None


def openssl(*args):
    binary = os.environ.get("CHUNKPLAN_OPENSSL") or shutil.which("openssl")
    if not binary:
        raise unittest.SkipTest("openssl not found (CHUNKPLAN_OPENSSL)")
    subprocess.run([binary, *args], check=True, capture_output=True,
                   text=True, timeout=PATIENCE_S)


def certs():
    """Paths of freshly made PEM files, made once per run: ca, ca_key,
    server, server_key, client, client_key (signed by ca), other_ca,
    other_client, other_client_key (signed by other_ca)."""
    global _certs
    if _certs is not None:
        return _certs
    d = tempfile.mkdtemp(prefix="chunkplan_tls_test_")
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    p = {name: os.path.join(d, name + ".pem") for name in (
        "ca", "ca_key", "server", "server_key", "client", "client_key",
        "other_ca", "other_ca_key", "other_client", "other_client_key")}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]

    def make_ca(name, cn):
        openssl("req", "-x509", *ec, "-keyout", p[name + "_key"],
                "-out", p[name], "-days", "2", "-subj", f"/CN={cn}",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def make_leaf(name, ca, cn, extensions):
        csr = os.path.join(d, name + ".csr")
        ext = os.path.join(d, name + ".ext")
        with open(ext, "w") as f:
            f.write(extensions)
        openssl("req", *ec, "-keyout", p[name + "_key"], "-out", csr,
                "-subj", f"/CN={cn}")
        openssl("x509", "-req", "-in", csr, "-CA", p[ca],
                "-CAkey", p[ca + "_key"], "-CAcreateserial",
                "-out", p[name], "-days", "2", "-extfile", ext)

    make_ca("ca", "chunkplan test CA")
    make_ca("other_ca", "another CA")
    make_leaf("server", "ca", "localhost",
              "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
              "extendedKeyUsage=serverAuth\n")
    make_leaf("client", "ca", "trainer",
              "extendedKeyUsage=clientAuth\n")
    make_leaf("other_client", "other_ca", "intruder",
              "extendedKeyUsage=clientAuth\n")
    _certs = p
    return p


def search(server, *tls_flags):
    return run_cli("search", "--request", GPT2_EXAMPLE, "--server",
                   server.address, "--deadline", "30s", *tls_flags)


class TlsCase(unittest.TestCase):
    """Helpers shared by the TLS test classes."""

    def assert_answers(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f'"chunk_size":"{GPT2_CHUNK_SIZE}"', result.stdout)

    def assert_refused(self, result):
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        # gRPC's own log lines may come first.
        self.assertTrue(any(line.startswith("UNAVAILABLE:")
                            for line in result.stderr.splitlines()),
                        result.stderr)
        self.assertNotIn("chunk_size", result.stdout)


class TlsTest(TlsCase):
    """Server TLS without client certificates."""

    @classmethod
    def setUpClass(cls):
        c = certs()
        cls.server = Server(f"--tls_cert={c['server']}",
                            f"--tls_key={c['server_key']}")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_ready_line_says_tls(self):
        self.assertIn(" (TLS)", self.server.log())

    def test_search_over_tls(self):
        self.assert_answers(search(self.server, "--tls_ca", certs()["ca"]))

    def test_health_over_tls(self):
        result = run_cli("health", "--server", self.server.address,
                         "--tls_ca", certs()["ca"], "--deadline", "30s")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "SERVING")

    def test_plaintext_client_is_refused_and_serving_goes_on(self):
        self.assert_refused(search(self.server))
        self.assert_answers(search(self.server, "--tls_ca", certs()["ca"]))

    def test_server_signed_by_another_ca_is_refused(self):
        self.assert_refused(search(self.server, "--tls_ca",
                                   certs()["other_ca"]))


class MutualTlsTest(TlsCase):
    """--tls_client_ca: every client must present a certificate the CA
    signed."""

    @classmethod
    def setUpClass(cls):
        c = certs()
        cls.server = Server(f"--tls_cert={c['server']}",
                            f"--tls_key={c['server_key']}",
                            f"--tls_client_ca={c['ca']}")
        cls.good = ["--tls_ca", c["ca"], "--tls_cert", c["client"],
                    "--tls_key", c["client_key"]]

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_ready_line_says_mutual_tls(self):
        self.assertIn(" (mutual TLS)", self.server.log())

    def test_client_with_a_certificate_of_the_ca(self):
        self.assert_answers(search(self.server, *self.good))

    def test_refusals_leave_the_server_serving(self):
        c = certs()
        with self.subTest("plaintext"):
            self.assert_refused(search(self.server))
        with self.subTest("no client certificate"):
            self.assert_refused(search(self.server, "--tls_ca", c["ca"]))
        with self.subTest("client certificate of another CA"):
            self.assert_refused(search(
                self.server, "--tls_ca", c["ca"],
                "--tls_cert", c["other_client"],
                "--tls_key", c["other_client_key"]))
        self.assertIsNone(self.server.process.poll())
        self.assert_answers(search(self.server, *self.good))
        # Only the good calls reached the service.
        self.assertNotIn("code=UNAVAILABLE", self.server.log())


class TlsFlagsTest(unittest.TestCase):
    """Incomplete or unreadable TLS settings are usage errors (exit 2)."""

    def test_server_refuses_incomplete_tls_flags(self):
        c = certs()
        for flags, words in (
                ([f"--tls_cert={c['server']}"], "--tls_key"),
                ([f"--tls_key={c['server_key']}"], "--tls_cert"),
                ([f"--tls_client_ca={c['ca']}"], "--tls_client_ca"),
                ([f"--tls_cert={c['server']}", "--tls_key=/nonexistent.pem"],
                 "/nonexistent.pem"),
                ([f"--tls_cert={c['server']}", f"--tls_key={GPT2_EXAMPLE}"],
                 "no PEM block")):
            with self.subTest(flags=flags):
                result = run_server_to_exit(*flags)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(words, result.stderr)
                self.assertNotIn("listening on", result.stderr)

    def test_cli_refuses_incomplete_tls_flags(self):
        c = certs()
        for args, words in (
                (["--server", "127.0.0.1:1", "--tls_cert", c["client"]],
                 "--tls_key"),
                (["--server", "127.0.0.1:1", "--tls_ca", "/nonexistent.pem"],
                 "/nonexistent.pem"),
                (["--local", "--tls_ca", c["ca"]], "--server only")):
            with self.subTest(args=args):
                result = run_cli("search", "--request", GPT2_EXAMPLE, *args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(words, result.stderr)


if __name__ == "__main__":
    unittest.main()
