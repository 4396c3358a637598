"""A small SERAFIN reader written independently of anabranch's C++ code, for the tests."""
import struct

import numpy as np


class Slf:
    def __init__(self, data, name="?"):
        self.name = name
        self.data = data
        self.order = ">" if struct.unpack(">i", data[:4])[0] == 80 else "<"
        self.pos = 0
        self.title = self._rec()
        nbv1, nbv2 = struct.unpack(self.order + "2i", self._rec())
        self.vars = [self._rec().decode("latin-1") for _ in range(nbv1 + nbv2)]
        self.iparam = list(struct.unpack(self.order + "10i", self._rec()))
        self.date = list(struct.unpack(self.order + "6i", self._rec())) if self.iparam[9] == 1 else None
        self.nelem, self.npoin, self.ndp, self.one = struct.unpack(self.order + "4i", self._rec())
        self.ikle = np.frombuffer(self._rec(), dtype=self.order + "i4").reshape(self.nelem, self.ndp)
        self.ipobo = np.frombuffer(self._rec(), dtype=self.order + "i4")
        xrec = self._rec()
        self.rs = len(xrec) // self.npoin
        self.ftype = self.order + ("f4" if self.rs == 4 else "f8")
        self.x = np.frombuffer(xrec, dtype=self.ftype)
        self.y = np.frombuffer(self._rec(), dtype=self.ftype)
        self.header_bytes = self.pos
        self.frames = []
        while self.pos + 8 + self.rs <= len(data):
            t = np.frombuffer(self._rec(), dtype=self.ftype)[0]
            vals = [np.frombuffer(self._rec(), dtype=self.ftype) for _ in self.vars]
            self.frames.append((t, vals))

    def _rec(self):
        n = struct.unpack(self.order + "i", self.data[self.pos:self.pos + 4])[0]
        payload = self.data[self.pos + 4:self.pos + 4 + n]
        end = struct.unpack(self.order + "i", self.data[self.pos + 4 + n:self.pos + 8 + n])[0]
        assert end == n, f"{self.name}: markers {n}/{end} at {self.pos}"
        self.pos += 8 + n
        return payload

    @property
    def nplan(self):
        return max(1, self.iparam[6])


def read(path):
    with open(path, "rb") as f:
        return Slf(f.read(), str(path))


def as_gretel_writes(data):
    """The bytes of a global SERAFIN file as gretel (and `anabranch merge`) writes it back from
    its parts: the title's last 8 bytes the format word of its precision, IPARAM (1, 0, origin,
    0, 0, NPLAN, IPARAM(8), IPARAM(9), date flag); everything else as it is."""
    order = ">" if struct.unpack(">i", data[:4])[0] == 80 else "<"
    pos = 88
    nbv1, nbv2 = struct.unpack(order + "2i", data[pos + 4:pos + 12])
    pos += 16 + 40 * (nbv1 + nbv2)
    ip = list(struct.unpack(order + "10i", data[pos + 4:pos + 44]))
    at = pos + 48 + (32 if ip[9] == 1 else 0)  # the sizes record
    nelem, npoin, ndp = struct.unpack(order + "3i", data[at + 4:at + 16])
    xrec = at + 24 + 8 + 4 * nelem * ndp + 8 + 4 * npoin
    rs = struct.unpack(order + "i", data[xrec:xrec + 4])[0] // npoin
    out = bytearray(data)
    out[4 + 72:4 + 80] = b"SERAFIND" if rs == 8 else b"SERAFIN "
    out[pos + 4:pos + 44] = struct.pack(order + "10i", 1, 0, ip[2], ip[3], 0, 0, ip[6], ip[7], ip[8], 1 if ip[9] == 1 else 0)
    return bytes(out)


def edit_values(path, change):
    """Rewrites the values of a SERAFIN file in place: change(frame, var, values) returns the
    new values of one variable of one frame (a numpy array of NPOIN)."""
    s = read(path)
    raw = bytearray(open(path, "rb").read())
    rec = 8 + s.npoin * s.rs
    for f in range(len(s.frames)):
        for v in range(len(s.vars)):
            at = s.header_bytes + f * (8 + s.rs + len(s.vars) * rec) + 8 + s.rs + v * rec + 4
            raw[at:at + s.npoin * s.rs] = np.asarray(change(f, v, s.frames[f][1][v].copy()), dtype=s.ftype).tobytes()
    with open(path, "wb") as out:
        out.write(bytes(raw))


def shift_values(path, amount):
    """Adds `amount` to every value of every frame of a SERAFIN file in place (parts that
    disagree on their interface nodes, as a solver's ranks may)."""
    edit_values(path, lambda f, v, a: a + np.array(amount, dtype=a.dtype))
