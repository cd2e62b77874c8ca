"""Serialized (CDR) messages of the per-step topics, built from templates.

A JointState or TFMessage published every physics step costs 10-100 µs when its rclpy message
is filled field by field; its bytes, though, differ from step to step only in the stamps and
the numbers. Each encoder here lays out the message once (XCDR1 little endian, as rmw writes
it: a 4-byte encapsulation header, then every primitive aligned to its size counted from the
end of that header) and afterwards patches stamps and values into a copy of the template
through numpy views. Publishers take the bytes as they are (``Publisher.publish(bytes)``).
"""
from __future__ import annotations

import math

import numpy as np

_HEADER = b"\x00\x01\x00\x00"          # CDR little endian, no options


class _Writer:
    """Appends CDR primitives with their alignment; remembers where things went."""

    def __init__(self):
        self.data = bytearray(_HEADER)

    def _align(self, size: int):
        pad = (-(len(self.data) - 4)) % size
        self.data += b"\x00" * pad

    def uint32(self, value: int) -> int:
        self._align(4)
        offset = len(self.data)
        self.data += int(value).to_bytes(4, "little")
        return offset

    def string(self, text: str):
        raw = text.encode() + b"\x00"
        self.uint32(len(raw))
        self.data += raw

    def float64s(self, count: int) -> int:
        """Room for `count` doubles (a fixed block: no length); returns its offset."""
        self._align(8)
        offset = len(self.data)
        self.data += b"\x00" * (8 * count)
        return offset

    def float64_sequence(self, count: int) -> int:
        self.uint32(count)
        return self.float64s(count)

    def stamp(self) -> int:
        """A builtin_interfaces/Time (int32 sec, uint32 nanosec); returns its offset."""
        offset = self.uint32(0)
        self.uint32(0)
        return offset


def _sec_nanosec(t: float) -> tuple[int, int]:
    sec = math.floor(t)
    nanosec = int(round((t - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return sec, nanosec


class _Template:
    """A finished template: stamps (int32 pairs) and doubles patched by index."""

    def __init__(self, writer: _Writer, stamp_offsets, double_offsets):
        self.template = bytes(writer.data)
        self.buffer = bytearray(self.template)
        # doubles sit 8-aligned after the 4-byte header; int32s 4-aligned from the start
        self.doubles = np.frombuffer(self.buffer, dtype=np.float64,
                                     count=(len(self.buffer) - 4) // 8, offset=4)
        self.int32s = np.frombuffer(self.buffer, dtype=np.int32, count=len(self.buffer) // 4)
        self.stamp_index = np.array([o // 4 for o in stamp_offsets], dtype=np.intp)
        self.double_index = np.array(double_offsets, dtype=np.intp)

    @staticmethod
    def double_indices(offset: int, count: int) -> list:
        start = (offset - 4) // 8
        return list(range(start, start + count))

    def set_stamp(self, t: float):
        sec, nanosec = _sec_nanosec(t)
        if nanosec >= 2 ** 31:
            nanosec -= 2 ** 32               # stored as the int32 with the same bits
        if len(self.stamp_index) == 1:
            i = self.stamp_index[0]
            self.int32s[i] = sec
            self.int32s[i + 1] = nanosec
        else:
            self.int32s[self.stamp_index] = sec
            self.int32s[self.stamp_index + 1] = nanosec

    def bytes(self) -> bytes:
        return bytes(self.buffer)


class ClockCDR:
    """rosgraph_msgs/Clock."""

    def __init__(self):
        w = _Writer()
        self._t = _Template(w, [w.stamp()], [])

    def encode(self, t: float) -> bytes:
        self._t.set_stamp(t)
        return self._t.bytes()


class JointStateCDR:
    """sensor_msgs/JointState for fixed joint names: position, velocity and effort (n each)."""

    def __init__(self, names, frame_id: str = ""):
        self.n = n = len(names)
        w = _Writer()
        stamp = w.stamp()
        w.string(frame_id)
        w.uint32(n)
        for name in names:
            w.string(name)
        blocks = [w.float64_sequence(n) for _ in range(3)]
        self._t = _Template(w, [stamp], [])
        self._slices = [slice((b - 4) // 8, (b - 4) // 8 + n) for b in blocks]

    def encode(self, t: float, position, velocity, effort) -> bytes:
        tpl = self._t
        tpl.set_stamp(t)
        values = tpl.doubles
        p, v, e = self._slices
        values[p] = position
        values[v] = velocity
        values[e] = effort
        return tpl.bytes()


class TFMessageCDR:
    """tf2_msgs/TFMessage of fixed (parent, child) frame pairs: translation (n, 3) and rotation
    quaternions (n, 4) (x, y, z, w), one stamp for all."""

    def __init__(self, frames):
        self.n = len(frames)
        w = _Writer()
        w.uint32(self.n)
        stamps, doubles = [], []
        for parent, child in frames:
            stamps.append(w.stamp())
            w.string(parent)
            w.string(child)
            doubles += _Template.double_indices(w.float64s(7), 7)
        self._t = _Template(w, stamps, doubles)
        self._block = np.zeros((self.n, 7))

    def encode(self, t: float, translations, rotations) -> bytes:
        tpl = self._t
        tpl.set_stamp(t)
        if self.n:
            block = self._block
            block[:, :3] = translations
            block[:, 3:] = rotations
            tpl.doubles[tpl.double_index] = block.ravel()
        return tpl.bytes()


class ContactsCDR:
    """sim_node/Contacts, of any number of contacts: header (stamp, frame_id), then per contact
    the names (entity1, link1, entity2, link2) and ten doubles (position, normal, depth, force).

    A contact starts 8-aligned or 4-aligned (after the count, the first; after ten doubles,
    every other one 8-aligned): its names and the padding before its doubles are the same bytes
    whenever the same names start at the same alignment, so they are built once per (names,
    alignment) and reused."""

    def __init__(self, frame_id: str = ""):
        w = _Writer()
        w.stamp()
        w.string(frame_id)
        self._head = bytearray(w.data)
        self._names: dict[tuple, bytes] = {}

    def _names_block(self, names: tuple, offset: int) -> bytes:
        key = (names, offset % 8)
        block = self._names.get(key)
        if block is None:
            w = _Writer()
            w.data += b"\x00" * (offset - 4)        # the same alignment as in the message
            for name in names:
                w.string(name)
            w._align(8)
            block = self._names[key] = bytes(w.data[offset:])
        return block

    def encode(self, t: float, names, values: np.ndarray) -> bytes:
        """names: (entity1, link1, entity2, link2) per contact; values (n, 10): position (3),
        normal (3), depth, force (3) per contact."""
        sec, nanosec = _sec_nanosec(t)
        head = self._head
        head[4:12] = int(sec).to_bytes(4, "little", signed=True) + nanosec.to_bytes(4, "little")
        parts = [bytes(head), b"\x00" * ((-(len(head) - 4)) % 4),
                 len(names).to_bytes(4, "little")]
        offset = len(head) + len(parts[1]) + 4
        rows = np.ascontiguousarray(values, dtype="<f8")
        for i, key in enumerate(names):
            block = self._names_block(key, offset)
            parts.append(block)
            parts.append(rows[i].tobytes())
            offset += len(block) + 80
        return b"".join(parts)
