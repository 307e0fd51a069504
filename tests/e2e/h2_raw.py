"""A minimal HTTP/2 client on a raw socket, for probes that no well-behaved
gRPC client sends: streams left half-open, answers never read (no
WINDOW_UPDATE is ever sent, so the server must hold what it cannot send),
HEADERS+DATA+RST_STREAM floods, rapid reset (HEADERS+RST_STREAM,
CVE-2023-44487), PING floods, requests with any headers (grpc-encoding).
Only what those probes need: literal HPACK headers sent, no Huffman; the
server's header blocks decoded only where a probe asks for a stream's
status (status()), without Huffman (gRPC 1.51 sends none).

    conn = RawConnection(("127.0.0.1", port))
    sid = conn.open_stream("/chunkplan.v1.ChunkSearch/Search")
    conn.send_data(sid, grpc_frame(request_bytes), end_stream=True)
    code, message = conn.status(sid)
"""

import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = (
    0, 1, 3, 4, 6, 7, 8)
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


def ping_frame(opaque=b"\0" * 8):
    """A PING (not an acknowledgement) carrying the 8 bytes `opaque`."""
    return frame(PING, 0, 0, opaque)


def _request_headers(path, extra=()):
    """The header block of a gRPC POST to `path`, then `extra` (name, value)
    pairs, all literal."""
    return b"".join(_literal(n, v) for n, v in (
        (":method", "POST"), (":scheme", "http"), (":path", path),
        (":authority", "chunkplan"), ("content-type", "application/grpc"),
        ("te", "trailers")) + tuple(extra))


# RFC 7541, Appendix A: the static table, from index 1.
_STATIC_TABLE = [tuple(e.split(" ", 1)) if " " in e else (e, "") for e in (
    ":authority", ":method GET", ":method POST", ":path /",
    ":path /index.html", ":scheme http", ":scheme https", ":status 200",
    ":status 204", ":status 206", ":status 304", ":status 400",
    ":status 404", ":status 500", "accept-charset", "accept-encoding",
    "accept-language", "accept-ranges", "accept", "access-control-allow-origin",
    "age", "allow", "authorization", "cache-control", "content-disposition",
    "content-encoding", "content-language", "content-length",
    "content-location", "content-range", "content-type", "cookie", "date",
    "etag", "expect", "expires", "from", "host", "if-match",
    "if-modified-since", "if-none-match", "if-range", "if-unmodified-since",
    "last-modified", "link", "location", "max-forwards",
    "proxy-authenticate", "proxy-authorization", "range", "referer",
    "refresh", "retry-after", "server", "set-cookie",
    "strict-transport-security", "transfer-encoding", "user-agent", "vary",
    "via", "www-authenticate")]
_STATIC_TABLE[15] = ("accept-encoding", "gzip, deflate")


def _hpack_int_at(data, pos, prefix_bits):
    """(value, next position) of the HPACK integer at data[pos]."""
    limit = (1 << prefix_bits) - 1
    value = data[pos] & limit
    pos += 1
    if value < limit:
        return value, pos
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value += (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _hpack_string_at(data, pos):
    if data[pos] & 0x80:
        raise ValueError("Huffman-coded HPACK string: not decoded here")
    length, pos = _hpack_int_at(data, pos, 7)
    return data[pos:pos + length].decode("latin-1"), pos + length


class HeaderDecoder:
    """HPACK decoding (RFC 7541) of one connection's header blocks, in
    order, without Huffman strings (ValueError)."""

    def __init__(self, table_size=4096):
        self.dynamic = []  # newest first
        self.table_size = table_size

    def _entry(self, index):
        if index <= len(_STATIC_TABLE):
            return _STATIC_TABLE[index - 1]
        return self.dynamic[index - len(_STATIC_TABLE) - 1]

    def _add(self, name, value):
        self.dynamic.insert(0, (name, value))
        while sum(len(n) + len(v) + 32 for n, v in self.dynamic) > \
                self.table_size:
            self.dynamic.pop()

    def decode(self, block):
        """The (name, value) pairs of `block`."""
        headers, pos = [], 0
        while pos < len(block):
            byte = block[pos]
            if byte & 0x80:  # indexed
                index, pos = _hpack_int_at(block, pos, 7)
                headers.append(self._entry(index))
                continue
            if byte & 0xE0 == 0x20:  # dynamic table size update
                self.table_size, pos = _hpack_int_at(block, pos, 5)
                continue
            indexing = byte & 0xC0 == 0x40
            index, pos = _hpack_int_at(block, pos, 6 if indexing else 4)
            if index:
                name = self._entry(index)[0]
            else:
                name, pos = _hpack_string_at(block, pos)
            value, pos = _hpack_string_at(block, pos)
            if indexing:
                self._add(name, value)
            headers.append((name, value))
        return headers


def grpc_frame(message, announced=None):
    """The gRPC length-prefixed message; `announced` overrides the length
    (a partial message announces more than it carries)."""
    length = len(message) if announced is None else announced
    return b"\x00" + struct.pack(">I", length) + message


def _header_block(flags, payload):
    """A HEADERS frame's header block: its padding and priority removed."""
    start, end = 0, len(payload)
    if flags & 0x8:  # PADDED
        start, end = 1, len(payload) - payload[0]
    if flags & 0x20:  # PRIORITY
        start += 5
    return payload[start:end]


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
        self.closed_streams = set()  # ended by the server (reset or END_STREAM)
        self.header_blocks = []  # (stream id, block) as received
        self.decoded = []  # (stream id, [(name, value)]) of those decoded
        self.decoder = HeaderDecoder()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def open_stream(self, path, end_stream=False, headers=()):
        """HEADERS of a gRPC POST to `path`, with the (name, value) pairs of
        `headers` after gRPC's own; returns the stream id."""
        sid = self.next_id
        self.next_id += 2
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        self.sock.sendall(frame(HEADERS, flags, sid,
                                _request_headers(path, headers)))
        self.stream_windows[sid] = INITIAL_WINDOW
        return sid

    def reset(self, sid):
        self.sock.sendall(frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL)))

    def rapid_reset(self, path, count):
        """Opens `count` streams to `path`, each reset (CANCEL) at once
        after its HEADERS, in one write: the rapid reset pattern of
        CVE-2023-44487. Returns the last stream id."""
        block = _request_headers(path)
        burst = []
        for _ in range(count):
            sid = self.next_id
            self.next_id += 2
            burst.append(frame(HEADERS, END_HEADERS, sid, block))
            burst.append(frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL)))
        self.sock.sendall(b"".join(burst))
        return self.next_id - 2

    def ping_burst(self, count):
        """Sends `count` PINGs in one write."""
        self.sock.sendall(ping_frame() * count)

    def send_data(self, sid, data, end_stream=False):
        """Sends `data` on `sid` within the server's flow-control windows,
        reading frames for WINDOW_UPDATEs as needed (the server's DATA is
        read and dropped, never acknowledged). Stops early, the rest unsent,
        once the server has ended the stream; returns the bytes sent."""
        sent = 0
        while data and sid not in self.closed_streams:
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
            sent += room
        return sent

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
        elif kind == HEADERS:
            if not flags & END_HEADERS:
                raise ValueError("CONTINUATION frames: not read here")
            self.header_blocks.append((sid, _header_block(flags, payload)))
            if flags & END_STREAM:
                self.closed_streams.add(sid)
        elif kind == RST_STREAM:
            self.closed_streams.add(sid)
        return kind, flags, sid, payload

    def status(self, sid):
        """(grpc-status as an int, grpc-message) that the server ended
        stream `sid` with, reading frames until it has; (None, "") for a
        stream reset without one. Raises ConnectionError if the server
        closes the connection first, socket.timeout after the socket's
        timeout."""
        while sid not in self.closed_streams:
            self.read_frame()
        while len(self.decoded) < len(self.header_blocks):
            block_sid, block = self.header_blocks[len(self.decoded)]
            self.decoded.append((block_sid, self.decoder.decode(block)))
        fields = dict(pair for block_sid, headers in self.decoded
                      if block_sid == sid for pair in headers)
        code = fields.get("grpc-status")
        return (None if code is None else int(code),
                fields.get("grpc-message", ""))

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
