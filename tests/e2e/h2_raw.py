"""A minimal HTTP/2 client on a raw socket, for probes that no well-behaved
gRPC client sends: streams left half-open, answers never read (no
WINDOW_UPDATE is ever sent, so the server must hold what it cannot send),
HEADERS+DATA+RST_STREAM floods. Only what those probes need: literal HPACK
headers, no Huffman, no reading of the server's headers.

    conn = RawConnection(("127.0.0.1", port))
    sid = conn.open_stream("/chunkplan.v1.ChunkSearch/Search")
    conn.send_data(sid, grpc_frame(request_bytes), end_stream=True)
"""

import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, WINDOW_UPDATE, GOAWAY = 0, 1, 3, 4, 8, 7
END_STREAM, END_HEADERS = 0x1, 0x4
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
CANCEL = 0x8
INITIAL_WINDOW = 65535
MAX_FRAME = 16384


def frame(kind, flags, stream_id, payload=b""):
    return (struct.pack(">I", len(payload))[1:] +
            struct.pack(">BBI", kind, flags, stream_id) + payload)


def _hpack_int(value):
    """An HPACK integer with a 7-bit prefix (RFC 7541 5.1), H bit clear."""
    if value < 127:
        return bytes([value])
    out = bytearray([127])
    value -= 127
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def _literal(name, value):
    """A literal header field without indexing, new name (RFC 7541 6.2.2)."""
    name, value = name.encode(), value.encode()
    return (b"\x00" + _hpack_int(len(name)) + name + _hpack_int(len(value)) +
            value)


def grpc_frame(message, announced=None):
    """The gRPC length-prefixed message; `announced` overrides the length
    (a partial message announces more than it carries)."""
    length = len(message) if announced is None else announced
    return b"\x00" + struct.pack(">I", length) + message


class RawConnection:
    """One HTTP/2 connection; stream ids are allocated in order."""

    def __init__(self, address, timeout=30):
        self.sock = socket.create_connection(address, timeout=timeout)
        self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0))
        self.next_id = 1
        self.buffer = b""
        self.connection_window = INITIAL_WINDOW
        self.stream_windows = {}
        self.server_settings = None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def open_stream(self, path, end_stream=False):
        """HEADERS of a gRPC POST to `path`; returns the stream id."""
        sid = self.next_id
        self.next_id += 2
        block = b"".join(_literal(n, v) for n, v in (
            (":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", "chunkplan"), ("content-type", "application/grpc"),
            ("te", "trailers")))
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        self.sock.sendall(frame(HEADERS, flags, sid, block))
        self.stream_windows[sid] = INITIAL_WINDOW
        return sid

    def reset(self, sid):
        self.sock.sendall(frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL)))

    def send_data(self, sid, data, end_stream=False):
        """Sends `data` on `sid` within the server's flow-control windows,
        reading frames for WINDOW_UPDATEs as needed (the server's DATA is
        read and dropped, never acknowledged)."""
        while data:
            room = min(self.connection_window, self.stream_windows[sid],
                       MAX_FRAME, len(data))
            if room <= 0:
                self.read_frame()
                continue
            chunk, data = data[:room], data[room:]
            self.connection_window -= room
            self.stream_windows[sid] -= room
            last = end_stream and not data
            self.sock.sendall(frame(DATA, END_STREAM if last else 0, sid,
                                    chunk))

    def read_frame(self):
        """Reads one frame and applies WINDOW_UPDATE and SETTINGS; returns
        (kind, flags, stream id, payload)."""
        while len(self.buffer) < 9:
            self._fill()
        length = struct.unpack(">I", b"\x00" + self.buffer[:3])[0]
        while len(self.buffer) < 9 + length:
            self._fill()
        kind, flags, sid = struct.unpack(">BBI", self.buffer[3:9])
        sid &= 0x7FFFFFFF
        payload = self.buffer[9:9 + length]
        self.buffer = self.buffer[9 + length:]
        if kind == WINDOW_UPDATE:
            increment = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            if sid == 0:
                self.connection_window += increment
            elif sid in self.stream_windows:
                self.stream_windows[sid] += increment
        elif kind == SETTINGS and not flags & 0x1:
            settings = {}
            for i in range(0, len(payload), 6):
                key, value = struct.unpack(">HI", payload[i:i + 6])
                settings[key] = value
            if self.server_settings is None:
                self.server_settings = settings
            self.sock.sendall(frame(SETTINGS, 0x1, 0))
        return kind, flags, sid, payload

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk

    def first_settings(self):
        """The server's first SETTINGS, as {identifier: value}."""
        while self.server_settings is None:
            self.read_frame()
        return self.server_settings
