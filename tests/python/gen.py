"""What the generated tests (test_gen_*.py) share: hypothesis's settings, a scratch folder per
case, and file writers built from numpy alone (the oracles' side, never anabranch's code).

Cases are drawn by hypothesis over the dimensions that matter for each format and path. In
the suite the draw is seeded (derandomize: the same cases every run) and bounded; a soak
draws AB_SOAK times as many, from a random seed that hypothesis prints with any failure
(`AB_SOAK=20 pytest tests/python/test_gen_records.py`; `--hypothesis-seed=N` replays one)."""
import contextlib
import os
import shutil
import struct
import tempfile

import numpy as np
from hypothesis import HealthCheck, Phase, settings

import conftest

SOAK = int(os.environ.get("AB_SOAK", "1") or 1)


def cases(n):
    """hypothesis settings for a test of n cases in the suite (n x AB_SOAK in a soak; a third
    under MPICH, whose waiting ranks spin: more ranks than cores run several times slower). A
    failing case is reported as drawn, not shrunk (each case launches programs, many under
    mpiexec: shrinking takes minutes); AB_SHRINK=1 shrinks it."""
    if "mpich" in os.path.basename(conftest.MPIEXEC):
        n = max(4, n // 3)
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("AB_SHRINK") == "1" else [])
    return settings(max_examples=n * SOAK, deadline=None, derandomize=SOAK == 1, database=None, print_blob=True,
                    suppress_health_check=list(HealthCheck), phases=phases)


@contextlib.contextmanager
def scratch():
    """A fresh folder for one case (hypothesis runs many cases in one test function)."""
    d = tempfile.mkdtemp(prefix="ab-gen-")
    try:
        import pathlib
        yield pathlib.Path(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def nodes(n):
    """The environment that spreads an MPI job's ranks over n emulated nodes, for either MPI."""
    return {"ANABRANCH_TEST_NODES": str(n), "MPIR_CVAR_NUM_CLIQUES": str(n)}


def ab(*args, timeout=300, **kw):
    """Runs the anabranch command; a death by signal fails the test."""
    env = dict(os.environ, ANABRANCH_PROGRESS="0")
    return conftest.Result(conftest.run([conftest.EXE, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env, **kw))


def fortran_records(parts, order="<", marker=4, records=True):
    """Bytes of a Fortran sequential unformatted file, one record per part (numpy arrays or
    bytes), or without records the parts back to back (C binary)."""
    out = bytearray()
    code = order + ("i4" if marker == 4 else "i8")
    for p in parts:
        data = p if isinstance(p, (bytes, bytearray)) else np.ascontiguousarray(p).tobytes()
        m = np.array([len(data)], code).tobytes()
        out += (m + bytes(data) + m) if records else bytes(data)
    return bytes(out)


def serafin(title, variables, ikle, ipobo, x, y, frames, order=">", real="f4", date=None, iparam=None):
    """A SERAFIN file's bytes from numpy arrays (TELEMAC's layout: docs/formats/serafin.md).
    variables: [(name, unit)]; ikle (nelem, ndp) 1-based; frames: [(time, [values per variable])]."""
    ip = list(iparam or [1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    ip[9] = 1 if date is not None else 0
    word = "SERAFIND" if real == "f8" else "SERAFIN "
    title = title if len(title) >= 80 else title.ljust(72)[:72] + word  # 80 characters: as given
    parts = [title[:80].encode("latin-1"), np.array([len(variables), 0], order + "i4")]
    parts += [(n.ljust(16)[:16] + u.ljust(16)[:16]).encode("latin-1") for n, u in variables]
    parts.append(np.array(ip, order + "i4"))
    if date is not None:
        parts.append(np.array(date, order + "i4"))
    ikle = np.asarray(ikle)
    parts.append(np.array([ikle.shape[0], len(x), ikle.shape[1], 1], order + "i4"))
    parts += [np.asarray(ikle, order + "i4").ravel(), np.asarray(ipobo, order + "i4"), np.asarray(x, order + real),
              np.asarray(y, order + real)]
    for t, values in frames:
        parts.append(np.array([t], order + real))
        parts += [np.asarray(v, order + real) for v in values]
    return fortran_records(parts, order)


def triangles(nx, ny, rng=None, shuffle=True):
    """A triangulated nx x ny grid of points (jittered when rng is given): ikle (nelem, 3)
    1-based, x, y, ipobo (boundary nodes numbered around, 0 inside). shuffle: the nodes
    renumbered at random (a numbering that is not spatial, as meshers leave it)."""
    i, j = np.meshgrid(np.arange(nx), np.arange(ny))
    x, y = i.ravel().astype(float), j.ravel().astype(float)
    if rng is not None:
        x = x + rng.uniform(-0.3, 0.3, x.size) * (0 < i.ravel()) * (i.ravel() < nx - 1)
        y = y + rng.uniform(-0.3, 0.3, y.size) * (0 < j.ravel()) * (j.ravel() < ny - 1)
    node = lambda a, b: b * nx + a  # noqa: E731
    tri = []
    for b in range(ny - 1):
        for a in range(nx - 1):
            p, q, r, s = node(a, b), node(a + 1, b), node(a + 1, b + 1), node(a, b + 1)
            tri += [(p, q, r), (p, r, s)]
    ikle = np.array(tri, dtype=np.int64)
    ring = [node(a, 0) for a in range(nx)] + [node(nx - 1, b) for b in range(1, ny)] + \
           [node(a, ny - 1) for a in range(nx - 2, -1, -1)] + [node(0, b) for b in range(ny - 2, 0, -1)]
    ipobo = np.zeros(nx * ny, dtype=np.int64)
    ipobo[ring] = np.arange(1, len(ring) + 1)
    if shuffle and rng is not None:
        perm = rng.permutation(nx * ny)  # new number of old node k: perm[k]
        ikle = perm[ikle]
        inv = np.argsort(perm)
        x, y, ipobo = x[inv], y[inv], ipobo[inv]
    return ikle + 1, x, y, ipobo


def read_records(data, order="<", marker=4):
    """The payloads of a Fortran sequential file (subrecords joined), read with struct."""
    out, pos, code = [], 0, order + ("i" if marker == 4 else "q")
    while pos < len(data):
        payload = b""
        while True:
            n = struct.unpack(code, data[pos:pos + marker])[0]
            payload += data[pos + marker:pos + marker + abs(n)]
            end = struct.unpack(code, data[pos + marker + abs(n):pos + 2 * marker + abs(n)])[0]
            assert abs(end) == abs(n), (pos, n, end)
            pos += 2 * marker + abs(n)
            if n >= 0:
                break
        out.append(payload)
    return out
