"""Compressed block files (BlockWriter's compress=SPEC, CGNS and HDF5) drawn at random,
against numpy: 1 to 4 blocks of odd sizes (flat ones, one point thick, among them), each cut
along random planes into pieces dealt to 1 to 3 ranks (a rank may hold none), halos around
the pieces, single or double precision, lossless or within a bound (abs, rel) with deflate
or zstd. h5py with hdf5plugin (decoders that are not anabranch's) reads every array: the
grid is exact, every value is exact (lossless) or within its bound (rel: TOL x the
variable's range over every block in that frame); in CGNS each chunk lies in one rank's
piece. Read back by anabranch on another rank count with other pieces: the values h5py
decoded, every one. CGNS's library (cgnscheck) reads a deflate file as it reads the
uncompressed one."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import conftest
import gen
from test_gen_blocks import SCRIPT, split, value

pytestmark = [pytest.mark.formats]
h5py = pytest.importorskip("h5py")
pytest.importorskip("anabranch")


def zone_arrays(h, b, dims, frames, names):
    """{(frame, variable) or ('grid', c): the decoded array (C order k, j, i) and its dataset} of block b."""
    base = "Base2D" if dims[2] == 1 else "Base"
    z = h[f"{base}/block_{b + 1}"]
    out = {("grid", c): z[f"GridCoordinates/Coordinate{a}/ data"] for c, a in enumerate("XYZ")}
    for f in range(frames):
        for v, n in enumerate(names):
            out[f, v] = z[f"FlowSolution{f:06d}/{n}/ data"]
    return out


@pytest.mark.mpi
@pytest.mark.generated
@gen.cases(16)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(["cgns", "hdf5"]), nblocks=st.integers(1, 4), ranks=st.integers(1, 3),
       real=st.sampled_from(["f4", "f8"]),
       mode=st.sampled_from(["lossless", "abs", "rel"]), codec=st.sampled_from(["", ":zstd"]), nvar=st.integers(1, 3),
       frames=st.integers(1, 3), halo=st.sampled_from([(0, 0, 0), (1, 1, 1), (2, 0, 1)]), grid=st.booleans(), reread=st.integers(1, 3))
@example(seed=1, fmt="cgns", nblocks=3, ranks=2, real="f4", mode="rel", codec="", nvar=2, frames=2, halo=(1, 0, 1), grid=True, reread=3)
@example(seed=2, fmt="hdf5", nblocks=3, ranks=3, real="f8", mode="rel", codec=":zstd", nvar=2, frames=2, halo=(1, 0, 1), grid=True, reread=2)
@example(seed=5, fmt="hdf5", nblocks=2, ranks=2, real="f4", mode="lossless", codec="", nvar=1, frames=1, halo=(0, 0, 0), grid=False, reread=3)
@example(seed=6, fmt="hdf5", nblocks=3, ranks=1, real="f8", mode="lossless", codec=":zstd", nvar=2, frames=1, halo=(1, 1, 1), grid=True, reread=2)
def test_compressed_block_files_from_random_pieces(seed, fmt, nblocks, ranks, real, mode, codec, nvar, frames, halo, grid, reread):
    hdf5plugin = pytest.importorskip("hdf5plugin")  # noqa: F841  (h5py's zstd)
    rng = np.random.default_rng(seed)
    dims = []
    for _ in range(nblocks):
        d = [int(x) for x in rng.integers(2, 10, 3)]
        if rng.random() < 0.3:
            d[2] = 1
        dims.append(d)
    tol = float(10.0 ** rng.uniform(-6, -1.5))
    spec_text = ("lossless" if mode == "lossless" else f"{mode}={tol!r}") + codec
    variables = [f"q{v}" for v in range(nvar)]
    times = sorted(float(t) for t in rng.uniform(0, 5, frames))
    spec = dict(mode="write", dims=dims, pieces=split(rng, dims, ranks), halo=list(halo), variables=variables, times=times,
                options=f"format={fmt} precision={real[1]} compress={spec_text}", grid=grid, real=real, **{"async": False})
    exact = {}  # numpy's values in the file's precision, C order (k, j, i), and the doubles written
    for b, d in enumerate(dims):
        k, j, i = np.meshgrid(np.arange(d[2]), np.arange(d[1]), np.arange(d[0]), indexing="ij")
        for f in range(frames):
            for v in range(nvar):
                exact[f, b, v] = value(b, v, f, i, j, k)
        for c in range(3):
            exact["grid", b, c] = value(b, c + 100, 0, i, j, k)
    with gen.scratch() as tmp:
        out = tmp / ("out.cgns" if fmt == "cgns" else "out.h5")
        (tmp / "spec.py").write_text(repr(spec))
        (tmp / "run.py").write_text(SCRIPT)
        conftest.assert_status(conftest.mpirun(ranks, sys.executable, tmp / "run.py", tmp / "spec.py", out, env=gen.nodes(min(ranks, 2))), 0)
        decoded = {}
        with h5py.File(out, "r") as h:
            for b, d in enumerate(dims if fmt == "cgns" else []):
                arrays = zone_arrays(h, b, d, frames, variables)
                for key, ds in arrays.items():
                    assert ds.dtype == np.dtype(real), (key, ds.dtype)
                    f = ds._filters
                    assert "shuffle" in f and ("32015" in f if codec else "gzip" in f), (key, f)
                    # every chunk inside one rank's piece: chunk edges on every cut
                    shape = list(reversed(d[:2] if d[2] == 1 else d))
                    assert list(ds.shape) == shape
                    for a, c in enumerate(ds.chunks):
                        axis = len(shape) - 1 - a  # i, j, k
                        for piece in (p for r in spec["pieces"] for p in r if p[0] == b):
                            for cut in piece[1 + axis]:
                                assert cut % c == 0 or cut == d[axis], (key, ds.chunks, piece)
                    decoded[(key[0], b, key[1])] = ds[()].reshape(d[2], d[1], d[0])
            if fmt == "hdf5":  # a dataset an array, every block's points one after another
                off = h["blocks/offsets"][()]
                keys = [("grid", c, f"grid/{a}") for c, a in enumerate("xyz") if grid]
                keys += [(f, v, f"frames/{f:06d}/q{v}") for f in range(frames) for v in range(nvar)]
                for f, v, name in keys:
                    ds = h[name]
                    assert ds.dtype == np.dtype(real) and "shuffle" in ds._filters and ("32015" in ds._filters if codec else "gzip" in ds._filters)
                    values = ds[()]
                    for b, d in enumerate(dims):
                        decoded[f, b, v] = values[off[b]:off[b + 1]].reshape(d[2], d[1], d[0])
        for (f, b, c), got in decoded.items():
            if f == "grid" and not grid:
                continue  # the index space, written for CGNS (test_blocks.py)
            want = exact[f, b, c].astype(real)
            if f == "grid" or mode == "lossless":
                np.testing.assert_array_equal(got, want, err_msg=f"{spec_text}: {f} block {b + 1} array {c}")
                continue
            if mode == "abs":
                bound = tol
            else:
                every = np.concatenate([exact[f, bb, c].ravel() for bb in range(nblocks)])
                bound = tol * (every.max() - every.min())
            err = np.abs(got.astype(np.float64) - want.astype(np.float64))
            assert err.max() <= bound, (spec_text, f, b, c, err.max(), bound)
        conftest.assert_status(gen.ab("info", out, "--check"), 0)
        info = gen.ab("info", out)
        assert "compressed" in info.stdout and ("shuffle+zstd" if codec else "shuffle+deflate") in info.stdout, info.stdout
        # each variable's ratio over all its blocks and frames: the bytes its values take uncompressed
        said = json.loads(gen.ab("info", "--json", out).stdout)[0]["compression"]
        points = sum(int(np.prod(d)) for d in dims)
        for name in variables:
            stored, whole = [int(x) for x in said[name].split("(")[1].split(" bytes")[0].split(" of ")]
            assert whole == frames * points * int(real[1]) and 0 < stored, (name, said[name])
        # Read back by anabranch on another rank count, other pieces: the values h5py decoded.
        back = tmp / "back.dat"  # raw: the blocks one after another, each block's variables
        conftest.assert_status(conftest.mpirun(reread, conftest.EXE, "convert", out, back, env=gen.nodes(min(reread, 3))), 0)
        raw = back.read_bytes()
        pos = 0
        for f in range(frames):
            for b, d in enumerate(dims):
                for v in range(nvar):
                    n = int(np.prod(d))
                    got = np.frombuffer(raw[pos:pos + n * int(real[1])], "<" + real)
                    np.testing.assert_array_equal(got, decoded[f, b, v].ravel(), err_msg=f"read back: frame {f} block {b + 1} q{v}")
                    pos += n * int(real[1])
        if mode == "lossless":  # the engine's reader itself, with halos, against the exact values
            rspec = dict(spec, mode="read", pieces=split(rng, dims, reread), halo=[int(x) for x in rng.integers(0, 2, 3)], options="")
            (tmp / "spec.py").write_text(repr(rspec))
            conftest.assert_status(conftest.mpirun(reread, sys.executable, tmp / "run.py", tmp / "spec.py", out), 0)
        if fmt == "cgns" and not codec and shutil.which("cgnscheck"):  # CGNS's library (no zstd plugin)
            r = subprocess.run(["cgnscheck", out], capture_output=True, text=True, timeout=120)
            assert r.returncode == 0 and "checking complete" in r.stdout and "ERROR" not in r.stdout, r.stdout[-2000:]


def test_compress_is_refused_where_blocks_are_raw(tmp_path):
    """compress= on a raw block file, and --compress to a block output other than CGNS or
    HDF5: one line, exit 1, no output."""
    anabranch = pytest.importorskip("anabranch")
    layout = anabranch.BlockLayout()
    layout.add_block(1, 4, 3, 2)
    layout.add_piece(1)
    for name, fmt in (("b.dat", "raw"),):
        with conftest.raises_exactly(anabranch.UsageError, match="compress=rel=0.001: an option of CGNS and HDF5 block files"):
            anabranch.BlockWriter(None, tmp_path / name, layout, ["q"], f"format={fmt} compress=rel=1e-3")
        assert not (tmp_path / name).exists()
    with anabranch.BlockWriter(None, tmp_path / "in.h5", layout, ["q"]) as w:
        w.write_frame(0.0, [[np.arange(24.0)]])
    for out in ("o.dat", "o.vtm", "o.xyz"):
        r = gen.ab("convert", tmp_path / "in.h5", tmp_path / out, "--compress", "lossless")
        conftest.assert_status(r, 1, "compressed in CGNS and HDF5 block files only")
        assert not (tmp_path / out).exists()
    r = gen.ab("convert", tmp_path / "in.h5", tmp_path / "o.cgns", "--compress", "rel=0")
    conftest.assert_status(r, 1, "the bound must be a finite number above 0")
    for out in ("o.cgns", "o.h5"):
        conftest.assert_status(gen.ab("convert", tmp_path / "in.h5", tmp_path / out, "--compress", "rel=1e-3"), 0)
        conftest.assert_status(gen.ab("info", tmp_path / out, "--check"), 0)
        assert (tmp_path / out).with_suffix(".h5.xmf").exists() == (out == "o.h5")
