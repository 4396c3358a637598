"""Every multi-block and HDF5 write path, read back by readers that share no code with
anabranch (numpy on the documented byte layouts, h5py, plain XML parsing) and compared with
values computed here: the example block solver's formula, a SERAFIN file read by slf.py.
A conversion that garbles one precision, reverses a block's dimensions, puts a block's
values on another block, keeps an older file's stale bytes or leaves a torn frame fails
here even where `anabranch diff` of a round trip says identical."""
import json
import os
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import conftest
import slf

h5py = pytest.importorskip("h5py")
# -m formats: what a file holds, whatever the MPI library or where the ranks sit; the
# emulated-node and MPICH runs leave these to the one-node run. An output written over an
# older file is the writers' open (MPI-IO's truncation): every run has it.

SOLVER = os.environ.get("AB_BLOCKS_SOLVER")
EXE = conftest.EXE
NVAR = 5
NAMES = ["rho", "rhou", "rhov", "rhow", "rhoe"]
# What CGNS files name them (its SIDS identifiers).
SIDS_NAMES = ["Density", "MomentumX", "MomentumY", "MomentumZ", "EnergyStagnationDensity"]
# Unequal sizes in every direction (a reversed ni/nk shows), a flat block (nk = 1), ids that
# are not the blocks' positions (block 17's grid lies at y = 40).
BLOCKS = [(1, (9, 4, 2)), (2, (3, 5, 1)), (3, (2, 2, 3)), (17, (5, 2, 2))]
FRAMES = 2
V8 = conftest.DATA / "telemac-v8"
STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


# ---------------------------------------------------------------- what the files must hold


def expected_state(block_id, dims, frames):
    """blocks_solver's variables after `frames` steps, [v, k, j, i], in float64."""
    ni, nj, nk = dims
    k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
    q = np.stack([0.001 * block_id + i + 2.0 * j + 3.0 * k + v for v in range(NVAR)]).astype(np.float64)
    for n in range(1, frames + 1):
        for v in range(NVAR):
            q[v] = 0.75 * q[v] + 0.25 * ((v + 1) * n)
    return q


def expected(block_id, dims, frames, precision):
    """What a file of `precision` bytes holds: the solver computes in double, writes in the file's precision."""
    return expected_state(block_id, dims, frames).astype(np.float32 if precision == 4 else np.float64)


def solver_grid(block_id, dims):
    """blocks_solver's coordinates (x, y, z), each [k, j, i]."""
    ni, nj, nk = dims
    k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
    return [i + 40.0 * (block_id % 16), j + 40.0 * (block_id // 16), k + 0.0]


def real(precision):
    return np.dtype("<f4" if precision == 4 else "<f8")


def run(argv, n=None, cwd=None, timeout=120, env=None):
    """argv alone (n None) or under `mpiexec -n n`, in cwd; env: variables added."""
    argv = [str(a) for a in argv]
    if n is not None:
        argv = [conftest.MPIEXEC, "-n", str(n), *argv]
    return conftest.run(["timeout", str(timeout), *argv], capture_output=True, text=True, cwd=cwd,
                        env=dict(conftest.MPI_ENV, **(env or {})))


def ok(argv, n=None, cwd=None):
    proc = run(argv, n, cwd)
    conftest.assert_status(proc, 0)
    return proc


# ---------------------------------------------------------------- independent readers


def read_raw(path, dims, precision, fortran, nvar=NVAR):
    """A raw block file by blocks-raw.md alone: frame after frame, block after block, each
    variable one array of ni*nj*nk little-endian reals, i fastest; with Fortran records a
    4-byte length before and after every array. Returns [frame][block] -> [v, k, j, i]."""
    data = pathlib.Path(path).read_bytes()
    dt = real(precision)
    at, frames = 0, []
    while at < len(data):
        frame = []
        for ni, nj, nk in dims:
            n = ni * nj * nk
            arrays = []
            for v in range(nvar):
                if fortran:
                    assert int.from_bytes(data[at:at + 4], "little") == n * precision, (path, len(frames), v, at)
                    at += 4
                assert at + n * precision <= len(data), f"{path}: cut inside frame {len(frames)}"
                arrays.append(np.frombuffer(data, dt, n, at).reshape(nk, nj, ni))
                at += n * precision
                if fortran:
                    assert int.from_bytes(data[at:at + 4], "little") == n * precision, (path, len(frames), v, at)
                    at += 4
            frame.append(np.stack(arrays))
        frames.append(frame)
    assert at == len(data)
    return frames


def raw_frame_bytes(dims, precision, fortran, nvar=NVAR):
    return sum(nvar * (a * b * c * precision + (8 if fortran else 0)) for a, b, c in dims)


def check_raw(path, precision, fortran, frames=FRAMES, blocks=BLOCKS):
    """The data file's size, markers and values, and its sidecar, against what is computed here."""
    dims = [d for _, d in blocks]
    fb = raw_frame_bytes(dims, precision, fortran)
    assert path.stat().st_size == frames * fb, (path, path.stat().st_size, frames, fb)
    got = read_raw(path, dims, precision, fortran)
    assert len(got) == frames
    for f in range(frames):
        for b, (bid, d) in enumerate(blocks):
            assert got[f][b].dtype == real(precision)
            np.testing.assert_array_equal(got[f][b], expected(bid, d, f + 1, precision), err_msg=f"{path.name}: frame {f} block {bid}")
    side = json.loads(pathlib.Path(str(path) + ".json").read_text())
    assert (side["format"], side["precision"], side["byte_order"]) == ("anabranch-blocks-raw", precision, "little")
    assert side["records"] in (("fortran", True) if fortran else ("none", False)), side["records"]
    assert side["variables"] == NAMES and side["frames"] == frames and side["frame_bytes"] == fb
    assert side["times"] == pytest.approx([0.1 * (f + 1) for f in range(frames)])
    offsets = np.cumsum([0] + [NVAR * (a * b * c * precision + (8 if fortran else 0)) for a, b, c in dims])[:-1]
    assert [(x["id"], tuple(x["dims"]), x["offset"]) for x in side["blocks"]] == [(bid, d, int(o)) for (bid, d), o in zip(blocks, offsets)]


def check_block_h5(path, precision, frames=FRAMES, grid="solver", blocks=BLOCKS, variables=NAMES, rounded=None):
    """An HDF5 block file by blocks-hdf5.md, read with h5py; then its XDMF sidecar. `rounded`:
    the precision the values went through on their way (a float32 file converted to float64)."""
    rounded = rounded or precision
    dims = [d for _, d in blocks]
    with h5py.File(path, "r") as f:
        assert f.attrs["anabranch_format"] in (b"anabranch-blocks", "anabranch-blocks")
        assert int(np.asarray(f.attrs["precision"]).ravel()[0]) == precision
        names = f.attrs["variables"]
        names = (names.decode() if isinstance(names, bytes) else str(names)).split("\n") if variables else []
        assert names == variables
        assert f["blocks/ids"][:].tolist() == [b for b, _ in blocks]
        assert [tuple(x) for x in f["blocks/dims"][:].tolist()] == dims
        off = f["blocks/offsets"][:]
        assert off.tolist() == np.cumsum([0] + [a * b * c for a, b, c in dims]).tolist()
        assert sorted(f["frames"]) == [f"{k:06d}" for k in range(frames)]
        for fr in range(frames):
            g = f[f"frames/{fr:06d}"]
            assert float(np.asarray(g.attrs["time"]).ravel()[0]) == pytest.approx(0.1 * (fr + 1))
            for v, name in enumerate(variables):
                ds = g[name]
                assert ds.dtype == real(precision) and ds.shape == (off[-1],), (path.name, name, ds.dtype, ds.shape)
                for b, (bid, (ni, nj, nk)) in enumerate(blocks):
                    np.testing.assert_array_equal(ds[off[b]:off[b + 1]].reshape(nk, nj, ni),
                                                  expected(bid, (ni, nj, nk), fr + 1, rounded)[v].astype(real(precision)),
                                                  err_msg=f"{path.name}: frame {fr} {name} block {bid}")
        if grid is None:
            assert "grid" not in f
        else:
            for c, axis in enumerate("xyz"):
                ds = f[f"grid/{axis}"]
                assert ds.shape == (off[-1],) and ds.dtype == real(precision)
                for b, (bid, (ni, nj, nk)) in enumerate(blocks):
                    want = grid(bid, (ni, nj, nk))[c] if callable(grid) else solver_grid(bid, (ni, nj, nk))[c]
                    np.testing.assert_array_equal(ds[off[b]:off[b + 1]].reshape(nk, nj, ni),
                                                  np.asarray(want, real(rounded)).astype(real(precision)),
                                                  err_msg=f"{path.name}: grid {axis} block {bid}")
    check_block_xdmf(path, blocks, frames, variables, grid is not None)


def hdf_item(item, h5):
    """An XDMF DataItem of Format HDF: its dataset exists, and Dimensions, NumberType and
    Precision are the dataset's own. Returns the dataset's shape."""
    file_name, dataset = item.text.strip().split(":", 1)
    assert file_name == h5.filename.split("/")[-1], item.text
    ds = h5[dataset]
    dims = tuple(int(x) for x in item.get("Dimensions").split())
    assert dims == ds.shape, (dataset, dims, ds.shape)
    kind = {"f": "Float", "i": "Int", "u": "UInt"}[ds.dtype.kind]
    assert item.get("NumberType", "Float") == kind, (dataset, item.get("NumberType"), ds.dtype)
    assert int(item.get("Precision", "4")) == ds.dtype.itemsize, (dataset, item.get("Precision"), ds.dtype)
    return ds.shape


def hyperslab(item, h5, columns=1):
    """(start, count, dataset path) of a slice DataItem, every part checked: rows
    [start, start + count) of a dataset of `columns` values a row (one-dimensional when 1).
    A slice is written in two forms at once (docs/formats/hdf5.md#xdmf-sidecar): XDMF 2's
    (Type HyperSlab, its two children: start, stride, count; the dataset) and XDMF 3's (the
    item's own text, file:/dataset|start:stride:count:size), which must name the same rows;
    the whole dataset is a plain HDF item."""
    if item.get("Type") != "HyperSlab":
        shape = hdf_item(item, h5)
        assert item.get("ItemType") is None and shape[0] * (columns if len(shape) == 1 else 1) >= 1, item.attrib
        return 0, shape[0], item.text.strip().split(":", 1)[1]
    assert item.get("ItemType") is None, item.attrib  # XDMF 3 would take the item as a reference VTK skips
    sel, src = list(item)
    ranks = 1 if columns == 1 else 2
    assert sel.get("Format") == "XML" and sel.get("Dimensions") == f"3 {ranks}"
    v = [int(x) for x in sel.text.split()]
    start, stride, count = v[0], v[ranks], v[2 * ranks]
    if columns > 1:
        assert (v[1], v[3], v[5]) == (0, 1, columns), sel.text  # whole rows
    shape = hdf_item(src, h5)
    assert stride == 1 and len(shape) == ranks and 0 <= start and start + count <= shape[0], (sel.text, shape)
    assert int(np.prod([int(x) for x in item.get("Dimensions").split()])) == count * columns, (item.get("Dimensions"), count)
    # XDMF 3's form: the same dataset, the same rows
    where, xdmf3 = item.text.strip().split("|")
    assert where == src.text.strip(), (where, src.text)
    fields = [f.split() for f in xdmf3.split(":")]
    want = [[start, 0], [1, 1], [count, columns], list(shape)] if columns > 1 else [[start], [1], [count], list(shape)]
    assert [[int(x) for x in f] for f in fields] == want, (xdmf3, want)
    for k in ("NumberType", "Precision"):
        assert item.get(k) == src.get(k), (k, item.attrib, src.attrib)
    return start, count, src.text.strip().split(":", 1)[1]


def check_block_xdmf(path, blocks, frames, variables, has_grid):
    """The sidecar of a block file: per frame one grid per block, its Topology and every
    DataItem in XDMF's order (slowest first: nk nj ni), each hyperslab the block's own range."""
    root = ET.parse(str(path) + ".xmf").getroot()
    temporal = root.find("Domain/Grid")
    assert temporal.get("CollectionType") == "Temporal"
    steps = temporal.findall("Grid")
    assert len(steps) == max(frames, 1)  # a grid without frames: one step, no time, no attribute
    with h5py.File(path, "r") as h5:
        off = h5["blocks/offsets"][:]
        for fr, step in enumerate(steps):
            if frames:
                assert float(step.find("Time").get("Value")) == pytest.approx(0.1 * (fr + 1))
            else:
                assert step.find("Time") is None
            grids = step.findall("Grid")
            assert [g.get("Name") for g in grids] == [f"block {bid}" for bid, _ in blocks]
            for b, (g, (bid, (ni, nj, nk))) in enumerate(zip(grids, blocks)):
                want = f"{nk} {nj} {ni}"
                topo = g.find("Topology")
                assert topo.get("Dimensions") == want, (path.name, bid, topo.get("Dimensions"), (ni, nj, nk))
                geo = g.find("Geometry")
                if has_grid:  # the rows of the interleaved view of x, y, z
                    assert topo.get("TopologyType") == "3DSMesh" and geo.get("GeometryType") == "XYZ"
                    slabs = geo.findall("DataItem")
                    assert len(slabs) == 1 and slabs[0].get("Dimensions") == want + " 3"
                    assert hyperslab(slabs[0], h5, 3) == (off[b], ni * nj * nk, "/grid/xyz")
                    view = h5["grid/xyz"]
                    assert view.is_virtual and view.shape == (off[-1], 3)
                    np.testing.assert_array_equal(view[:], np.stack([h5[f"grid/{c}"][:] for c in "xyz"], axis=1))
                else:
                    assert topo.get("TopologyType") == "3DCoRectMesh"
                attrs = g.findall("Attribute")
                assert [a.get("Name") for a in attrs] == (variables if frames else [])
                for a in attrs:
                    item = a.find("DataItem")
                    assert a.get("Center") == "Node" and item.get("Dimensions") == want, (bid, a.get("Name"), item.get("Dimensions"))
                    assert hyperslab(item, h5) == (off[b], ni * nj * nk, f"/frames/{fr:06d}/{a.get('Name')}")


def check_vtkhdf(path, s):
    """A VTKHDF file (hdf5.md) against the SERAFIN file s read by slf.py; then its XDMF sidecar."""
    nf = len(s.frames)
    with h5py.File(path, "r") as f:
        g = f["VTKHDF"]
        assert g["NumberOfPoints"][0] == s.npoin and g["NumberOfCells"][0] == s.nelem
        pts = g["Points"]
        assert pts.shape == (s.npoin, 3) and pts.dtype.itemsize == s.rs and pts.dtype.kind == "f"
        pts = pts[:]
        np.testing.assert_array_equal(pts[:, 0], s.x)
        np.testing.assert_array_equal(pts[:, 1], s.y)
        conn = g["Connectivity"][:].reshape(s.nelem, s.ndp)
        ikle = s.ikle[:, [0, 2, 1, 3, 5, 4]] if s.ndp == 6 else s.ikle
        np.testing.assert_array_equal(conn, ikle - 1)
        np.testing.assert_array_equal(g["Steps/Values"][:], [t for t, _ in s.frames])
        names = f["anabranch"].attrs["point_data"].decode().split("\n")
        assert names == [v[:16].strip() for v in s.vars]
        for v, name in enumerate(names):
            ds = g["PointData"][name]
            assert ds.shape == (nf * s.npoin,) and ds.dtype.itemsize == s.rs, (name, ds.shape, ds.dtype)
            data = ds[:]
            for k, (_, vals) in enumerate(s.frames):
                np.testing.assert_array_equal(data[k * s.npoin:(k + 1) * s.npoin], vals[v], err_msg=f"{path.name}: {name} frame {k}")
        root = ET.parse(str(path) + ".xmf").getroot()
        steps = root.find("Domain/Grid").findall("Grid")
        assert len(steps) == nf
        for k, step in enumerate(steps):
            assert float(step.find("Time").get("Value")) == pytest.approx(float(s.frames[k][0]))
            topo = step.find("Topology")
            assert int(topo.get("NumberOfElements")) == s.nelem
            assert hdf_item(topo.find("DataItem"), f) == (s.nelem * s.ndp,)
            assert hdf_item(step.find("Geometry/DataItem"), f) == (s.npoin, 3)
            attrs = step.findall("Attribute")
            assert [a.get("Name") for a in attrs] == names
            for a in attrs:
                item = a.find("DataItem")
                assert item.get("Dimensions") == str(s.npoin)
                assert hyperslab(item, f) == (k * s.npoin, s.npoin, f"/VTKHDF/PointData/{a.get('Name')}")


VTK_TYPES = {"Float32": "<f4", "Float64": "<f8"}


def read_vts(path):
    """A StructuredGrid with raw appended data (UInt64 sizes), parsed here: (extent, arrays)."""
    raw = pathlib.Path(path).read_bytes()
    start = raw.index(b"<AppendedData")
    base = raw.index(b"_", start) + 1
    root = ET.fromstring(raw[:start].decode() + "</VTKFile>")
    assert root.get("type") == "StructuredGrid" and root.get("header_type") == "UInt64" and root.get("byte_order") == "LittleEndian"
    whole = root.find("StructuredGrid").get("WholeExtent")
    piece = root.find("StructuredGrid/Piece").get("Extent")
    assert whole == piece
    arrays = {}
    end = base
    for a in root.iter("DataArray"):
        off = base + int(a.get("offset"))
        n = int.from_bytes(raw[off:off + 8], "little")
        dt = np.dtype(VTK_TYPES[a.get("type")])
        arrays[a.get("Name")] = (a.get("type"), np.frombuffer(raw, dt, n // dt.itemsize, off + 8))
        end = max(end, off + 8 + n)
    assert raw[end:] == b"\n  </AppendedData>\n</VTKFile>\n", raw[end:]
    return [int(x) for x in whole.split()], arrays


def read_plot3d_canonical(path):
    """What `convert` writes as PLOT3D (plot3d.md): multi-grid 3D double little-endian with
    Fortran records, no IBLANK. Returns [(dims, [x, y, z] each [k, j, i])]."""
    data = pathlib.Path(path).read_bytes()
    at = 0

    def rec():
        nonlocal at
        n = int.from_bytes(data[at:at + 4], "little")
        body = data[at + 4:at + 4 + n]
        assert len(body) == n and int.from_bytes(data[at + 4 + n:at + 8 + n], "little") == n, (path, at)
        at += 8 + n
        return body
    nb = np.frombuffer(rec(), "<i4")
    assert nb.shape == (1,)
    dims = np.frombuffer(rec(), "<i4").reshape(-1, 3)
    assert dims.shape[0] == nb[0]
    out = []
    for ni, nj, nk in dims.tolist():
        xyz = np.frombuffer(rec(), "<f8")
        assert xyz.size == 3 * ni * nj * nk
        out.append(((ni, nj, nk), [c.reshape(nk, nj, ni) for c in xyz.reshape(3, -1)]))
    assert at == len(data)
    return out


def write_plot3d(path, grids, big=False, single=False, records=True, iblank=False, two_d=False, multi=True):
    """A PLOT3D grid of the variant asked, written here: grids [(dims, [x, y, z] each [k, j, i])]."""
    e = ">" if big else "<"
    rt, it = np.dtype(e + ("f4" if single else "f8")), np.dtype(e + "i4")
    out = bytearray()

    def rec(b):
        mark = np.array([len(b)], it).tobytes() if records else b""
        out.extend(mark + b + mark)
    if multi:
        rec(np.array([len(grids)], it).tobytes())
    rec(np.array([d[:2] if two_d else d for d, _ in grids], it).tobytes())
    for (ni, nj, nk), xyz in grids:
        body = b"".join(np.asarray(c, rt).ravel().tobytes() for c in xyz[: 2 if two_d else 3])
        if iblank:
            body += np.ones(ni * nj * nk, it).tobytes()
        rec(body)
    pathlib.Path(path).write_bytes(bytes(out))


def cgns_nodes(group, label):
    return [(name, group[name]) for name in group if isinstance(group[name], h5py.Group) and group[name].attrs.get("label") == label]


def node_data(node):
    return node[" data"][()]


# ---------------------------------------------------------------- the runs, made once


class Runs:
    """blocks.txt, its balance reports for 1 and 2 processes, and the solver's files, each
    made once for the module."""

    def __init__(self, folder):
        self.dir = folder
        self.made = {}
        (folder / "blocks.txt").write_text("# id ni nj nk\n" + "".join(f"{b} {ni} {nj} {nk}\n" for b, (ni, nj, nk) in BLOCKS))
        for n in (1, 2):
            proc = run([EXE, "balance", folder / "blocks.txt", "-n", n, "--json"])
            conftest.assert_status(proc, 0)
            (folder / f"a{n}.json").write_text(proc.stdout)
        assert any("range" in a for a in json.loads((folder / "a2.json").read_text())["assignment"]), "no block split"

    def solver(self, name, options="", n=2, frames=FRAMES):
        out = self.dir / name
        if name not in self.made:
            ok([SOLVER, self.dir / f"a{n}.json", out, frames, options], n=n)
            self.made[name] = out
        return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if not SOLVER or not EXE:
        pytest.skip("blocks_solver or anabranch not built")
    return Runs(tmp_path_factory.mktemp("runs"))


# ---------------------------------------------------------------- 1. block files, every path


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("precision", [4, 8])
@pytest.mark.parametrize("fortran", [False, True], ids=["records-none", "records-fortran"])
def test_raw_block_file_read_with_numpy_and_converted_to_hdf5_and_back(runs, tmp_path, precision, fortran):
    """The solver's raw file at 2 ranks, read by numpy; converted to HDF5 (read by h5py, its
    XDMF checked; no grid in a raw file) and back to raw (records none, the same precision)."""
    strategy = "aggregated" if fortran else "collective"
    records = "fortran" if fortran else "none"
    src = runs.solver(f"raw{precision}{int(fortran)}.dat", f"precision={precision} records={records} strategy={strategy}")
    check_raw(src, precision, fortran)
    ok([EXE, "convert", src, tmp_path / "c.h5"])
    check_block_h5(tmp_path / "c.h5", precision, grid=None)
    ok([EXE, "convert", tmp_path / "c.h5", tmp_path / "back.dat"], n=2)
    check_raw(tmp_path / "back.dat", precision, False)
    # A raw file converted straight to raw keeps its records or drops them as asked by nothing:
    # whatever it writes, the sidecar says which, and the values are the solver's.
    ok([EXE, "convert", src, tmp_path / "again.dat", "--to", "raw"])
    again = json.loads((tmp_path / "again.dat.json").read_text())
    check_raw(tmp_path / "again.dat", precision, again["records"] in ("fortran", True))


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("precision", [4, 8])
def test_hdf5_block_file_with_its_grid_read_with_h5py_and_its_xdmf(runs, tmp_path, precision):
    """The solver's HDF5 file (with the grid): datasets, values, grid and the XDMF sidecar's
    every Dimensions (nk nj ni) and hyperslab; converted to raw at 1 rank, read by numpy."""
    src = runs.solver(f"run{precision}.h5", f"precision={precision}")
    check_block_h5(src, precision)
    ok([EXE, "convert", src, tmp_path / "r.dat"])
    check_raw(tmp_path / "r.dat", precision, False)
    ok([EXE, "convert", tmp_path / "r.dat", tmp_path / "r.h5"], n=2)
    check_block_h5(tmp_path / "r.h5", precision, grid=None)


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("precision", [4, 8])
@pytest.mark.parametrize("source", ["h5", "raw"])
@pytest.mark.parametrize("frame", [None, 0])
def test_vtk_multiblock_extents_values_and_points(runs, tmp_path, precision, source, frame):
    """.vtm + one .vts per block: the blocks in order with their own files, each extent
    0..ni-1 0..nj-1 0..nk-1 (i first), the values of the frame asked in the file's
    precision, the points of the grid (or of the index space, blocks along x, without one)."""
    src = runs.solver(f"run{precision}.h5", f"precision={precision}") if source == "h5" else \
        runs.solver(f"raw{precision}1.dat", f"precision={precision} records=fortran strategy=aggregated")
    out = tmp_path / "v.vtm"
    ok([EXE, "convert", src, out] + ([] if frame is None else ["--frame", frame]))
    fr = FRAMES - 1 if frame is None else frame
    root = ET.parse(out).getroot()
    sets = root.findall("vtkMultiBlockDataSet/DataSet")
    assert [(d.get("index"), d.get("name"), d.get("file")) for d in sets] == \
        [(str(b), f"block {bid}", f"v/block_{bid}.vts") for b, (bid, _) in enumerate(BLOCKS)]
    assert float(root.find("FieldData/DataArray").text) == pytest.approx(0.1 * (fr + 1))
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == sorted(f"block_{bid}.vts" for bid, _ in BLOCKS)
    first = 0
    for bid, (ni, nj, nk) in BLOCKS:
        extent, arrays = read_vts(tmp_path / "v" / f"block_{bid}.vts")
        assert extent == [0, ni - 1, 0, nj - 1, 0, nk - 1], (bid, extent)
        want = expected(bid, (ni, nj, nk), fr + 1, precision)
        vtype = "Float32" if precision == 4 else "Float64"
        for v, name in enumerate(NAMES):
            t, a = arrays[name]
            assert t == vtype and a.size == ni * nj * nk, (bid, name, t, a.size)
            np.testing.assert_array_equal(a, want[v].ravel(), err_msg=f"block {bid} {name}")
        t, pts = arrays["Points"]
        assert t == vtype and pts.size == 3 * ni * nj * nk
        pts = pts.reshape(-1, 3)
        if source == "h5":
            xyz = solver_grid(bid, (ni, nj, nk))
        else:
            k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
            xyz = [i + first, j, k]
        for c in range(3):
            np.testing.assert_array_equal(pts[:, c], np.asarray(xyz[c], real(precision)).ravel(), err_msg=f"block {bid} axis {c}")
        first += ni * nj * nk
        assert arrays["TimeValue"][1][0] == pytest.approx(0.1 * (fr + 1))


def vtu_time(path):
    """TimeValue of a raw-appended VTU file (UInt64 sizes), parsed here."""
    raw = pathlib.Path(path).read_bytes()
    start = raw.index(b"<AppendedData")
    base = raw.index(b"_", start) + 1
    root = ET.fromstring(raw[:start].decode() + "</VTKFile>")
    a = next(x for x in root.iter("DataArray") if x.get("Name") == "TimeValue")
    off = base + int(a.get("offset"))
    return float(np.frombuffer(raw, VTK_TYPES[a.get("type")], 1, off + 8)[0])


@pytest.mark.formats
@pytest.mark.mpi
def test_a_negative_frame_counts_from_the_end(runs, data, tmp_path):
    """convert.md: `--frame K`, a negative K counts from the end (-1, the default, is the
    last): -2 of a 2-frame block file is frame 0, of r2d_gouttedo's 21 frames frame 19;
    a K before the first frame is refused (exit status 1) like one past the last."""
    src = runs.solver("run8.h5", "precision=8")
    ok([EXE, "convert", src, tmp_path / "m.vtm", "--frame", -2])
    assert float(ET.parse(tmp_path / "m.vtm").getroot().find("FieldData/DataArray").text) == pytest.approx(0.1), "vtm --frame -2"
    _, arrays = read_vts(tmp_path / "m" / f"block_{BLOCKS[0][0]}.vts")
    np.testing.assert_array_equal(arrays["rho"][1], expected(BLOCKS[0][0], BLOCKS[0][1], 1, 8)[0].ravel())
    s = slf.read(data / "r2d_gouttedo.slf")
    ok([EXE, "convert", data / "r2d_gouttedo.slf", tmp_path / "g.vtu", "--frame", -2])
    assert vtu_time(tmp_path / "g.vtu") == pytest.approx(float(s.frames[-2][0])), "vtu --frame -2"
    for args in ((src, tmp_path / "x.vtm", "--frame", -FRAMES - 1),
                 (data / "r2d_gouttedo.slf", tmp_path / "x.vtu", "--frame", -len(s.frames) - 1)):
        proc = run([EXE, "convert", *args])
        conftest.assert_status(proc, 1)
        assert not pathlib.Path(args[1]).exists()


def p3d_grid(b, dims):
    """A grid of distinct values per block and axis (a block or an axis put elsewhere shows)."""
    ni, nj, nk = dims
    k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
    return [1.5 * i + 10.0 * b + 0.25, 0.5 * j - b, 0.125 * k + 100.0 * b]


P3D = [(5, 4, 3), (7, 2, 6), (3, 3, 1)]


@pytest.mark.parametrize("variant", [
    {}, {"big": True}, {"single": True}, {"single": True, "big": True}, {"records": False}, {"records": False, "big": True, "single": True},
    {"iblank": True}, {"iblank": True, "big": True, "records": False}, {"two_d": True}, {"two_d": True, "single": True, "big": True},
    {"multi": False}, {"multi": False, "single": True, "records": False}],
    ids=lambda v: "-".join(f"{k}" for k in v) or "canonical")
@pytest.mark.formats
def test_plot3d_variants_to_hdf5_and_back_to_plot3d(ab, tmp_path, variant):
    """Every PLOT3D variant read into a block HDF5 file (h5py: each block's x, y, z where
    they belong, in the file's precision) and written back in the canonical form (numpy)."""
    dims = P3D[:1] if not variant.get("multi", True) else [(d[0], d[1], 1) for d in P3D] if variant.get("two_d") else P3D
    grids = []
    for b, d in enumerate(dims):
        xyz = p3d_grid(b, d)
        if variant.get("two_d"):
            xyz[2] = np.zeros_like(xyz[2])
        grids.append((d, xyz))
    write_plot3d(tmp_path / "g.xyz", grids, **variant)
    r = ab("convert", tmp_path / "g.xyz", tmp_path / "g.h5")
    conftest.assert_status(r, 0)
    precision = 4 if variant.get("single") else 8
    rt = real(precision)
    with h5py.File(tmp_path / "g.h5", "r") as f:
        assert f["blocks/ids"][:].tolist() == list(range(1, len(dims) + 1))
        assert [tuple(x) for x in f["blocks/dims"][:].tolist()] == dims
        off = f["blocks/offsets"][:]
        assert list(f["frames"]) == []
        for c, axis in enumerate("xyz"):
            ds = f[f"grid/{axis}"]
            assert ds.dtype.kind == "f" and ds.shape == (off[-1],)
            for b, (d, xyz) in enumerate(grids):
                ni, nj, nk = d
                np.testing.assert_array_equal(ds[off[b]:off[b + 1]].reshape(nk, nj, ni), np.asarray(xyz[c], rt).astype(ds.dtype),
                                              err_msg=f"block {b + 1} {axis}")
    check_block_xdmf(tmp_path / "g.h5", [(b + 1, d) for b, d in enumerate(dims)], 0, [], True)
    conftest.assert_status(ab("convert", tmp_path / "g.h5", tmp_path / "back.xyz"), 0)
    back = read_plot3d_canonical(tmp_path / "back.xyz")
    assert [d for d, _ in back] == dims
    for (d, xyz), (_, got) in zip(grids, back):
        for c in range(3):
            np.testing.assert_array_equal(got[c], np.asarray(xyz[c], rt).astype(np.float64))


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("precision", [4, 8])
def test_solver_grid_to_plot3d(runs, tmp_path, precision):
    src = runs.solver(f"run{precision}.h5", f"precision={precision}")
    ok([EXE, "convert", src, tmp_path / "g.xyz"])
    back = read_plot3d_canonical(tmp_path / "g.xyz")
    assert [d for d, _ in back] == [d for _, d in BLOCKS]
    for (bid, d), (_, got) in zip(BLOCKS, back):
        for c in range(3):
            np.testing.assert_array_equal(got[c], np.asarray(solver_grid(bid, d)[c], real(precision)).astype(np.float64))


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("precision", [4, 8])
def test_cgns_zones_hold_their_own_blocks_values(runs, tmp_path, precision):
    """CGNS (HDF5-based, read with h5py): one zone block_<id> per block, 3D blocks in a base
    of cell dimension 3 and flat ones in a base of cell dimension 2, each zone's size, grid,
    every frame's vertex solution in the solver's precision and Ordinal; the times. Then back
    to raw, read by numpy."""
    src = runs.solver(f"run{precision}.h5", f"precision={precision}")
    ok([EXE, "convert", src, tmp_path / "r.cgns"])
    seen = {}
    with h5py.File(tmp_path / "r.cgns", "r") as f:
        bases = cgns_nodes(f, b"CGNSBase_t")
        assert len(bases) == 2
        for _, base in bases:
            cell_dim, phys_dim = node_data(base).tolist()
            assert phys_dim == 3
            times = node_data(base["BaseIterativeData/TimeValues"])
            np.testing.assert_allclose(times, [0.1 * (k + 1) for k in range(FRAMES)])
            for zname, zone in cgns_nodes(base, b"Zone_t"):
                bid = int(zname.split("_")[1])
                b = [x for x, _ in BLOCKS].index(bid)
                ni, nj, nk = BLOCKS[b][1]
                assert cell_dim == (2 if nk == 1 else 3), (zname, cell_dim)
                size = node_data(zone).tolist()
                vert = [ni, nj] if nk == 1 else [ni, nj, nk]
                assert size == [vert, [x - 1 for x in vert], [0] * len(vert)], (zname, size)
                assert int(node_data(zone["Ordinal"])[0]) == b + 1
                shape = (nj, ni) if nk == 1 else (nk, nj, ni)
                xyz = solver_grid(bid, (ni, nj, nk))
                for c, axis in enumerate("XYZ"):
                    got = node_data(zone[f"GridCoordinates/Coordinate{axis}"])
                    assert got.shape == shape, (zname, axis, got.shape)
                    want = np.asarray(xyz[c], real(precision)).astype(np.float64).reshape(shape)
                    np.testing.assert_array_equal(got.astype(np.float64), want, err_msg=f"{zname} {axis}")
                pointers = node_data(zone["ZoneIterativeData/FlowSolutionPointers"]).tobytes().decode()
                sols = [p for p in (pointers[x:x + 32].strip() for x in range(0, len(pointers), 32)) if p]
                assert sols == [f"FlowSolution{k:06d}" for k in range(FRAMES)]
                for k, sol in enumerate(sols):
                    assert "GridLocation" not in zone[sol] or node_data(zone[sol]["GridLocation"]).tobytes().decode() == "Vertex"
                    want = expected(bid, (ni, nj, nk), k + 1, precision)
                    for v, name in enumerate(SIDS_NAMES):
                        got = node_data(zone[f"{sol}/{name}"])
                        assert got.shape == shape, (zname, sol, name, got.shape)
                        np.testing.assert_array_equal(got.astype(np.float64), want[v].astype(np.float64).reshape(shape),
                                                      err_msg=f"{zname} {sol} {name}")
                seen[bid] = zname
    assert sorted(seen) == sorted(b for b, _ in BLOCKS)
    ok([EXE, "convert", tmp_path / "r.cgns", tmp_path / "back.h5"])  # the CGNS file holds the solver's precision (R4 or R8)
    check_block_h5(tmp_path / "back.h5", precision)
    ok([EXE, "convert", tmp_path / "r.cgns", tmp_path / "back.dat"])
    side = json.loads((tmp_path / "back.dat.json").read_text())
    back_precision = side["precision"]  # the original's
    assert back_precision == precision
    dims = [d for _, d in BLOCKS]
    got = read_raw(tmp_path / "back.dat", dims, back_precision, False)
    assert len(got) == FRAMES
    for f in range(FRAMES):
        for b, (bid, d) in enumerate(BLOCKS):
            np.testing.assert_array_equal(got[f][b], expected(bid, d, f + 1, precision).astype(real(back_precision)))


# ---------------------------------------------------------------- 2. SERAFIN and TELEMAC parts to HDF5

BOWL = [f"r2d_bowl_vf_gb_{p}Precision_{e}Endian.slf" for p in ("Single", "Double") for e in ("Big", "Little")]


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("name,ranks", [(b, None) for b in BOWL] + [(BOWL[0], 2), (BOWL[3], 2)])
def test_serafin_to_vtkhdf_in_each_precision_and_byte_order(data, tmp_path, name, ranks):
    """Alone (HDF5's POSIX driver) and by 2 ranks (MPI-IO): h5py reads what numpy reads in the SERAFIN file."""
    s = slf.read(data / name)
    assert s.rs == (8 if "Double" in name else 4) and s.order == (">" if "Big" in name else "<")
    ok([EXE, "convert", data / name, tmp_path / "b.h5"], n=ranks)
    check_vtkhdf(tmp_path / "b.h5", s)


@pytest.mark.formats
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [None, 2])
def test_merge_of_telemac_parts_to_hdf5_holds_gretels_values(data, tmp_path, ranks):
    """TELEMAC's per-process results merged straight to HDF5 (alone, and by 2 ranks): value
    for value what gretel v8's merged SERAFIN file holds."""
    parts = V8 / "gretel-p3"
    if not (parts / "T2DRES-merged").exists():
        pytest.skip("TELEMAC v8 reference outputs absent")
    out = tmp_path / "m.h5"
    ok([EXE, "merge", parts / "T2DRES", "--geo", data / "geo_gouttedo.slf", "--cli", data / "geo_gouttedo.cli", "-o", out], n=ranks)
    check_vtkhdf(out, slf.read(parts / "T2DRES-merged"))


# ---------------------------------------------------------------- 3. outputs written over older, longer files


def masked(data):
    return STAMP.sub(b"0000-00-00T00:00:00Z", data)


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def hdf5_end(data):
    """The end-of-file address an HDF5 superblock (version 0 to 3, at byte 0) records."""
    assert data[:8] == HDF5_SIGNATURE
    at = 40 if data[8] in (0, 1) else 28
    return int.from_bytes(data[at:at + 8], "little")


def hdf5_tree(path):
    """Every group, dataset (shape, type, bytes) and attribute of an HDF5 file, time stamps masked."""
    out = {}

    def value(v):
        return masked(repr(np.asarray(v).tolist()).encode())

    def visit(name, obj):
        attrs = tuple(sorted((k, value(v)) for k, v in obj.attrs.items()))
        if isinstance(obj, h5py.Dataset):
            out[name] = ("dataset", obj.shape, obj.dtype.str, masked(np.asarray(obj[()]).tobytes()), attrs)
        else:
            out[name] = ("group", attrs)
    with h5py.File(path, "r") as f:
        visit("/", f)
        f.visititems(visit)
    return out


def writers(runs, data):
    """(name, argv, n, outputs relative to the cwd, inputs to make first)."""
    r = runs.dir
    solver = lambda n, opts, out: ([SOLVER, r / f"a{n}.json", out, FRAMES, opts], n)
    plan = V8 / "partel-split-p3" / "T2DGEO"
    gretel = V8 / "gretel-p3" / "T2DRES"
    merge = [EXE, "merge", gretel, "--geo", data / "geo_gouttedo.slf", "--cli", data / "geo_gouttedo.cli", "-o"]
    out = []
    for n in (1, 2):
        for s in ("collective", "independent", "aggregated"):
            for rec in ("none", "fortran"):
                if n == 1 and rec == "fortran" and s != "independent":
                    continue
                argv, nn = solver(n, f"strategy={s} records={rec} precision=4", "o.dat")
                out.append((f"solver-raw-n{n}-{s}-{rec}", argv, nn, ["o.dat", "o.dat.json"]))
        argv, nn = solver(n, "strategy=collective atomic=1", "o.dat")
        out.append((f"solver-raw-n{n}-atomic", argv, nn, ["o.dat", "o.dat.json"]))
        argv, nn = solver(n, "precision=8", "o.h5")
        out.append((f"solver-hdf5-n{n}", argv, nn, ["o.h5", "o.h5.xmf"]))
    h5 = r / "run8.h5"
    out += [
        ("convert-h5-raw", [EXE, "convert", h5, "o.dat"], None, ["o.dat", "o.dat.json"]),
        ("convert-h5-raw-n2", [EXE, "convert", h5, "o.dat"], 2, ["o.dat", "o.dat.json"]),
        ("convert-raw-h5", [EXE, "convert", r / "raw41.dat", "o.h5"], None, ["o.h5", "o.h5.xmf"]),
        ("convert-raw-h5-n2", [EXE, "convert", r / "raw41.dat", "o.h5"], 2, ["o.h5", "o.h5.xmf"]),
        ("convert-h5-vtm", [EXE, "convert", h5, "o.vtm"], None, ["o.vtm"] + [f"o/block_{b}.vts" for b, _ in BLOCKS]),
        ("convert-h5-xyz", [EXE, "convert", h5, "o.xyz"], None, ["o.xyz"]),
        ("convert-h5-cgns", [EXE, "convert", h5, "o.cgns"], None, ["o.cgns"]),
        ("convert-cgns-raw", [EXE, "convert", r / "over.cgns", "o.dat"], None, ["o.dat", "o.dat.json"]),
        ("convert-slf-slf", [EXE, "convert", data / "r2d_gouttedo.slf", "o.slf"], None, ["o.slf"]),
        ("convert-slf-slf-n2", [EXE, "convert", data / "r2d_gouttedo.slf", "o.slf"], 2, ["o.slf"]),
        ("convert-slf-h5", [EXE, "convert", data / "r2d_gouttedo.slf", "o.h5"], None, ["o.h5", "o.h5.xmf"]),
        ("convert-vtkhdf-slf", [EXE, "convert", r / "gouttedo.h5", "o.slf"], None, ["o.slf"]),
        ("convert-slf-vtu", [EXE, "convert", data / "r2d_gouttedo.slf", "o.vtu"], None, ["o.vtu"]),
        ("merge-slf", merge + ["o.slf"], None, ["o.slf"]),
        ("merge-slf-n2", merge + ["o.slf"], 2, ["o.slf"]),
        ("merge-h5", merge + ["o.h5"], None, ["o.h5", "o.h5.xmf"]),
        ("split", [EXE, "split", data / "r2d_gouttedo.slf", "--plan", plan, "-o", ".", "--name", "RES"], None,
         [f"RES00002-0000{p}" for p in range(3)]),
    ]
    return out


WRITERS = (["solver-raw-n1-collective-none", "solver-raw-n1-independent-none", "solver-raw-n1-independent-fortran",
            "solver-raw-n1-aggregated-none", "solver-raw-n2-atomic", "solver-hdf5-n1", "solver-hdf5-n2"]
           + [f"solver-raw-n2-{s}-{r}" for s in ("collective", "independent", "aggregated") for r in ("none", "fortran")]
           + ["convert-h5-raw", "convert-h5-raw-n2", "convert-raw-h5", "convert-raw-h5-n2", "convert-h5-vtm", "convert-h5-xyz",
              "convert-h5-cgns", "convert-cgns-raw", "convert-slf-slf", "convert-slf-slf-n2", "convert-slf-h5", "convert-vtkhdf-slf",
              "convert-slf-vtu", "merge-slf", "merge-slf-n2", "merge-h5", "split"])


@pytest.mark.mpi
@pytest.mark.parametrize("writer", WRITERS)
def test_an_output_over_an_older_longer_file_is_the_fresh_output(runs, data, tmp_path, writer):
    """Under every output name first a longer junk file; the output is then byte for byte
    (the time stamps of the provenance aside) what the same command writes in an empty
    folder, and a raw block file exactly its frames."""
    if not (V8 / "gretel-p3" / "T2DRES-merged").exists():
        pytest.skip("TELEMAC v8 reference outputs absent")
    table = {name: (argv, n, outs) for name, argv, n, outs in writers(runs, data)}
    argv, n, outs = table[writer]
    if "cgns" in writer and not (pathlib.Path(EXE).parent / "anabranch-cgns").exists():
        pytest.skip("built without CGNS")
    runs.solver("run8.h5", "precision=8")
    runs.solver("raw41.dat", "precision=4 records=fortran strategy=aggregated")
    if writer == "convert-cgns-raw" and not (runs.dir / "over.cgns").exists():
        ok([EXE, "convert", runs.dir / "run8.h5", runs.dir / "over.cgns"])
    if writer == "convert-vtkhdf-slf" and not (runs.dir / "gouttedo.h5").exists():
        ok([EXE, "convert", data / "r2d_gouttedo.slf", runs.dir / "gouttedo.h5"])
    fresh, old = tmp_path / "fresh", tmp_path / "old"
    fresh.mkdir()
    old.mkdir()
    ok(argv, n, cwd=fresh)
    made = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
    assert made == sorted(outs), made
    for rel in outs:
        size = (fresh / rel).stat().st_size
        (old / rel).parent.mkdir(parents=True, exist_ok=True)
        (old / rel).write_bytes(bytes(range(256)) * (size // 128 + 64))  # twice as long and more
    ok(argv, n, cwd=old)
    for rel in outs:
        a, b = (fresh / rel).read_bytes(), (old / rel).read_bytes()
        assert len(b) == len(a), f"{writer}: {rel} is {len(b)} bytes over an older file, {len(a)} fresh"
        if a.startswith(HDF5_SIGNATURE):
            # HDF5 stamps its objects with binary times: the file's end as its superblock
            # says, and everything h5py reads, instead of the bytes.
            end = hdf5_end(b)
            assert end == hdf5_end(a) <= len(b), (writer, rel, end, hdf5_end(a), len(b))
            assert b[end:] == bytes(len(b) - end), f"{writer}: {rel} holds other bytes than zeros past HDF5's end of file ({end})"
            assert hdf5_tree(old / rel) == hdf5_tree(fresh / rel), (writer, rel)
        else:
            assert masked(b) == masked(a), f"{writer}: {rel} differs from the fresh output (first at byte " \
                f"{next(i for i, (x, y) in enumerate(zip(masked(a), masked(b))) if x != y)})"
    if writer.startswith("solver-raw"):
        side = json.loads((old / "o.dat.json").read_text())
        fortran, precision = writer.endswith("fortran"), 8 if writer.endswith("atomic") else 4
        assert (old / "o.dat").stat().st_size == FRAMES * raw_frame_bytes([d for _, d in BLOCKS], precision, fortran)
        check_raw(old / "o.dat", precision, fortran)
        assert side["frames"] == FRAMES


# ---------------------------------------------------------------- 4. block assignments at their limits


def assignment(processes, second_range, extra=()):
    """Block 1 (4 x 3 x 2) in two pieces cut along i (the second piece's range given), block 2 whole."""
    pieces = [{"block": 1, "process": 0, "range": [[0, 2], [0, 3], [0, 2]]},
              {"block": 1, "process": processes - 1, "range": second_range},
              {"block": 2, "process": processes - 1}] + list(extra)
    return {"processes": processes, "grid": [{"id": 1, "cells": [4, 3, 2]}, {"id": 2, "cells": [3, 5, 1]}], "assignment": pieces}


RANGES = {
    "i-one-past-the-end": ([[2, 5], [0, 3], [0, 2]], "range [2, 5) in direction i is empty or outside 0..4"),
    "j-one-past-the-end": ([[2, 4], [0, 4], [0, 2]], "range [0, 4) in direction j is empty or outside 0..3"),
    "k-negative-start": ([[2, 4], [0, 3], [-1, 2]], "range [-1, 2) in direction k is empty or outside 0..2"),
    "zero-cells": ([[2, 2], [0, 3], [0, 2]], "range [2, 2) in direction i is empty or outside 0..4"),
    "one-short": ([[2, 3], [0, 3], [0, 2]], "block 1: the pieces hold 18 of its 24 points"),
    "overlapping": ([[1, 4], [0, 3], [0, 2]], "block 1: point (1, 0, 0) is held by two pieces"),
    "exactly-the-end": ([[2, 4], [0, 3], [0, 2]], None),
}


@pytest.mark.mpi
@pytest.mark.parametrize("case,ranks", [(c, 1) for c in RANGES] +
                         [(c, 2) for c in ("i-one-past-the-end", "zero-cells", "one-short", "exactly-the-end")])
@pytest.mark.formats
def test_a_piece_range_at_the_block_limits(tmp_path, ranks, case):
    """Refused with exit status 1 and a line naming the piece's range or the block's cover,
    nothing written; the range ending exactly at the block's end is accepted and written.
    One process runs the solver alone (MPI's singleton start), two under mpiexec."""
    if not SOLVER:
        pytest.skip("blocks_solver not built")
    rng, message = RANGES[case]
    (tmp_path / "a.json").write_text(json.dumps(assignment(ranks, rng)))
    out = tmp_path / "o.dat"
    proc = run([SOLVER, tmp_path / "a.json", out, 1, "precision=8"], n=None if ranks == 1 else ranks)
    if message is None:
        conftest.assert_status(proc, 0)
        check_raw(out, 8, False, frames=1, blocks=[(1, (4, 3, 2)), (2, (3, 5, 1))])
        return
    conftest.assert_status(proc, 1)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("blocks_solver: ")]
    assert 1 <= len(lines) <= ranks and all(message in l for l in lines), (case, proc.stderr)
    assert not out.exists() and not pathlib.Path(str(out) + ".json").exists()


@pytest.mark.formats
@pytest.mark.parametrize("case", ["i-one-past-the-end", "k-negative-start", "zero-cells", "exactly-the-end"])
def test_a_restart_reads_with_a_piece_range_at_the_block_limits(tmp_path, case):
    """The reader checks the ranges too: a restart from a file written with the whole blocks,
    read with a piece past the block's end or empty, is refused (exit status 1, one line
    naming the range) before anything is written; ending exactly at the block's end, it
    gives the frames of an uninterrupted run."""
    if not SOLVER:
        pytest.skip("blocks_solver not built")
    blocks = [(1, (4, 3, 2)), (2, (3, 5, 1))]
    (tmp_path / "whole.txt").write_text("".join(f"{b} {ni} {nj} {nk}\n" for b, (ni, nj, nk) in blocks))
    ok([SOLVER, tmp_path / "whole.txt", tmp_path / "first.dat", 2])
    rng, message = RANGES[case]
    (tmp_path / "a.json").write_text(json.dumps(assignment(1, rng)))
    out = tmp_path / "again.dat"
    proc = run([SOLVER, tmp_path / "a.json", out, 3, "", tmp_path / "first.dat", 0])
    if message is None:
        conftest.assert_status(proc, 0)
        check_raw(out, 8, False, frames=3, blocks=blocks)
        return
    conftest.assert_status(proc, 1)
    lines = [l for l in proc.stderr.splitlines() if l.startswith("blocks_solver: ")]
    assert len(lines) == 1 and message in lines[0] and "reader" in lines[0], proc.stderr
    assert not out.exists() and not pathlib.Path(str(out) + ".json").exists()


# ---------------------------------------------------------------- 5. a write that fails part-way

FSIZE_BLOCKS = "1 40 30 20\n2 30 20 10\n"  # 30000 points: a frame of 1.2 MB in doubles


@pytest.mark.mpi
@pytest.mark.faults
@pytest.mark.parametrize("ranks,options", [
    (1, "strategy=collective"), (1, "strategy=independent records=fortran precision=4"),
    (2, "strategy=independent precision=4"), (2, "strategy=aggregated records=fortran"), (2, "strategy=collective records=fortran"),
    (2, "strategy=collective atomic=1"), (2, "format=hdf5")])
@pytest.mark.formats
def test_a_file_size_limit_leaves_exactly_the_complete_frames(ab, tmp_path, ranks, options):
    """The limit (RLIMIT_FSIZE, set in each rank: the launcher's own files would hit it)
    falls inside frame 3: exit status 1, one line per rank naming the limit; the raw file is
    exactly frames 0-1, the bytes of an uninterrupted run's, its sidecar listing those two;
    an HDF5 file is removed (blocks-hdf5.md), and so is a raw file written with atomic=1,
    its temporary included (blocks-raw.md, reliability.md)."""
    if not SOLVER:
        pytest.skip("blocks_solver not built")
    (tmp_path / "big.txt").write_text(FSIZE_BLOCKS)
    for n in {1, ranks}:
        proc = run([EXE, "balance", tmp_path / "big.txt", "-n", n, "--json"])
        conftest.assert_status(proc, 0)
        (tmp_path / f"a{n}.json").write_text(proc.stdout)
    h5 = "hdf5" in options
    whole = tmp_path / ("whole.h5" if h5 else "whole.dat")
    ok([SOLVER, tmp_path / "a1.json", whole, 4, options])  # alone: no limit, no launcher
    precision = 4 if "precision=4" in options else 8
    fortran = "fortran" in options
    fb = raw_frame_bytes([(40, 30, 20), (30, 20, 10)], precision, fortran)
    limit = int(2.5 * fb) + (4096 if h5 else 0)
    out = tmp_path / ("cut.h5" if h5 else "cut.dat")
    wrap = [sys.executable, "-c", "import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]),) * 2); "
            "os.execv(sys.argv[2], sys.argv[2:])", limit]
    # Open MPI's shared memory in System V segments: its file-backed ones fail under the limit,
    # every rank then sends a help message, and Open MPI 4.1's launcher sometimes crashes
    # gathering them (open-mpi/ompi#8356; test_faults.py does the same)
    proc = run(wrap + [SOLVER, tmp_path / f"a{ranks}.json", out, 4, options], n=ranks, env={"OMPI_MCA_shmem": "sysv"})
    conftest.assert_status(proc, 1)
    assert not conftest.CRASH.search(proc.stdout + proc.stderr), proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.startswith("blocks_solver: ")]
    assert 1 <= len(lines) <= ranks and all("File too large" in l or "file-size limit" in l for l in lines), proc.stderr
    if h5 or "atomic=1" in options:
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("cut")] == []
        return
    data = out.read_bytes()
    assert len(data) == 2 * fb, (len(data), fb)
    assert data == whole.read_bytes()[:2 * fb]
    side = json.loads(pathlib.Path(str(out) + ".json").read_text())
    assert side["frames"] == 2 and side["frame_bytes"] == fb and side["times"] == pytest.approx([0.1, 0.2])
    got = read_raw(out, [(40, 30, 20), (30, 20, 10)], precision, fortran)
    np.testing.assert_array_equal(got[1][1], expected(2, (30, 20, 10), 2, precision))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("cut")) == ["cut.dat", "cut.dat.json"]
