"""The records of an archive's journal (``<archive>.h5.journal``) that its .h5 snapshot does not
hold yet: what a running sweep, or one killed before its last snapshot, has computed since.

The journal is the archive's write-ahead log, written by ``slr-sweep run``/``resume``; the .h5
is rebuilt from it every 30 s and at the end of a run (include/slr/archive/journal.hpp gives the
format, docs/developer.md "Archive schemas" the schemas). Each record is a frame ``"SLR2" | type
u32 | length u32 | CRC-32C(payload) u32 | CRC-32C(first 16 bytes) u32 | payload`` (little
endian). A point record (type 7) holds the point's identity, its parameters as (name, kind,
value) and the results it produced as (name, value). A frame cut short at the end (a write in
progress, or torn by a crash) or failing its checksum is skipped: only intact records are read,
as ``slr-sweep recover`` would keep them.

The snapshot records how long the journal was when it was built (root attribute
``journal_bytes``); the records from there on are the newer ones. Reading never locks or
changes the journal, so it is safe beside a running sweep.
"""
import os
import struct

_MAGIC = b"SLR2"
_HEADER = 20
_RUN_BEGIN, _RUN_END, _POINT = 3, 4, 7
_MAX_PAYLOAD = 1 << 30


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of bytes, as the journal's frames carry it."""
    c = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class _Decoder:
    def __init__(self, payload):
        self.payload = payload
        self.at = 0

    def take(self, fmt):
        value = struct.unpack_from(fmt, self.payload, self.at)[0]
        self.at += struct.calcsize(fmt)
        return value

    def text(self):
        n = self.take("<I")
        if self.at + n > len(self.payload):
            raise ValueError("text runs past the record")
        s = self.payload[self.at:self.at + n].decode("utf-8", "replace")
        self.at += n
        return s


def _point(payload):
    d = _Decoder(payload)
    record = {"point_id": d.take("<Q"), "repeat": d.take("<I"), "seed": d.take("<Q"), "run_index": d.take("<I"),
              "completed_unix": d.take("<d"), "method": d.text()}
    parameters = {}
    for _ in range(d.take("<I")):
        name = d.text()
        kind = d.take("<I")
        if kind == 0:
            parameters[name] = d.take("<q")
        elif kind == 1:
            parameters[name] = d.take("<d")
        elif kind == 2:
            parameters[name] = d.text()
        else:
            raise ValueError(f"unknown parameter kind {kind}")
    record["parameters"] = parameters
    record["status"] = d.text()
    record["message"] = d.text()
    record["extra_json"] = d.text()
    values = {}
    for _ in range(d.take("<I")):
        name = d.text()
        values[name] = d.take("<d")
    record["values"] = values
    return record


def _run_begin(payload):
    d = _Decoder(payload)
    return {"run_index": d.take("<I"), "start_unix": d.take("<d"), "ranks": d.take("<I"), "host": d.text(),
            "command": d.text()}


def _run_end(payload):
    d = _Decoder(payload)
    return {"run_index": d.take("<I"), "end_unix": d.take("<d"), "exit_reason": d.text()}


def _frame_at(data, at):
    """(type, payload, size) of the intact frame at a position; (None, None, 0) for a frame cut
    short at the end; None when the bytes there are not an intact frame."""
    if data[at:at + 4] != _MAGIC:
        return None
    if len(data) - at < _HEADER:
        return None, None, 0
    header = data[at:at + 16]
    kind, length, payload_crc = struct.unpack_from("<III", data, at + 4)
    if crc32c(header) != struct.unpack_from("<I", data, at + 16)[0] or length > _MAX_PAYLOAD:
        return None
    if len(data) - at < _HEADER + length:
        return None, None, 0
    payload = data[at + _HEADER:at + _HEADER + length]
    if crc32c(payload) != payload_crc:
        return None
    return kind, payload, _HEADER + length


def _frame_header_at(data, at):
    """True where a frame header whose own checksum holds starts (the payload is not checked)."""
    if data[at:at + 4] != _MAGIC or len(data) - at < _HEADER:
        return False
    return crc32c(data[at:at + 16]) == struct.unpack_from("<I", data, at + 16)[0]


def journal_path(archive):
    return str(archive) + ".journal"


def newer_records(archive, snapshot_journal_bytes):
    """{"points": [record...], "run_begins": [...], "run_ends": [...], "from": byte}: the intact
    records of the archive's journal from byte ``snapshot_journal_bytes`` on (journal order; a
    point computed twice appears twice, the last one is the one that counts). Empty lists when
    there is no journal or it has not grown. Where the snapshot's length is not a record boundary
    of this journal (it was rewritten since), every intact record of the journal is read, and
    "from" is 0."""
    out = {"points": [], "run_begins": [], "run_ends": [], "from": int(snapshot_journal_bytes)}
    try:
        with open(journal_path(archive), "rb") as f:
            data = f.read()
    except OSError:
        return out
    start = int(snapshot_journal_bytes)
    if start >= len(data):
        return out
    if start < 0 or not _frame_header_at(data, start):
        start = 0
    out["from"] = start
    at = start
    while at < len(data):
        frame = _frame_at(data, at)
        if frame is None:  # damaged or foreign bytes: on to the next intact frame
            at = data.find(_MAGIC, at + 1)
            if at < 0:
                break
            continue
        kind, payload, size = frame
        if size == 0:  # cut short at the end: not written yet
            break
        try:
            if kind == _POINT:
                out["points"].append(_point(payload))
            elif kind == _RUN_BEGIN:
                out["run_begins"].append(_run_begin(payload))
            elif kind == _RUN_END:
                out["run_ends"].append(_run_end(payload))
        except (ValueError, struct.error):
            pass  # an intact frame this reader does not understand (a newer format): left out
        at += size
    return out


def journal_size(archive):
    try:
        return os.path.getsize(journal_path(archive))
    except OSError:
        return None


def writer_pid(archive):
    """The pid of the process that holds the journal's write lock (a sweep running on this
    machine), -1 for a holder whose pid is not visible (another machine), 0 for none."""
    import fcntl

    try:
        fd = os.open(journal_path(archive), os.O_RDONLY)
    except OSError:
        return 0
    try:
        query = struct.pack("@hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, getattr(fcntl, "F_OFD_GETLK", 36), query)
        kind, _, _, _, pid = struct.unpack("@hhqqi4x", answer)
    except OSError:
        return 0
    finally:
        os.close(fd)
    if kind == fcntl.F_UNLCK:
        return 0
    return pid if pid > 0 else -1
