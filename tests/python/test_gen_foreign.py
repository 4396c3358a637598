"""Other writers' files for every reader path, drawn at random, against numpy. anabranch's own
files made again by another program: h5py with its own layout choices (contiguous, compact,
chunked with a chunk size that divides nothing, deflate and shuffle, the values in the other
precision) and h5repack's copies (HDF5's own tool), then read by every read strategy at 1, 2
and 3 ranks, each rank any nodes, every value against numpy's; what is not read is refused
in one line naming the file and what it is, never read as garbage. (CGNS files from CGNS's
own library, with the coordinates and the solutions in different precisions:
test_gen_cgns.py.)"""
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import conftest
import gen
import slf
from test_gen_writer import SCRIPT

pytestmark = [pytest.mark.mpi, pytest.mark.generated]
h5py = pytest.importorskip("h5py")
TESTS = pathlib.Path(__file__).parent
H5REPACK = shutil.which("h5repack")

# How another program lays a dataset out: h5py's keyword arguments (None: h5repack's copy).
LAYOUTS = {
    "contiguous": {},
    "compact": {"layout": "compact"},
    "chunked": {"chunks": "any"},  # a chunk size drawn, dividing nothing as often as not
    "chunked-extendible": {"chunks": "any", "maxshape": (None,)},
    "deflate": {"chunks": "any", "compression": "gzip"},
    "shuffle-deflate": {"chunks": "any", "shuffle": True, "compression": "gzip", "compression_opts": 1},
    "other-precision": {"other_precision": True},
    "h5repack-chunk": None,
    "h5repack-deflate": None,
    "h5repack-contiguous": None,
}


def relayout(path, group, how, rng):
    """Every dataset of group made again as `how` lays it out (its values and attributes
    kept); returns the chunk size drawn (0 when none)."""
    chunk = 0
    with h5py.File(path, "a") as f:
        g = f[group]
        for name in list(g):
            d = g[name]
            data, attrs = d[()], dict(d.attrs)
            del g[name]
            kw = dict(how)
            if kw.pop("other_precision", False):
                data = data.astype("f8" if data.dtype.itemsize == 4 else "f4")
            if kw.get("chunks") == "any":
                chunk = int(rng.integers(1, data.size + 1))
                kw["chunks"] = (chunk,)
            if kw.get("layout") == "compact":
                del kw["layout"]
                if data.nbytes < 60000:  # HDF5's compact storage: at most 64 KiB
                    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                    dcpl.set_layout(h5py.h5d.COMPACT)
                    space = h5py.h5s.create_simple(data.shape)
                    dsid = h5py.h5d.create(g.id, name.encode(), h5py.h5t.py_create(data.dtype), space, dcpl=dcpl)
                    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
                    nd = g[name]
                    for k, v in attrs.items():
                        nd.attrs[k] = v
                    continue
            nd = g.create_dataset(name, data=data, **kw)
            for k, v in attrs.items():
                nd.attrs[k] = v
    return chunk


def repack(path, how, rng):
    """h5repack's copy of path in place of it: chunked (a size drawn), deflated or made
    contiguous, every dataset."""
    opts = {"h5repack-chunk": ["-l", f"CHUNK={int(rng.integers(1, 5000))}"], "h5repack-deflate": ["-f", "GZIP=1"],
            "h5repack-contiguous": ["-l", "CONTI"]}[how]
    tmp = path.with_suffix(".repacked")
    r = subprocess.run([H5REPACK, *opts, path, tmp], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    tmp.replace(path)


@gen.cases(12)
@given(seed=st.integers(0, 2**32 - 1), nx=st.integers(2, 40), ny=st.integers(2, 9), nvar=st.integers(1, 3), frames=st.integers(1, 3),
       real=st.sampled_from(["f4", "f8"]), layout=st.sampled_from(sorted(LAYOUTS)), ranks=st.integers(1, 3),
       strategy=st.sampled_from(["hdf5", "aggregated", "independent"]))
@example(seed=2, nx=17, ny=5, nvar=2, frames=3, real="f4", layout="chunked", ranks=2, strategy="hdf5")  # chunks dividing nothing
@example(seed=3, nx=13, ny=3, nvar=2, frames=2, real="f8", layout="chunked", ranks=2, strategy="aggregated")
@example(seed=4, nx=11, ny=4, nvar=1, frames=2, real="f4", layout="other-precision", ranks=3, strategy="hdf5")
def test_vtkhdf_files_laid_out_by_other_programs_are_read(seed, nx, ny, nvar, frames, real, layout, ranks, strategy):
    """A result (VTKHDF) whose variables another program stored its own way: every value
    read back on 1 to 3 ranks by every read strategy, each rank a random set of nodes, as
    numpy wrote them; the SERAFIN file back from it byte for byte (alone and under mpiexec)."""
    if LAYOUTS[layout] is None and not H5REPACK:
        pytest.skip("h5repack is not installed (Debian: hdf5-tools)")
    rng = np.random.default_rng(seed)
    ikle, x, y, ipobo = gen.triangles(nx, ny, rng)
    npoin = len(x)
    names = [(f"VAR {v}", "M") for v in range(nvar)]
    times = sorted(float(t) for t in rng.uniform(0, 100, frames))
    data = rng.uniform(-1e3, 1e3, (frames, nvar, npoin)).astype(real)
    src = gen.serafin("other writers", names, ikle, ipobo, x, y, [(t, list(data[f])) for f, t in enumerate(times)], real=real)
    with gen.scratch() as tmp:
        (tmp / "in.slf").write_bytes(src)
        conftest.assert_status(gen.ab("convert", tmp / "in.slf", tmp / "x.h5"), 0)
        if LAYOUTS[layout] is None:
            repack(tmp / "x.h5", layout, rng)
        else:
            relayout(tmp / "x.h5", "VTKHDF/PointData", LAYOUTS[layout], rng)
        if layout == "other-precision":  # what the file now holds, in the result's precision
            data = data.astype("f8" if real == "f4" else "f4").astype(real)
            src = gen.serafin("other writers", names, ikle, ipobo, x, y, [(t, list(data[f])) for f, t in enumerate(times)], real=real)
        conftest.assert_status(gen.ab("info", "--check", tmp / "x.h5"), 0)
        conftest.assert_status(gen.ab("convert", tmp / "x.h5", tmp / "back.slf"), 0)
        assert (tmp / "back.slf").read_bytes() == src, layout
        if ranks > 1:
            conftest.assert_status(conftest.mpirun(ranks, conftest.EXE, "convert", tmp / "x.h5", tmp / "back2.slf"), 0)
            assert (tmp / "back2.slf").read_bytes() == src, (layout, ranks)
        # every strategy's reader: any nodes on each rank, whole frames or some variables
        np.save(tmp / "values.npy", data)
        rids = [[int(g) for g in rng.integers(1, npoin + 1, int(rng.integers(0, npoin + 1)))] for _ in range(ranks)]
        if rng.random() < 0.5:  # a partition of the nodes (a partitioner's KNOLG)
            cut = np.sort(rng.integers(0, npoin + 1, ranks - 1))
            rids = [list(range(a + 1, b + 1)) for a, b in zip(np.r_[0, cut], np.r_[cut, npoin])]
        spec = dict(mode="read", ids=rids, strategy=strategy, options="", frames=list(range(frames)), whole=bool(rng.integers(0, 2)),
                    variables=list(range(nvar)), want={"times": [float(np.array(t, real)) for t in times],
                                                       "values": str(tmp / "values.npy")}, rank_values=False)
        (tmp / "spec.py").write_text(repr(spec))
        (tmp / "run.py").write_text(SCRIPT)
        proc = conftest.mpirun(ranks, sys.executable, tmp / "run.py", tmp / "spec.py", tmp / "x.h5", TESTS)
        conftest.assert_status(proc, 0)


@gen.cases(8)
@given(seed=st.integers(0, 2**32 - 1), nblocks=st.integers(1, 3), nvar=st.integers(1, 3), frames=st.integers(1, 2),
       layout=st.sampled_from(sorted(LAYOUTS)), ranks=st.integers(1, 3))
@example(seed=5, nblocks=2, nvar=2, frames=2, layout="chunked", ranks=2)
def test_block_files_laid_out_by_other_programs_are_read_or_refused(seed, nblocks, nvar, frames, layout, ranks):
    """A multi-block HDF5 file whose arrays another program stored its own way: read where
    the arrays are contiguous (every value as written, on 1 to 3 ranks), else refused in
    one line naming the file and the dataset (anabranch reads a block file's arrays where
    they are: a chunked or compressed copy it did not write says nothing of its chunks'
    places), never read as garbage."""
    if LAYOUTS[layout] is None and not H5REPACK:
        pytest.skip("h5repack is not installed (Debian: hdf5-tools)")
    anabranch = pytest.importorskip("anabranch")
    rng = np.random.default_rng(seed)
    layout_ = anabranch.BlockLayout()
    dims = []
    for b in range(nblocks):
        d = [int(v) for v in rng.integers(2, 7, 3)]
        dims.append(d)
        layout_.add_block(b + 1, *d)
        layout_.add_piece(b + 1)
    names = [f"q{v}" for v in range(nvar)]
    vals = [[[rng.uniform(-1, 1, int(np.prod(d))) for _ in range(nvar)] for d in dims] for _ in range(frames)]
    with gen.scratch() as tmp:
        with anabranch.BlockWriter(None, tmp / "b.h5", layout_, names) as w:
            for f in range(frames):
                w.write_frame(0.5 * (f + 1), vals[f])
        if LAYOUTS[layout] is None:
            repack(tmp / "b.h5", layout, rng)
        else:
            for f in range(frames):
                relayout(tmp / "b.h5", f"frames/{f:06d}", LAYOUTS[layout], rng)
        with h5py.File(tmp / "b.h5") as h:
            plain = all(h[f"frames/{f:06d}/{n}"].id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
                        and h[f"frames/{f:06d}/{n}"].dtype == np.float64 for f in range(frames) for n in names)
        r = gen.ab("convert", tmp / "b.h5", tmp / "b.dat")
        if not plain:
            conftest.assert_status(r, 1)
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            assert len(lines) == 1 and "b.h5" in lines[0] and "frames/" in lines[0], r.stderr
            return
        conftest.assert_status(r, 0)
        got = np.fromfile(tmp / "b.dat", dtype="<f8")
        want = np.concatenate([vals[f][b][v] for f in range(frames) for b in range(nblocks) for v in range(nvar)])
        np.testing.assert_array_equal(got, want, err_msg=layout)
        if ranks > 1:
            conftest.assert_status(conftest.mpirun(ranks, conftest.EXE, "convert", tmp / "b.h5", tmp / "b2.dat"), 0)
            assert (tmp / "b2.dat").read_bytes() == (tmp / "b.dat").read_bytes(), (layout, ranks)


@pytest.mark.parametrize("kind", ["blocks", "mesh"])
def test_a_cgns_copy_without_its_root_node_is_refused_in_one_line(tmp_path, data, kind):
    """h5repack copies every object of a CGNS file but the root's attributes (its name, label
    and type), which CGNS's library needs too: the copy is refused, one line naming the file
    and why, with nothing written. (A mesh result is read as anabranch wrote it: a copy that
    changed is refused as one.)"""
    if not H5REPACK:
        pytest.skip("h5repack is not installed (Debian: hdf5-tools)")
    if kind == "mesh":
        conftest.assert_status(gen.ab("convert", data / "r2d_gouttedo.slf", tmp_path / "x.cgns"), 0)
    else:
        anabranch = pytest.importorskip("anabranch")
        layout = anabranch.BlockLayout()
        layout.add_block(1, 3, 2, 2)
        layout.add_piece(1)
        with anabranch.BlockWriter(None, tmp_path / "x.cgns", layout, ["rho", "myvar"]) as w:
            w.write_frame(0.5, layout.arrays(2))
    r = subprocess.run([H5REPACK, tmp_path / "x.cgns", tmp_path / "r.cgns"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for cmd in (["info", tmp_path / "r.cgns"], ["convert", tmp_path / "r.cgns", tmp_path / "out.h5"]):
        p = gen.ab(*cmd)
        conftest.assert_status(p, 1)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        # (a mesh result: anabranch reads its own, unchanged; a changed copy is refused as such)
        why = "no CGNS label" if kind == "blocks" else "changed since anabranch wrote it"
        assert len(lines) == 1 and "r.cgns" in lines[0] and why in lines[0], p.stderr
    assert not (tmp_path / "out.h5").exists()
