"""chunkplan-server as a child process, for tests that need the real binary.

    with ServerProcess("build/bin/chunkplan-server", "--threads=2") as server:
        channel = grpc.insecure_channel(server.target)

starts the server with --listen=127.0.0.1:0 (or the `listen` given, e.g.
"unix:/tmp/x.sock"), reads the address it chose from its ready line
("chunkplan-server listening on HOST:PORT", text or JSON log), keeps
draining its log on a thread (ServerProcess.log holds every line), and on
exit sends SIGTERM and waits, killing it if it does not stop in time.
Every wait is bounded, so a server that hangs fails the test instead of
hanging it.
"""

import re
import subprocess
import threading

READY = re.compile(r"chunkplan-server listening on (\S+?)(?:\"|\s|$)")
# Bound on start-up and on shutdown, in seconds.
PATIENCE_S = 60


class ServerProcess:
    """One chunkplan-server child; `target` is its address once started."""

    def __init__(self, binary, *flags, listen="127.0.0.1:0",
                 patience_s=PATIENCE_S):
        self.binary = binary
        self.flags = list(flags)
        self.listen = listen
        self.patience_s = patience_s
        self.target = None
        self.log = []
        self._process = None
        self._ready = threading.Event()
        self._reader = None

    def _drain(self):
        for line in self._process.stdout:
            self.log.append(line)
            if not self._ready.is_set():
                match = READY.search(line)
                if match and not match.group(1).endswith(":0"):
                    self.target = match.group(1)
                    self._ready.set()
        self._ready.set()  # exited: wake start() either way

    def start(self):
        """Starts the server and waits for its ready line. Raises
        RuntimeError with the log where it exits or stays silent."""
        self._process = subprocess.Popen(
            [self.binary, f"--listen={self.listen}", *self.flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._ready.wait(self.patience_s) or self.target is None:
            self.stop()
            raise RuntimeError(
                f"chunkplan-server did not report its address within "
                f"{self.patience_s} s:\n" + "".join(self.log))
        return self

    def stop(self):
        """SIGTERM, then SIGKILL after patience_s; returns the exit code."""
        if self._process is None:
            return None
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=self.patience_s)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._reader is not None:
            self._reader.join(timeout=self.patience_s)
        return self._process.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
