"""Multi-block files drawn at random, against numpy: 1 to 4 blocks of odd sizes, each split
into pieces along random planes and dealt to 1 to 5 ranks at random (a rank may hold none),
halos around the pieces, every strategy, raw (records or none, single or double) and HDF5,
small buffers; the file read with numpy (raw) or h5py (HDF5) must hold every value at its
place; read back on another rank count with other pieces, each rank gets its own values. A
non-finite value planted anywhere (a frame's variable or, in HDF5, the grid) is named by
`info --check`."""
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen

pytestmark = [pytest.mark.mpi, pytest.mark.generated]
h5py = pytest.importorskip("h5py")

SCRIPT = """
import sys, numpy as np, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
spec = eval(open(sys.argv[1]).read())
mine = spec["pieces"][comm.rank]
halo = tuple(spec["halo"])
layout = anabranch.BlockLayout(halo=halo)
for b, d in enumerate(spec["dims"]):
    layout.add_block(b + 1, *d)
for b, i, j, k in mine:
    layout.add_piece(b + 1, i=tuple(i), j=tuple(j), k=tuple(k))

def value(b, v, f, i, j, k):
    return ((b + 1) * 1000003 + v * 7919 + f * 104729 + i * 31 + j * 1009 + k * 7) % 999983 * 1e-3 - 400.0

def arrays(nvar, f, grid=False):
    out = []
    for b, (i0, i1), (j0, j1), (k0, k1) in mine:
        per = []
        for v in range(nvar):
            kk, jj, ii = np.meshgrid(np.arange(k0 - halo[2], k1 + halo[2]), np.arange(j0 - halo[1], j1 + halo[1]),
                                     np.arange(i0 - halo[0], i1 + halo[0]), indexing="ij")
            a = value(b, v + (100 if grid else 0), f, ii, jj, kk).astype(float)
            per.append(np.ascontiguousarray(a))
        out.append(per)
    return out

try:
    if spec["mode"] == "write":
        with anabranch.BlockWriter(comm, sys.argv[2], layout, spec["variables"], spec["options"]) as w:
            if spec["grid"]:
                w.write_grid(arrays(3, 0, grid=True))
            for f, t in enumerate(spec["times"]):
                if spec["async"]:
                    w.begin_frame(t, arrays(len(spec["variables"]), f))
                    w.end_frame()
                else:
                    w.write_frame(t, arrays(len(spec["variables"]), f))
    else:
        with anabranch.BlockReader(comm, sys.argv[2], layout, spec["options"]) as r:
            assert r.frames == len(spec["times"])
            for f in range(r.frames):
                got = r.read_frame(f)
                want = arrays(r.nvar, f)
                for p, (g, w) in enumerate(zip(got, want)):
                    for v in range(r.nvar):
                        h = [slice(x, -x if x else None) for x in reversed(halo)]
                        core = g[v][tuple(h)]
                        wc = np.asarray(w[v][tuple(h)], spec["real"]).astype(float)
                        if not np.array_equal(core, wc):
                            raise AssertionError(f"rank {comm.rank}: frame {f} piece {p} variable {v} differs")
except anabranch.Error as e:
    print(f"rank {comm.rank}: {e}", file=sys.stderr)
    sys.exit(1)
"""


def value(b, v, f, i, j, k):
    return ((b + 1) * 1000003 + v * 7919 + f * 104729 + i * 31 + j * 1009 + k * 7) % 999983 * 1e-3 - 400.0


def split(rng, dims, ranks):
    """Every block cut along random planes into pieces, dealt to ranks at random:
    [(block, (i0, i1), (j0, j1), (k0, k1))] per rank."""
    out = [[] for _ in range(ranks)]
    for b, d in enumerate(dims):
        cuts = []
        for a in range(3):
            inner = rng.integers(1, d[a], int(rng.integers(0, 3))) if d[a] > 1 else []
            c = sorted({0, d[a], *(int(x) for x in inner)})
            cuts.append(list(zip(c[:-1], c[1:])))
        for i in cuts[0]:
            for j in cuts[1]:
                for k in cuts[2]:
                    out[int(rng.integers(0, ranks))].append((b, i, j, k))
    return out


@gen.cases(25)
@given(seed=st.integers(0, 2**32 - 1), nblocks=st.integers(1, 4), ranks=st.integers(1, 5), nodes=st.integers(1, 3),
       fmt=st.sampled_from(["raw", "hdf5"]), records=st.booleans(), real=st.sampled_from(["f4", "f8"]),
       strategy=st.sampled_from(["independent", "collective", "aggregated", "aggregated-async"]), nvar=st.integers(1, 3),
       frames=st.integers(1, 3), halo=st.sampled_from([(0, 0, 0), (1, 1, 1), (2, 0, 1)]), reread=st.integers(1, 5))
def test_block_files_from_random_pieces(seed, nblocks, ranks, nodes, fmt, records, real, strategy, nvar, frames, halo, reread):
    rng = np.random.default_rng(seed)
    dims = [[int(x) for x in rng.integers(1, 9, 3)] for _ in range(nblocks)]
    variables = [f"q{v}" for v in range(nvar)]
    times = sorted(float(t) for t in rng.uniform(0, 5, frames))
    opts = [f"format={fmt}", f"strategy={strategy}", f"precision={real[1]}"]
    if fmt == "raw":
        opts.append(f"records={'fortran' if records else 'none'}")
    if rng.random() < 0.5:
        opts.append(f"buffer_bytes={int(rng.choice([4096, 5000, 8192]))}")
    if strategy.startswith("aggregated") and rng.random() < 0.5:
        opts.append(f"writers_per_node={int(rng.integers(1, 3))}")
    grid = fmt == "hdf5" and bool(rng.integers(0, 2))
    spec = dict(mode="write", dims=dims, pieces=split(rng, dims, ranks), halo=list(halo), variables=variables, times=times,
                options=" ".join(opts), grid=grid, real=real, **{"async": strategy == "aggregated-async"})
    want = {}  # (frame, block, variable): numpy's values in the file's precision
    for f in range(frames):
        for b, d in enumerate(dims):
            k, j, i = np.meshgrid(np.arange(d[2]), np.arange(d[1]), np.arange(d[0]), indexing="ij")
            for v in range(nvar):
                want[f, b, v] = value(b, v, f, i, j, k).astype(real).ravel()
    with gen.scratch() as tmp:
        out = tmp / ("out.h5" if fmt == "hdf5" else "out.dat")
        (tmp / "spec.py").write_text(repr(spec))
        (tmp / "run.py").write_text(SCRIPT)
        proc = conftest.mpirun(ranks, sys.executable, tmp / "run.py", tmp / "spec.py", out, env=gen.nodes(min(nodes, ranks)))
        conftest.assert_status(proc, 0)
        if fmt == "raw":
            raw = out.read_bytes()
            pos = 0
            for f in range(frames):
                for b, d in enumerate(dims):
                    for v in range(nvar):
                        n = int(np.prod(d)) * int(real[1])
                        if records:
                            assert np.frombuffer(raw[pos:pos + 4], "<i4")[0] == n
                            pos += 4
                        np.testing.assert_array_equal(np.frombuffer(raw[pos:pos + n], "<" + real), want[f, b, v],
                                                      err_msg=f"frame {f} block {b + 1} variable {v}")
                        pos += n
                        if records:
                            assert np.frombuffer(raw[pos:pos + 4], "<i4")[0] == n
                            pos += 4
            assert pos == len(raw)
        else:
            with h5py.File(out) as h:
                off = h["blocks/offsets"][:]
                assert [list(x) for x in h["blocks/dims"][:]] == dims
                for f, fr in enumerate(sorted(h["frames"])):
                    assert h["frames"][fr].attrs["time"] == times[f]
                    for b in range(nblocks):
                        for v in range(nvar):
                            np.testing.assert_array_equal(h[f"frames/{fr}/q{v}"][off[b]:off[b + 1]], want[f, b, v])
                if grid:
                    for b, d in enumerate(dims):
                        k, j, i = np.meshgrid(np.arange(d[2]), np.arange(d[1]), np.arange(d[0]), indexing="ij")
                        for c, axis in enumerate("xyz"):
                            np.testing.assert_array_equal(h[f"grid/{axis}"][off[b]:off[b + 1]],
                                                          value(b, c + 100, 0, i, j, k).astype(real).ravel())
        # read back: another rank count, other pieces and halos
        rspec = dict(spec, mode="read", pieces=split(rng, dims, reread), halo=[int(x) for x in rng.integers(0, 2, 3)],
                     options=" ".join([f"strategy={rng.choice(['independent', 'collective', 'aggregated'])}"] +
                                      ([f"buffer_bytes={int(rng.choice([4096, 5000]))}"] if rng.random() < 0.5 else [])))
        (tmp / "spec.py").write_text(repr(rspec))
        proc = conftest.mpirun(reread, sys.executable, tmp / "run.py", tmp / "spec.py", out,
                               env=gen.nodes(min(reread, int(rng.integers(1, 3)))))
        conftest.assert_status(proc, 0)
        # info --check: sound, then a non-finite value planted at a random place is named
        conftest.assert_status(gen.ab("info", out, "--check"), 0)
        places = [("frame", f, b, v) for f in range(frames) for b in range(nblocks) for v in range(nvar)]
        if grid and rng.random() < 0.5:  # the grid as often as the frames
            places = [("grid", 0, b, c) for b in range(nblocks) for c in range(3)]
        kind, f, b, v = places[int(rng.integers(0, len(places)))]
        n = int(np.prod(dims[b]))
        i = int(rng.integers(0, n))
        rb = int(real[1])
        if fmt == "raw":
            at = 0
            per = [int(np.prod(d)) * rb + (8 if records else 0) for d in dims]
            at = f * sum(per) * nvar + sum(p * nvar for p in per[:b]) + v * per[b] + (4 if records else 0) + i * rb
        else:
            with h5py.File(out) as h:
                off = h["blocks/offsets"][:]
                ds = h[f"grid/{'xyz'[v]}"] if kind == "grid" else h[f"frames/{sorted(h['frames'])[f]}/q{v}"]
                at = ds.id.get_offset() + (int(off[b]) + i) * rb
        data = bytearray(out.read_bytes())
        data[at:at + rb] = np.array([np.inf if rng.random() < 0.5 else np.nan], "<" + real).tobytes()
        out.write_bytes(bytes(data))
        r = gen.ab("info", out, "--check")
        where = f"grid, block {b + 1}, coordinate {'xyz'[v]}" if kind == "grid" else f"frame {f}, block {b + 1}, variable q{v}"
        conftest.assert_status(r, 1, where, f"value {i} is not finite (byte {at})")


def test_block_formats_outside_the_list_are_refused(tmp_path):
    """A block writer's format= and convert's --to for a multi-block file: each name outside
    the list (before, between and after the accepted ones in any order) refused in one line,
    nothing written."""
    anabranch = pytest.importorskip("anabranch")
    layout = anabranch.BlockLayout()
    layout.add_block(1, 4, 3, 2)
    layout.add_piece(1)
    for fmt in ("a", "cgnz", "plot3d", "tecplotx", "vtk", "zzz"):
        with conftest.raises_exactly(anabranch.UsageError, match=f"format={fmt}: expected raw, hdf5, cgns or tecplot"):
            anabranch.BlockWriter(None, tmp_path / "b.dat", layout, ["q"], f"format={fmt}")
        assert not (tmp_path / "b.dat").exists()
    with anabranch.BlockWriter(None, tmp_path / "in.h5", layout, ["q"]) as w:
        w.write_frame(0.0, [[np.arange(24.0)]])
    for to in ("serafin", "vtu"):
        r = gen.ab("convert", tmp_path / "in.h5", tmp_path / "out", "--to", to)
        conftest.assert_status(r, 1, "a multi-block file converts to raw, hdf5, vtm, plot3d, cgns or tecplot (--to " + to + ")")
        assert not (tmp_path / "out").exists()
