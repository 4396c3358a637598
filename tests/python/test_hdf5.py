"""HDF5 output (VTKHDF + XDMF sidecar + provenance), `convert` and `info` on HDF5: round trips
to the same SERAFIN bytes, files written at 1-4 ranks identical through h5py, values checked
against an independent SERAFIN reader, the record-limit route, and ParaView's own readers
when ParaView's Python module is installed."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import conftest
import slf
from conftest import EXE, assert_status, fixture_files

FILES = fixture_files()
h5py = pytest.importorskip("h5py")


def mpirun(n, *args, env=None):
    proc = conftest.mpirun(n, EXE, *args, timeout=300, env=env)
    conftest.assert_status(proc, 0)
    return proc


def expected_serafin_bytes(ab, path):
    """The file's bytes without a stray trailing byte (reported and dropped by every reader)."""
    info = ab("info", "--json", path).json()[0]
    data = pathlib.Path(path).read_bytes()
    return data[: len(data) - info["trailing_bytes"]] if info["integrity"] == "stray trailing byte" else data


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_serafin_hdf5_serafin_gives_the_same_bytes(ab, tmp_path, path):
    h5 = tmp_path / "x.h5"
    r = ab("convert", path, h5)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "x.h5.xmf").exists()
    r = ab("convert", h5, tmp_path / "back.slf")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.slf").read_bytes() == expected_serafin_bytes(ab, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.slf", "x.h5", "x.h5.xmf"]  # no temporary left


def check_against_serafin(h5path, s):
    """The VTKHDF datasets hold what the SERAFIN file s holds."""
    with h5py.File(h5path, "r") as f:
        g = f["VTKHDF"]
        assert list(g.attrs["Version"]) == [2, 0]
        assert g.attrs["Type"] == b"UnstructuredGrid"
        assert g["NumberOfPoints"][0] == s.npoin and g["NumberOfCells"][0] == s.nelem
        assert g["NumberOfConnectivityIds"][0] == s.nelem * s.ndp
        np.testing.assert_array_equal(g["Connectivity"][:], vtk_order(s.ikle).reshape(-1) - 1)
        np.testing.assert_array_equal(g["Offsets"][:], np.arange(s.nelem + 1) * s.ndp)
        assert set(g["Types"][:]) == {5 if s.ndp == 3 else 13}
        pts = g["Points"][:]
        assert pts.shape == (s.npoin, 3) and pts.dtype.itemsize == s.rs
        np.testing.assert_array_equal(pts[:, 0], s.x)
        np.testing.assert_array_equal(pts[:, 1], s.y)
        steps = g["Steps"]
        assert steps.attrs["NSteps"] == len(s.frames)
        np.testing.assert_array_equal(steps["Values"][:], [t for t, _ in s.frames])
        names = f["anabranch"].attrs["point_data"].decode().split("\n") if s.vars else []
        assert len(names) == len(s.vars)
        for v, name in enumerate(names):
            assert name == s.vars[v][:16].strip()
            data = g["PointData"][name][:]
            assert data.size == s.npoin * len(s.frames)
            np.testing.assert_array_equal(steps["PointDataOffsets"][name][:], np.arange(len(s.frames)) * s.npoin)
            for k, (_, vals) in enumerate(s.frames):
                np.testing.assert_array_equal(data[k * s.npoin:(k + 1) * s.npoin], vals[v])
        if s.iparam[6] > 1 and s.frames:  # 3D: Z is the first frame's elevation
            np.testing.assert_array_equal(pts[:, 2], s.frames[0][1][0])
            assert_wedges_face_outwards(pts.astype(np.float64), g["Connectivity"][:].reshape(-1, 6))
        np.testing.assert_array_equal(f["anabranch"]["IPOBO"][:], s.ipobo)
        assert bytes(f["anabranch"].attrs["title"]) == s.title


@pytest.mark.parametrize("name", ["r2d_gouttedo.slf", "r3d_gouttedo.slf", "f2d_nestor3.slf"])
def test_vtkhdf_layout_holds_the_serafin_contents(ab, data, tmp_path, name):
    h5 = tmp_path / "x.h5"
    assert ab("convert", data / name, h5).returncode == 0
    check_against_serafin(h5, slf.read(data / name))


# What the file holds at 1 to 4 ranks (a format round trip: run on one node, Open MPI; on 2
# cores MPICH's spinning waits make its 3- and 4-rank HDF5 runs take 10 s each).
@pytest.mark.mpi
@pytest.mark.formats
@pytest.mark.parametrize("name", ["r2d_gouttedo.slf", "r3d_gouttedo.slf"])
def test_written_at_1_to_4_ranks_reads_back_identically(ab, data, tmp_path, name):
    s = slf.read(data / name)
    files = []
    for n in (1, 2, 3, 4):
        out = tmp_path / f"n{n}.h5"
        mpirun(n, "convert", data / name, out)
        check_against_serafin(out, s)
        files.append(out)
    def contents(path):
        out = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda k, o: out.__setitem__(k, o[()]) if isinstance(o, h5py.Dataset) else None)
        return out
    first = contents(files[0])
    for other in files[1:]:
        c = contents(other)
        assert c.keys() == first.keys()
        for k in first:
            np.testing.assert_array_equal(c[k], first[k], err_msg=f"{other.name}: {k}")
    # And back to SERAFIN from a 3-rank run, on 1 to 3 ranks (each copying its share of the
    # mesh from the HDF5 file's arrays): the same bytes.
    expected = expected_serafin_bytes(ab, data / name)
    for n in (1, 2, 3):
        mpirun(n, "convert", files[2], tmp_path / f"back{n}.slf")
        assert (tmp_path / f"back{n}.slf").read_bytes() == expected, n


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["r2d_gouttedo.slf", "r3d_gouttedo.slf"])
def test_a_cgns_mesh_result_back_to_serafin_at_1_to_3_ranks(ab, data, tmp_path, name):
    """A CGNS input's mesh is read by rank 0 (the others copy an HDF5 or SERAFIN input's in
    shares): the source's bytes alone and at every rank count."""
    assert_status(ab("convert", data / name, tmp_path / "m.cgns"), 0)
    expected = expected_serafin_bytes(ab, data / name)
    assert_status(ab("convert", tmp_path / "m.cgns", tmp_path / "back0.slf"), 0)
    assert (tmp_path / "back0.slf").read_bytes() == expected
    for n in (1, 2, 3):
        assert_status(mpirun(n, "convert", tmp_path / "m.cgns", tmp_path / f"back{n}.slf"), 0)
        assert (tmp_path / f"back{n}.slf").read_bytes() == expected, n


@pytest.mark.mpi
def test_provenance_names_program_run_and_inputs(ab, data, tmp_path):
    out = tmp_path / "p.h5"
    mpirun(3, "convert", data / "r2d_gouttedo.slf", out)
    with h5py.File(out, "r") as f:
        p = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["anabranch/provenance"].attrs.items()}
    for key in ("program", "version", "git_revision", "command_line", "hosts", "node_count", "mpi_library", "compiler", "os",
                "start_time", "inputs", "strategy", "hdf5_library"):
        assert p.get(key), key
    assert p["ranks"] == "3" and p["node_count"] == "1" and p["strategy"] == "hdf5"
    assert "convert" in p["command_line"] and str(out) in p["command_line"]
    inputs = json.loads(p["inputs"])
    src = data / "r2d_gouttedo.slf"
    assert inputs == [{"path": str(src), "bytes": src.stat().st_size, "crc32": "%08x" % zlib.crc32(src.read_bytes())}]
    r = ab("info", out)
    assert r.returncode == 0, r.stderr
    assert "HDF5 (VTKHDF 2.0)" in r.stdout and "provenance" in r.stdout and "crc32" in r.stdout
    j = ab("info", "--json", "--stats", "--check", out).json()[0]
    ref = ab("info", "--json", "--stats", data / "r2d_gouttedo.slf").json()[0]
    assert j["format"] == "hdf5" and j["checked"]
    for key in ("nelem", "npoin", "ndp", "variables", "times", "iparam", "date", "precision", "byte_order", "stats"):
        assert j[key] == ref[key], key


@pytest.mark.mpi
def test_forced_record_limit_refuses_serafin_and_hdf5_takes_the_mesh(ab, tmp_path):
    assert ab("generate", "--elements", "4000", "-o", tmp_path / "m.slf").returncode == 0
    env = {"ANABRANCH_SERAFIN_RECORD_LIMIT": "4096"}  # X of ~2000 single-precision nodes is 8 KB
    assert ab("convert", tmp_path / "m.slf", tmp_path / "m.h5").returncode == 0
    proc = conftest.run([EXE, "convert", tmp_path / "m.h5", tmp_path / "big.slf"], capture_output=True, text=True,
                        env=dict(os.environ, **env))
    conftest.assert_status(proc, 1, "record limit", "HDF5")  # a refused output
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert not any(p.name.startswith("big.slf") for p in tmp_path.iterdir())
    mpirun(3, "convert", tmp_path / "m.slf", tmp_path / "m3.h5", env=env)  # the limit is SERAFIN's only
    check_against_serafin(tmp_path / "m3.h5", slf.read(tmp_path / "m.slf"))


def read_vtu(path):
    """Arrays of a raw-appended VTU file, parsed independently of anabranch."""
    raw = pathlib.Path(path).read_bytes()
    start = raw.index(b"<AppendedData")
    base = raw.index(b"_", start) + 1
    root = ET.fromstring(raw[:start].decode() + "</VTKFile>")
    types = {"Float32": "<f4", "Float64": "<f8", "Int64": "<i8", "UInt8": "u1"}
    arrays = {}
    for a in root.iter("DataArray"):
        off = base + int(a.get("offset"))
        n = struct.unpack("<Q", raw[off:off + 8])[0]
        arrays[a.get("Name")] = np.frombuffer(raw[off + 8:off + 8 + n], dtype=types[a.get("type")])
    piece = next(root.iter("Piece"))
    return arrays, int(piece.get("NumberOfPoints")), int(piece.get("NumberOfCells"))


def vtk_order(ikle):
    """SERAFIN elements in VTK's node order: prisms have the second and third nodes of each
    triangle swapped (VTK's wedge wants its first triangle facing away from the second)."""
    return ikle[:, [0, 2, 1, 3, 5, 4]] if ikle.shape[1] == 6 else ikle


def assert_wedges_face_outwards(points, cells):
    """VTK's rule for wedges: the normal of (p0, p1, p2) by the right-hand rule points away
    from the triangle (p3, p4, p5). Inside-out wedges show as black, inverted cells."""
    p = points[cells]
    normal = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    towards_top = p[:, 3:].mean(axis=1) - p[:, :3].mean(axis=1)
    facing = np.einsum("ij,ij->i", normal, towards_top)
    assert (facing <= 0).all() and (facing < 0).mean() > 0.5  # flat (dry) prisms have no side


@pytest.mark.parametrize("name", ["r2d_gouttedo.slf", "r3d_gouttedo.slf"])
def test_vtu_holds_one_frame(ab, data, tmp_path, name):
    s = slf.read(data / name)
    assert ab("convert", data / name, tmp_path / "a.h5").returncode == 0
    r = ab("convert", tmp_path / "a.h5", tmp_path / "a.vtu", "--frame", "2")
    assert r.returncode == 0, r.stderr
    arrays, npts, ncells = read_vtu(tmp_path / "a.vtu")
    assert (npts, ncells) == (s.npoin, s.nelem)
    assert arrays["TimeValue"][0] == s.frames[2][0]
    for v, var in enumerate(s.vars):
        np.testing.assert_array_equal(arrays[var[:16].strip()], s.frames[2][1][v])
    np.testing.assert_array_equal(arrays["connectivity"], vtk_order(s.ikle).reshape(-1) - 1)
    np.testing.assert_array_equal(arrays["Points"].reshape(-1, 3)[:, 0], s.x)
    if s.ndp == 6:
        assert_wedges_face_outwards(arrays["Points"].reshape(-1, 3), arrays["connectivity"].reshape(-1, 6))
    conftest.assert_status(ab("convert", data / name, tmp_path / "a.vtu", "--frame", "999"), 1, "--frame 999: ", "holds")


def test_convert_refuses_an_unknown_strategy(ab, data, tmp_path):
    r = ab("convert", data / "geo_gouttedo.slf", tmp_path / "out.slf", "--strategy", "nope")
    assert_status(r, 1, "nope")
    assert not (tmp_path / "out.slf").exists()


def test_bad_inputs_get_one_line_errors(ab, data, tmp_path):
    assert ab("convert", data / "r2d_gouttedo.slf", tmp_path / "a.h5").returncode == 0
    raw = (tmp_path / "a.h5").read_bytes()
    (tmp_path / "torn.h5").write_bytes(raw[: len(raw) // 3])
    (tmp_path / "junk.h5").write_bytes(raw[:8] + b"\0" * 4000)
    for bad in ("torn.h5", "junk.h5"):
        for cmd in (("info",), ("convert",)):
            args = [*cmd, tmp_path / bad] + ([tmp_path / "out.slf"] if cmd == ("convert",) else [])
            r = ab(*args)
            conftest.assert_status(r, 1, bad)
            assert r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "out.slf").exists()
    r = ab("convert", data / "r2d_gouttedo.slf", tmp_path / "a.unknown")
    conftest.assert_status(r, 1, "--to")  # a refused output
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f["x"] = [1, 2, 3]
    r = ab("info", tmp_path / "plain.h5")
    conftest.assert_status(r, 1, "not a VTKHDF file")


def test_datasets_cut_short_are_damage_not_fewer_frames(ab, data, tmp_path):
    """A dataset holding fewer values than NSteps announce: every reader refuses the file with
    one line naming the dataset (it used to read as a shorter result)."""
    s = slf.read(data / "r2d_gouttedo.slf")
    assert ab("convert", data / "r2d_gouttedo.slf", tmp_path / "a.h5").returncode == 0
    var = s.vars[1][:16].strip()
    cuts = {f"/VTKHDF/PointData/{var}": (len(s.frames) - 2) * s.npoin + 7, "/VTKHDF/Steps/Values": len(s.frames) - 1}
    for k, (dataset, length) in enumerate(cuts.items()):
        bad = tmp_path / f"cut{k}.h5"
        shutil.copy(tmp_path / "a.h5", bad)
        with h5py.File(bad, "r+") as f:
            f[dataset].resize((length,))
        for args in (("info", "--check", bad), ("convert", bad, tmp_path / "out.slf"), ("info", "--stats", bad)):
            r = ab(*args)
            conftest.assert_status(r, 1)
            assert r.stderr.count("\n") == 1 and bad.name in r.stderr and dataset in r.stderr and "damaged" in r.stderr, r.stderr
        assert not (tmp_path / "out.slf").exists()


PARAVIEW_CHECK = r"""
import json, sys
from paraview import simple, servermanager as sm
path, kind, t = sys.argv[1], sys.argv[2], float(sys.argv[3])
r = {"vtkhdf": lambda: simple.VTKHDFReader(FileName=[path]),
     "vtu": lambda: simple.XMLUnstructuredGridReader(FileName=[path])}[kind]()
times = list(getattr(r, "TimestepValues", None) or [])
r.UpdatePipeline(t)
d = sm.Fetch(r)
if d.IsA("vtkMultiBlockDataSet"):
    d = d.GetBlock(0)
pd = d.GetPointData()
a = pd.GetArray(sys.argv[4])
print(json.dumps({"points": d.GetNumberOfPoints(), "cells": d.GetNumberOfCells(), "times": times,
                  "value": a.GetValue(int(sys.argv[5]))}))
"""


def paraview_python():
    for exe in ("/usr/bin/python3", shutil.which("pvpython") or ""):
        if exe and subprocess.run([exe, "-c", "import paraview.simple"], capture_output=True).returncode == 0:
            return exe
    return None


def test_paraview_opens_vtkhdf_xdmf_and_vtu(ab, data, tmp_path):
    py = paraview_python()
    if not py:
        pytest.skip("ParaView's Python module is not installed (Debian: python3-paraview)")
    s = slf.read(data / "r2d_gouttedo.slf")
    # ParaView 5.11 knows VTKHDF files by the .hdf extension.
    assert ab("convert", data / "r2d_gouttedo.slf", tmp_path / "g.hdf").returncode == 0
    assert ab("convert", tmp_path / "g.hdf", tmp_path / "g.vtu", "--frame", "4").returncode == 0
    # Compressed (deflate, which ParaView's HDF5 has): the mesh losslessly, the values within 1e-4 of the range.
    assert ab("convert", data / "r2d_gouttedo.slf", tmp_path / "c.hdf", "--compress", "rel=1e-4").returncode == 0
    script = tmp_path / "check.py"
    script.write_text(PARAVIEW_CHECK)
    var, node = s.vars[0][:16].strip(), 123
    # (the XDMF sidecars: test_paraview.py, with each of ParaView's three XDMF readers)
    cases = [("g.hdf", "vtkhdf", 0, 0), ("g.vtu", "vtu", 0, 4), ("c.hdf", "vtkhdf", 0, 0)]
    for name, kind, t, frame in cases:
        proc = subprocess.run([py, script, tmp_path / name, kind, repr(float(t)), var, str(node)], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert (got["points"], got["cells"]) == (s.npoin, s.nelem), kind
        want = np.asarray(s.frames[frame][1][0], dtype=np.float64)
        tol = 1e-4 * (want.max() - want.min()) if name == "c.hdf" else 1e-6 * abs(want[node])
        assert abs(got["value"] - want[node]) <= tol, kind


def test_split_from_hdf5_restarts_on_another_process_count(ab, data, tmp_path):
    """A run written as HDF5 restarts on 3 processes: split gives the parts split gives from SERAFIN."""
    assert ab("convert", data / "r2d_gouttedo.slf", tmp_path / "r.h5").returncode == 0
    (tmp_path / "parts").mkdir()
    r = ab("partition", data / "geo_gouttedo.slf", "--cli", data / "geo_gouttedo.cli", "-n", 3, "-o", tmp_path / "parts")
    assert r.returncode == 0, r.stderr
    for src, out in (("r.h5", "a"), (data / "r2d_gouttedo.slf", "b")):
        (tmp_path / out).mkdir()
        r = ab("split", tmp_path / src, "--plan", tmp_path / "parts/geo_gouttedo.slf", "-o", tmp_path / out, "--name", "RES")
        assert r.returncode == 0, r.stderr
    for p in range(3):
        name = f"RES00002-0000{p}"
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [f"RES00002-0000{p}" for p in range(3)]


def test_a_file_behind_a_user_block_is_read_as_hdf5(ab, tmp_path):
    """HDF5 lets a file start with a user block (512 bytes, or a power of two beyond): the
    signature is then at byte 512, and the file is still recognised and read."""
    import h5py
    assert ab("generate", "-n", 2000, "--frames", 2, "-o", tmp_path / "m.slf").returncode == 0
    assert ab("convert", tmp_path / "m.slf", tmp_path / "m.h5").returncode == 0
    with h5py.File(tmp_path / "m.h5", "r") as a, h5py.File(tmp_path / "u.h5", "w", userblock_size=512) as b:
        for k, v in a.attrs.items():
            b.attrs[k] = v
        for name in a:
            a.copy(a[name], b, name=name)
    assert (tmp_path / "u.h5").read_bytes()[512:520] == b"\x89HDF\r\n\x1a\n"
    r = ab("convert", tmp_path / "u.h5", tmp_path / "back.slf")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.slf").read_bytes() == (tmp_path / "m.slf").read_bytes()


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [2, 3])
def test_double_precision_written_by_several_ranks_reads_back_the_same(ab, tmp_path, ranks):
    from conftest import EXE, mpirun
    assert ab("generate", "-n", 3000, "--frames", 2, "--precision", "double", "-o", tmp_path / "d.slf").returncode == 0
    assert ab("partition", tmp_path / "d.slf", "-n", ranks, "-o", tmp_path / "p").returncode == 0
    proc = mpirun(ranks, EXE, "merge", tmp_path / "p" / "d.slf", "--geo", tmp_path / "d.slf", "--strategy", "hdf5", "-o", tmp_path / "d.h5")
    assert proc.returncode == 0, proc.stderr
    assert ab("merge", tmp_path / "p" / "d.slf", "--geo", tmp_path / "d.slf", "-o", tmp_path / "serial.slf").returncode == 0
    assert ab("convert", tmp_path / "d.h5", tmp_path / "back.slf").returncode == 0
    assert (tmp_path / "back.slf").read_bytes() == (tmp_path / "serial.slf").read_bytes()


def test_vtu_of_a_file_without_frames_is_refused(ab, tmp_path):
    assert ab("generate", "-n", 2000, "--frames", 0, "-o", tmp_path / "g.slf").returncode == 0
    r = ab("convert", tmp_path / "g.slf", tmp_path / "g.vtu")
    conftest.assert_status(r, 1, "g.slf holds no frame to write")
    assert not (tmp_path / "g.vtu").exists()


@pytest.mark.parametrize("out", ["out.slf", "out.vtu", "out.h5", "back.slf"])
def test_convert_alone_starts_no_mpi(ab, data, tmp_path, out):
    """Run alone (no launcher), every output is written without MPI, whose start-up costs
    more than converting a small file (HDF5 through its POSIX driver): with Open MPI told
    to use a point-to-point layer that does not exist, MPI_Init would fail, and the
    conversion succeeds. A command that does start MPI alone (PT-Scotch's partitioner) is
    stopped by the same setting."""
    if "mpich" in os.environ.get("AB_MPIEXEC", ""):
        pytest.skip("the check is Open MPI's (this tree is MPICH's)")
    src = data / "r2d_gouttedo.slf"
    if out == "back.slf":  # from HDF5
        assert ab("convert", src, tmp_path / "in.h5").returncode == 0
        src = tmp_path / "in.h5"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))}
    env["OMPI_MCA_pml"] = "no-such-layer"

    def run(*args):
        return conftest.run([EXE, *map(str, args)], capture_output=True, text=True, env=env, timeout=60)

    r = run("convert", src, tmp_path / out)
    assert r.returncode == 0, r.stderr
    if os.environ.get("AB_HAVE_PTSCOTCH", "1") == "1":
        # MPI_Init fails: Open MPI ends the process with status 1 (MPI_ERRORS_ARE_FATAL)
        conftest.assert_status(run("partition", data / "geo_gouttedo.slf", "-n", 2, "--method", "ptscotch", "-o", tmp_path / "p"), 1)
    if out.endswith(".slf"):
        assert (tmp_path / out).read_bytes() == expected_serafin_bytes(ab, data / "r2d_gouttedo.slf")
    if out == "out.h5":  # the file an MPI run writes: the SERAFIN bytes back, the same values
        assert ab("convert", tmp_path / out, tmp_path / "again.slf").returncode == 0
        assert (tmp_path / "again.slf").read_bytes() == expected_serafin_bytes(ab, data / "r2d_gouttedo.slf")
        assert ab("diff", tmp_path / out, data / "r2d_gouttedo.slf").returncode == 0

@pytest.mark.mpi
def test_merge_alone_writes_hdf5_without_mpi_as_the_ranks_do(ab, tmp_path):
    """Alone, `merge` writes HDF5 through HDF5's POSIX driver (no MPI start-up: Open MPI told
    to use a layer that does not exist would stop one): the values of the file 2 ranks
    write, and its SERAFIN bytes back; `diff` of the two HDF5 files (read side by side)."""
    from conftest import EXE, mpirun
    assert ab("generate", "-n", 3000, "--frames", 3, "--precision", "double", "-o", tmp_path / "d.slf").returncode == 0
    assert ab("partition", tmp_path / "d.slf", "-n", 3, "-o", tmp_path / "p").returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_COMM_WORLD", "PMIX_", "PMI_"))}
    env["OMPI_MCA_pml"] = "no-such-layer"
    alone = conftest.run([EXE, "merge", tmp_path / "p" / "d.slf", "--geo", tmp_path / "d.slf", "-o", tmp_path / "alone.h5"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert alone.returncode == 0, alone.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("alone")) == ["alone.h5", "alone.h5.xmf"]
    proc = mpirun(2, EXE, "merge", tmp_path / "p" / "d.slf", "--geo", tmp_path / "d.slf", "-o", tmp_path / "ranks.h5")
    assert proc.returncode == 0, proc.stderr
    for _ in range(3):
        r = ab("diff", tmp_path / "alone.h5", tmp_path / "ranks.h5")
        assert r.returncode == 0 and "identical" in r.stdout, r.stdout + r.stderr
    assert ab("merge", tmp_path / "p" / "d.slf", "--geo", tmp_path / "d.slf", "-o", tmp_path / "serial.slf").returncode == 0
    assert ab("convert", tmp_path / "alone.h5", tmp_path / "back.slf").returncode == 0
    assert (tmp_path / "back.slf").read_bytes() == (tmp_path / "serial.slf").read_bytes()


def test_an_hdf5_output_in_a_missing_folder_says_why_in_one_line(ab, tmp_path):
    """Written alone, an HDF5 output that cannot be created gets the system's reason, not
    HDF5's error stack."""
    src = tmp_path / "a.slf"
    assert ab("generate", "-n", 2000, "-o", src).returncode == 0
    for args in (("convert", src, tmp_path / "nodir" / "out.h5"),
                 ("merge", tmp_path / "none", "--geo", src, "-o", tmp_path / "nodir" / "m.h5")):
        r = ab(*args)
        conftest.assert_status(r, 1)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        if args[0] == "convert":
            assert f"cannot create {tmp_path / 'nodir' / 'out.h5'}: No such file or directory" in r.stderr, r.stderr
    assert not (tmp_path / "nodir").exists()
