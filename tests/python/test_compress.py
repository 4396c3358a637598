"""Compressed HDF5 and CGNS outputs (`--compress SPEC`, `compress=SPEC`): h5py decodes them with
HDF5's own filters (deflate) or hdf5plugin's (zstd, filter 32015), and numpy checks every
value against the SERAFIN source read by tests/python/slf.py: lossless is bit for bit,
abs=TOL within TOL, rel=TOL within TOL x the variable's range in that frame; the decoded
values are the same whatever the rank count. CGNS's own tools (Debian's libcgns, over HDF5
1.10) check the CGNS files and read their arrays where they are installed."""
import json
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen
import slf
from conftest import assert_failed_cleanly, assert_status

h5py = pytest.importorskip("h5py")
hdf5plugin = pytest.importorskip("hdf5plugin")  # zstd for h5py: a decoder that is not anabranch's

DEFLATE, SHUFFLE, ZSTD, LZ4 = 1, 2, 32015, 32004


def mpirun(n, *args, env=None):
    return conftest.mpirun(n, conftest.EXE, *args, timeout=300, env=env)


def filter_ids(dataset):
    dcpl = dataset.id.get_create_plist()
    return [dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())]


def decoded(path):
    """{variable: (frames, npoin) array} and {variable: (filter ids, the SPEC attribute)}: of a
    VTKHDF file, or of a CGNS mesh result (its variables named as the SERAFIN source's, in the
    order of each FlowSolution's arrays)."""
    with h5py.File(path, "r") as f:
        if "VTKHDF" not in f:
            desc = json.loads(f[" anabranch"][()].tobytes())
            names = [bytes.fromhex(n).decode("latin-1")[:16].strip() for n, _ in desc["variables"]]
            zone = f["Base/mesh"]
            steps = sorted(k for k in zone if k.startswith("FlowSolution"))
            values, filters = {}, {}
            for i, name in enumerate(names):
                data = [zone[s][list(zone[s])[i]][" data"] for s in steps]
                values[name] = np.concatenate([d[()] for d in data])
                filters[name] = (filter_ids(data[0]) if data else [], desc["compression"])
            return values, filters
        pd = f["VTKHDF/PointData"]
        values = {k: pd[k][()] for k in pd}
        filters = {}
        for k in pd:
            spec = pd[k].attrs.get("compression")
            filters[k] = (filter_ids(pd[k]), spec.decode() if isinstance(spec, bytes) else spec)
    return values, filters


def parts(spec):
    """("lossless" | "abs" | "rel", tolerance or 0, the codec's HDF5 filter id)."""
    bound, _, codec = spec.partition(":")
    kind, _, tol = bound.partition("=")
    return kind, float(tol or 0), ZSTD if codec == "zstd" else DEFLATE


def check_within(path, source, spec):
    """Every value of the HDF5 file against the SERAFIN source, within what spec allows."""
    s = slf.read(source)
    values, filters = decoded(path)
    names = [v[:16].strip() for v in s.vars]
    assert sorted(values) == sorted(names)
    kind, tol, codec = parts(spec)
    for k, (ids, written) in filters.items():
        assert ids == [SHUFFLE, codec], (k, ids)
        assert parts(written)[0::2] == (kind, codec), (k, written)  # the SPEC it was written with
    rounded = 0  # values a lossy bound changed: it must use its room
    for i, k in enumerate(names):
        got = values[k].reshape(len(s.frames), -1).astype(np.float64)
        for f, (_, frame) in enumerate(s.frames):
            want = np.asarray(frame[i], dtype=np.float64)
            nan = np.isnan(want)
            assert np.array_equal(np.isnan(got[f]), nan), (k, f)
            w, g = want[~nan], got[f][~nan]
            if kind == "lossless":
                assert np.array_equal(g, w), (k, f)
                continue
            finite = w[np.isfinite(w)]
            bound = tol * (finite.max() - finite.min() if finite.size else 0) if kind == "rel" else tol
            err = np.abs(g - w)
            assert np.all((err <= bound) | (g == w)), (k, f, err.max(), bound)
            rounded += int(np.count_nonzero(g != w))
    assert kind == "lossless" or rounded > 0, f"{path}: no value rounded within {spec}"
    return values


# A format round trip: on one node, Open MPI (on 2 cores MPICH's spinning waits make each
# 3-rank HDF5 run 10 s long; its collective filtered writes are the solver test's).
@pytest.mark.mpi
@pytest.mark.formats
# Each SPEC on a file of its own (2D single, 2D double, 3D), each codec: the generated test
# below draws the other combinations.
@pytest.mark.parametrize("name,spec", [("r2d_gouttedo.slf", "rel=1e-4"), ("r2d_bowl_vf_gb_DoublePrecision_BigEndian.slf", "lossless:zstd"),
                                       ("r2d_bowl_vf_gb_DoublePrecision_LittleEndian.slf", "rel=1e-3"), ("r3d_gouttedo.slf", "abs=0.001:zstd")])
@pytest.mark.parametrize("suffix", ["h5", "cgns"])
def test_bounds_held_and_the_same_values_at_every_rank_count(ab, data, tmp_path, name, spec, suffix):
    src = data / name
    first = None
    for n in (0, 1, 2, 3):  # 0: alone, no MPI
        out = tmp_path / f"n{n}.{suffix}"
        r = ab("convert", src, out, "--compress", spec) if n == 0 else mpirun(n, "convert", src, out, "--compress", spec)
        assert_status(r, 0)
        values = check_within(out, src, spec)
        if first is None:
            first = values
        else:
            for k in first:
                assert np.array_equal(first[k], values[k], equal_nan=True), (n, k)
    # Smaller than the values it holds; the mesh compressed losslessly with the same codec:
    # the uncompressed file's mesh bit for bit (a 3D mesh's Z too, the first frame's exact
    # elevation).
    assert_status(ab("convert", src, tmp_path / f"plain.{suffix}"), 0)
    with h5py.File(tmp_path / f"n3.{suffix}") as f, h5py.File(tmp_path / f"plain.{suffix}") as plain:
        if suffix == "h5":
            pd = f["VTKHDF/PointData"]
            arrays = [pd[k] for k in pd]
            mesh = ["VTKHDF/Points", "VTKHDF/Connectivity", "VTKHDF/Offsets", "VTKHDF/Types", "anabranch/IPOBO"]
        else:
            zone = f["Base/mesh"]
            arrays = [zone[s][k][" data"] for s in zone if s.startswith("FlowSolution") for k in zone[s]]
            for node in [zone[s][k] for s in zone if s.startswith("FlowSolution") for k in zone[s]] + list(zone["GridCoordinates"].values()):
                # CGNS's data type says what the array holds (SIDS-to-HDF5: R4 float32, R8 float64)
                assert node.attrs["type"].tobytes().rstrip(b"\0") == {4: b"R4", 8: b"R8"}[node[" data"].dtype.itemsize], node.name
            mesh = [f"Base/mesh/GridCoordinates/{c}/ data" for c in f["Base/mesh/GridCoordinates"]]
            mesh += ["Base/mesh/Elements/ElementConnectivity/ data", " ipobo"]
            assert ("Base/mesh/GridCoordinates/CoordinateZ" in f) == name.startswith("r3d")
        stored = sum(d.id.get_storage_size() for d in arrays)
        raw = sum(d.size * d.dtype.itemsize for d in arrays)
        for k in mesh:
            assert filter_ids(f[k]) == [SHUFFLE, parts(spec)[2]], k
            assert np.array_equal(f[k][()], plain[k][()]), k
    assert stored < raw
    if suffix == "cgns":
        cgns_tools_agree(tmp_path / "n3.cgns", tmp_path / "plain.cgns", spec)
    # diff says so against the source, and what info reports.
    kind, tol, codec = parts(spec)
    tol = {"rel": ["--range-tol", repr(tol)], "abs": ["--atol", repr(tol)]}.get(kind, [])
    assert_status(ab("diff", src, tmp_path / f"n3.{suffix}", "--values-only", *tol), 0)
    info = ab("info", tmp_path / f"n3.{suffix}")
    assert_status(info, 0)
    assert "compressed" in info.stdout and ("shuffle+zstd" if codec == ZSTD else "shuffle+deflate") in info.stdout
    # Read back on another rank count: the decoded values, to SERAFIN.
    assert_status(mpirun(2, "convert", tmp_path / f"n3.{suffix}", tmp_path / "back.slf"), 0)
    back = slf.read(tmp_path / "back.slf")
    for i, k in enumerate(v[:16].strip() for v in back.vars):
        got = np.array([np.asarray(fr[1][i], dtype=np.float64) for fr in back.frames])
        np.testing.assert_array_equal(got.ravel(), first[k].astype(np.float64).ravel())


def cgns_tools_agree(packed, plain, spec):
    """CGNS's own tools (Debian's libcgns over HDF5 1.10, where installed) on a compressed CGNS
    file: cgnscheck reads it as it reads the uncompressed one, and cgnsdiff, reading every
    array's values, finds the mesh the same (a lossless file: everything). zstd files need
    HDF5's plugin, which these tools do not have: skipped."""
    if not shutil.which("cgnscheck") or not shutil.which("cgnsdiff") or parts(spec)[2] == ZSTD:
        return
    for f in (packed, plain):
        r = subprocess.run(["cgnscheck", f], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "checking complete" in r.stdout, (f, r.stdout[-500:], r.stderr)
    r = subprocess.run(["cgnsdiff", "-d", plain, packed], capture_output=True, text=True, timeout=120)
    differ = [x for x in r.stdout.splitlines() if x.strip()]
    assert all("/FlowSolution" in x and "data values differ" in x for x in differ), differ
    assert (parts(spec)[0] == "lossless") == (differ == []), differ


@pytest.mark.mpi
@pytest.mark.formats
@pytest.mark.parametrize("spec", ["rel=1e-3", "lossless:zstd"])
def test_merge_compresses_as_convert_does(ab, tmp_path, spec):
    """`merge --compress SPEC` into HDF5, alone and at 1 and 3 ranks: every value within the
    bound of gretel's merge to SERAFIN, the same decoded values at every rank count."""
    assert_status(ab("generate", "-n", 3000, "--frames", 2, "-o", tmp_path / "m.slf"), 0)
    assert_status(ab("partition", tmp_path / "m.slf", "-n", 3, "-o", tmp_path / "p"), 0)
    parts = tmp_path / "p" / "m.slf"
    assert_status(ab("merge", parts, "--geo", tmp_path / "m.slf", "-o", tmp_path / "whole.slf"), 0)
    first = None
    for n in (0, 1, 3):
        out = tmp_path / f"n{n}.h5"
        args = ("merge", parts, "--geo", tmp_path / "m.slf", "-o", out, "--compress", spec)
        assert_status(ab(*args) if n == 0 else mpirun(n, *args), 0)
        values = check_within(out, tmp_path / "whole.slf", spec)
        first = first or values
        for k in first:
            assert np.array_equal(first[k], values[k], equal_nan=True), (n, k)
    r = ab("merge", parts, "--geo", tmp_path / "m.slf", "-o", tmp_path / "x.slf", "--compress", spec)
    assert_failed_cleanly(r)
    assert "HDF5 outputs only" in r.stderr and not (tmp_path / "x.slf").exists()


def test_bad_specs_are_one_line_errors(ab, data, tmp_path):
    src = data / "r2d_gouttedo.slf"
    for spec, words in [("zstd", "lossless, abs=TOL or rel=TOL"), ("rel=0", "above 0"), ("abs=-1", "above 0"),
                        ("abs=nan", "above 0"), ("rel=2", "below 1"), ("abs=1e-3x", "above 0"),
                        ("rel=1e-4:lz4", "deflate or zstd"), ("lossless:zstd:zstd", "deflate or zstd")]:
        out = tmp_path / "x.h5"
        r = ab("convert", src, out, "--compress", spec)
        assert_failed_cleanly(r, spec)
        assert spec in r.stderr and words in r.stderr, r.stderr
        assert not out.exists()
    r = ab("convert", src, tmp_path / "x.slf", "--compress", "lossless")
    assert_failed_cleanly(r)
    assert "HDF5 and CGNS outputs only" in r.stderr
    # A multi-block grid compresses to CGNS and HDF5 block files; its other outputs refuse
    # --compress (not silently uncompressed).
    def record(a):
        return np.int32(a.nbytes).tobytes() + a.tobytes() + np.int32(a.nbytes).tobytes()

    (tmp_path / "b.x").write_bytes(record(np.array([2, 2, 2], "<i4")) + record(np.arange(24, dtype="<f8")))  # a PLOT3D grid
    r = ab("convert", tmp_path / "b.x", tmp_path / "b.vtm", "--compress", "lossless")
    assert_failed_cleanly(r)
    assert "compressed in CGNS and HDF5 block files only" in r.stderr and not (tmp_path / "b.vtm").exists()
    assert_status(ab("convert", tmp_path / "b.x", tmp_path / "b.cgns", "--compress", "lossless"), 0)
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "b.cgns", "r") as f:
        x = f["Base/block_1/GridCoordinates/CoordinateX/ data"]
        assert "gzip" in x._filters and np.array_equal(x[()].ravel(), np.arange(8.0))


@pytest.mark.mpi
@pytest.mark.formats
def test_a_filter_missing_on_read_is_a_one_line_error(ab, data, tmp_path):
    """A file whose values another tool compressed with a filter this HDF5 lacks (LZ4, 32004,
    written by h5py + hdf5plugin): one line naming the file, the dataset and the filter, exit
    1 alone and on every rank, no output; the file as it was."""
    src = tmp_path / "lz4.h5"
    assert_status(ab("convert", data / "r2d_gouttedo.slf", src), 0)
    with h5py.File(src, "a") as f:
        pd = f["VTKHDF/PointData"]
        name = sorted(pd)[1]
        values, attrs, chunks = pd[name][()], dict(pd[name].attrs), pd[name].chunks
        del pd[name]
        d = pd.create_dataset(name, data=values, chunks=chunks, maxshape=(None,), **hdf5plugin.LZ4())
        for k, v in attrs.items():
            d.attrs[k] = v
    before = src.read_bytes()
    for n in (0, 2):
        out = tmp_path / f"back{n}.slf"
        r = ab("convert", src, out) if n == 0 else mpirun(n, "convert", src, out)
        assert_failed_cleanly(r)
        lines = [x for x in r.stderr.splitlines() if "error:" in x]
        assert len(lines) == 1 and (n or r.stderr.strip() == lines[0]), r.stderr
        assert f"/VTKHDF/PointData/{name}" in lines[0] and "filter 32004" in lines[0] and "lz4.h5" in lines[0], r.stderr
        assert not out.exists()
    assert src.read_bytes() == before


@pytest.mark.mpi
@pytest.mark.formats
@pytest.mark.parametrize("name", ["r2d_gouttedo.slf", "r3d_gouttedo.slf"])
def test_a_cgns_result_compressed_from_rank_0s_mesh(ab, data, tmp_path, name):
    """A CGNS mesh result converted to a compressed one: rank 0 holds the mesh it read and
    compresses every chunk of it, the other ranks none; lossless, every array the
    uncompressed file's (h5py), alone and at 2 and 3 ranks."""
    plain = tmp_path / "plain.cgns"
    assert_status(ab("convert", data / name, plain), 0)
    for n in (0, 2, 3):
        out = tmp_path / f"n{n}.cgns"
        r = ab("convert", plain, out, "--compress", "lossless") if n == 0 else mpirun(n, "convert", plain, out, "--compress", "lossless")
        assert_status(r, 0)
        with h5py.File(plain) as a, h5py.File(out) as b:
            names = []
            arrays = ("Base/mesh/FlowSolution", "Base/mesh/GridCoordinates/", "Base/mesh/Elements/ElementConnectivity/")
            a.visit(lambda k: names.append(k) if k.endswith(" data") and k.startswith(arrays) and k.count("/") == 4 else None)
            names.append(" ipobo")
            assert len(names) > 4
            for k in names:
                assert filter_ids(b[k]) == [SHUFFLE, DEFLATE], k
                assert np.array_equal(a[k][()], b[k][()]), (n, k)


@pytest.mark.formats
def test_python_reads_node_ranges_of_a_compressed_cgns(ab, data, tmp_path):
    """anabranch.read on a compressed CGNS result: any range of nodes of any frame and
    variable is h5py's decoding of it; a range past the mesh is a usage error naming it."""
    anabranch = pytest.importorskip("anabranch")
    out = tmp_path / "c.cgns"
    assert_status(mpirun(3, "convert", data / "r3d_gouttedo.slf", out, "--compress", "rel=1e-3:zstd"), 0)
    values, _ = decoded(out)
    rng = np.random.default_rng(5)
    with anabranch.read(out) as ds:
        n = ds.npoin
        mesh = ds.mesh
        with h5py.File(out) as f:
            assert np.array_equal(mesh.x, f["Base/mesh/GridCoordinates/CoordinateX/ data"][()])
            assert np.array_equal(mesh.ikle.ravel(), f["Base/mesh/Elements/ElementConnectivity/ data"][()])
        for _ in range(20):
            frame, var = int(rng.integers(0, len(ds.times))), int(rng.integers(0, len(ds.names)))
            first = int(rng.integers(0, n))
            count = int(rng.integers(0, n - first + 1))
            want = values[ds.names[var].strip()].reshape(len(ds.times), -1)[frame, first:first + count]
            np.testing.assert_array_equal(ds.values(frame, var, first, count), want)
        for first, count in ((n - 3, 4), (-1, 2), (0, n + 1)):
            with pytest.raises(anabranch.UsageError, match="out of range"):
                ds.values(0, 0, first, count)


@pytest.mark.mpi
@pytest.mark.formats
@pytest.mark.parametrize("suffix,spec", [("h5", "lossless:zstd"), ("cgns", "lossless:zstd"), ("cgns", "lossless")])
def test_a_damaged_chunk_is_an_error_not_other_values(ab, data, tmp_path, suffix, spec):
    """A compressed chunk with bytes changed in the middle of its stream (a bad disk, a bad
    copy): reading it fails in one line, alone and on every rank, with no output; it does not
    decode to other values (zstd frames carry their checksum, zlib streams theirs)."""
    src = tmp_path / f"c.{suffix}"
    assert_status(ab("convert", data / "r2d_gouttedo.slf", src, "--compress", spec), 0)
    with h5py.File(src, "r") as f:
        d = f["VTKHDF/PointData"][sorted(f["VTKHDF/PointData"])[1]] if suffix == "h5" else f["Base/mesh/FlowSolution000003"][list(f["Base/mesh/FlowSolution000003"])[1]][" data"]
        chunk = d.id.get_chunk_info(0)
    raw = bytearray(src.read_bytes())
    if spec.endswith(":zstd"):  # a zstd frame (RFC 8878): magic, then its header's descriptor, bit 2 the checksum's flag
        assert raw[chunk.byte_offset:chunk.byte_offset + 4] == b"\x28\xb5\x2f\xfd" and raw[chunk.byte_offset + 4] & 0x04
    middle = chunk.byte_offset + chunk.size // 2
    for k in range(middle, middle + 8):
        raw[k] ^= 0x5A
    src.write_bytes(bytes(raw))
    for n in (0, 2):
        out = tmp_path / f"back{n}.slf"
        r = ab("convert", src, out) if n == 0 else mpirun(n, "convert", src, out)
        assert_failed_cleanly(r)
        lines = [x for x in r.stderr.splitlines() if "error:" in x]
        assert len(set(lines)) == 1 and src.name in lines[0], r.stderr
        assert not out.exists()


VALUE_SCALES = [1e-6, 1e-2, 1.0, 1e3, 1e6]


@pytest.mark.mpi
@pytest.mark.generated
@gen.cases(8)
@given(elements=st.integers(60, 4000), frames=st.integers(1, 3), precision=st.sampled_from(["single", "double"]),
       kind=st.sampled_from(["lossless", "abs", "rel"]), codec=st.sampled_from(["", ":deflate", ":zstd"]),
       exponent=st.floats(-6, -1), scale=st.sampled_from(VALUE_SCALES),
       zeros=st.booleans(), nans=st.booleans(), ranks=st.integers(0, 3), seed=st.integers(0, 2**31),
       suffix=st.sampled_from(["h5", "cgns"]))
def test_generated_fields_within_their_bound(elements, frames, precision, kind, codec, exponent, scale, zeros, nans, ranks, seed, suffix):
    """Random meshes and fields (smooth, noisy, offset, dry zeros, NaN), tolerances, rank
    counts and formats: every decoded value within its bound."""
    with gen.scratch() as d:
        src = d / "m.slf"
        assert_status(gen.ab("generate", "-n", elements, "--frames", frames, "--precision", precision, "--seed", seed % 1000, "-o", src), 0)
        rng = np.random.default_rng(seed)
        s = slf.read(src)
        x = (s.x - s.x.min()) / max(np.ptp(s.x), 1e-30)

        def field(f, v, a):
            out = scale * (np.sin(6 * x + v + f) + rng.normal(0, 0.01, a.size)) + scale * rng.uniform(-10, 10)
            if zeros:
                out[rng.random(a.size) < 0.3] = 0
            if nans:
                out[rng.integers(0, a.size, 3)] = np.nan
            return out

        slf.edit_values(src, field)
        tol = 10 ** exponent * (scale if kind == "abs" else 1)
        spec = ("lossless" if kind == "lossless" else f"{kind}={tol!r}") + codec
        out = d / f"c.{suffix}"
        args = ("convert", src, out, "--compress", spec)
        r = gen.ab(*args) if ranks == 0 else mpirun(ranks, *args, env=gen.nodes(min(ranks, 2)))
        assert_status(r, 0)
        s = slf.read(src)
        values, filters = decoded(out)
        assert all(ids == [SHUFFLE, parts(spec)[2]] for ids, _ in filters.values()), filters
        names = [v[:16].strip() for v in s.vars]
        for i, k in enumerate(names):
            got = values[k].reshape(len(s.frames), -1).astype(np.float64)
            for f, (_, frame) in enumerate(s.frames):
                want = np.asarray(frame[i], dtype=np.float64)
                nan = np.isnan(want)
                assert np.array_equal(np.isnan(got[f]), nan)
                w, g = want[~nan], got[f][~nan]
                bound = 0.0 if kind == "lossless" else tol if kind == "abs" else tol * (w.max() - w.min() if w.size else 0)
                assert np.all(np.abs(g - w) <= bound), (k, f, np.abs(g - w).max(), bound, spec)
