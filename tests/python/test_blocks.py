"""Multi-block files from the C mini solver under mpiexec: a few hundred blocks of unequal
sizes dealt by `balance` (split blocks, more ranks than needed), the same bytes at 1, 2 and 3
ranks and for both strategies, a restart on another process count ending with the bytes of
an uninterrupted run, the HDF5 file read with h5py and opened by ParaView, and the fault
rules (output named like the input, a file-size limit)."""
import json
import os
import pathlib
import random
import re
import resource
import shutil
import subprocess

import numpy as np
import pytest

import conftest

# The file's own runs are on Open MPI, one node (`cli`). The byte and restart tests run again
# on emulated nodes and on MPICH (-m mpi), the fault tests on MPICH's one node (faults); the
# C++ test mpi_blocks covers every strategy and format there too.

SOLVER = os.environ.get("AB_BLOCKS_SOLVER")
NVAR = 5


def mpirun(n, *args, check=True, **kw):
    proc = conftest.mpirun(n, *args, **kw)
    if check:
        conftest.assert_status(proc, 0)
    return proc


@pytest.fixture
def grid(ab, tmp_path):
    """300 blocks of unequal sizes, some flat, the first larger than a process's share (so it
    is split); balance's reports for 1, 2, 3 and 4 processes."""
    if not SOLVER:
        pytest.skip("blocks_solver not built")
    r = random.Random(5)
    lines = ["# id ni nj nk", "1 70 40 12"] + [f"{b + 1} {r.randint(3, 14)} {r.randint(3, 12)} {r.choice([1, r.randint(2, 6)])}"
                                              for b in range(1, 300)]
    (tmp_path / "blocks.txt").write_text("\n".join(lines) + "\n")
    for n in (1, 2, 3, 4):
        out = ab("balance", tmp_path / "blocks.txt", "-n", n, "--json")
        assert out.returncode == 0, out.stderr
        (tmp_path / f"a{n}.json").write_text(out.stdout)
    return tmp_path


def dims_of(grid):
    return [tuple(map(int, l.split()[1:])) for l in (grid / "blocks.txt").read_text().splitlines()[1:]]


def expected_state(block_id, dims, frames):
    """The solver's variables after `frames` steps (as blocks_solver computes them), [v, k, j, i]."""
    ni, nj, nk = dims
    k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
    q = np.stack([0.001 * block_id + i + 2.0 * j + 3.0 * k + v for v in range(NVAR)])
    for n in range(1, frames + 1):
        for v in range(NVAR):
            q[v] = 0.75 * q[v] + 0.25 * ((v + 1) * n)
    return q


def test_balance_report_is_a_block_layout(grid):
    j = json.loads((grid / "a3.json").read_text())
    assert [g["cells"] for g in j["grid"]] == [list(d) for d in dims_of(grid)]
    assert any("range" in a for a in j["assignment"]), "the 3-process deal splits no block"


@pytest.mark.mpi
def test_same_bytes_at_every_rank_count_and_strategy(grid):
    # Every strategy at two rank counts, both record kinds at every count (mpi_blocks runs the
    # whole product of strategies, formats, precisions and record kinds).
    runs = [(1, "collective", "none"), (1, "independent", "fortran"), (2, "independent", "none"),
            (2, "aggregated", "fortran"), (3, "aggregated", "none"), (3, "collective", "fortran")]
    files = {}
    for n, strategy, records in runs:
        out = grid / f"r{n}{strategy}{records}.dat"
        mpirun(n, SOLVER, grid / f"a{n}.json", out, 3, f"strategy={strategy} records={records}")
        files[(n, strategy, records)] = out.read_bytes()
    reference = {"none": files[(1, "collective", "none")], "fortran": files[(1, "independent", "fortran")]}
    assert reference["none"] != reference["fortran"]
    for (n, strategy, records), data in files.items():
        assert data == reference[records], (n, strategy, records)
    # The file is what the sidecar says: block after block, variable after variable.
    side = json.loads((grid / "r3aggregatednone.dat.json").read_text())
    assert side["frames"] == 3 and side["variables"] == ["rho", "rhou", "rhov", "rhow", "rhoe"]
    raw = np.frombuffer(files[(3, "aggregated", "none")], dtype="<f8")
    frame = side["frame_bytes"] // 8
    for b in (0, 41, 299):
        blk = side["blocks"][b]
        ni, nj, nk = blk["dims"]
        at = 2 * frame + blk["offset"] // 8
        got = raw[at:at + NVAR * ni * nj * nk].reshape(NVAR, nk, nj, ni)
        np.testing.assert_array_equal(got, expected_state(blk["id"], (ni, nj, nk), 3))


def test_fortran_records_read_as_fortran_reads_them(grid):
    """Each array is one record: a 4-byte length, the values, the same length again."""
    out = grid / "rec.dat"
    mpirun(2, SOLVER, grid / "a2.json", out, 1, "records=fortran precision=4")
    data = out.read_bytes()
    at = 0
    for d in dims_of(grid):
        n = d[0] * d[1] * d[2] * 4
        for _ in range(NVAR):
            head, tail = (int.from_bytes(data[x:x + 4], "little") for x in (at, at + 4 + n))
            assert head == tail == n, (d, at)
            at += n + 8
    assert at == len(data)


@pytest.mark.mpi
def test_restart_on_another_process_count_ends_with_the_same_bytes(grid):
    mpirun(3, SOLVER, grid / "a3.json", grid / "whole.dat", 5)
    mpirun(2, SOLVER, grid / "a2.json", grid / "first.dat", 2)
    for n, strategy in ((3, "collective"), (4, "independent"), (1, "collective")):
        again = grid / f"again{n}.dat"
        mpirun(n, SOLVER, grid / f"a{n}.json", again, 5, "", grid / "first.dat", 1, f"strategy={strategy}")
        assert again.read_bytes() == (grid / "whole.dat").read_bytes(), n


def test_hdf5_file_read_with_h5py_and_restarted(grid):
    h5py = pytest.importorskip("h5py")
    mpirun(3, SOLVER, grid / "a3.json", grid / "run.h5", 4)
    mpirun(2, SOLVER, grid / "a2.json", grid / "again.h5", 4, "", grid / "run.h5", 1)
    dims = dims_of(grid)
    with h5py.File(grid / "run.h5") as f, h5py.File(grid / "again.h5") as g:
        assert f.attrs["anabranch_format"] in (b"anabranch-blocks", "anabranch-blocks")
        assert list(f["frames"]) == ["000000", "000001", "000002", "000003"]
        off, bd = f["blocks/offsets"][:], f["blocks/dims"][:]
        assert [tuple(x) for x in bd] == dims and off[-1] == sum(a * b * c for a, b, c in dims)
        for b in (0, 150, 299):
            ni, nj, nk = bd[b]
            want = expected_state(f["blocks/ids"][b], (ni, nj, nk), 4)
            for v, name in enumerate(("rho", "rhou", "rhov", "rhow", "rhoe")):
                got = f["frames/000003/" + name][off[b]:off[b + 1]].reshape(nk, nj, ni)
                np.testing.assert_array_equal(got, want[v])
            x = f["grid/x"][off[b]:off[b + 1]].reshape(nk, nj, ni)
            assert x[0, 0, -1] - x[0, 0, 0] == ni - 1
        for name in ("rho", "rhoe"):
            for fr in ("000000", "000003"):
                np.testing.assert_array_equal(f[f"frames/{fr}/{name}"][:], g[f"frames/{fr}/{name}"][:])
        assert f["frames/000003"].attrs["time"] == pytest.approx(0.4)
        assert f["anabranch/provenance"].attrs["ranks"] in (b"3", "3")


PARAVIEW_BLOCKS = r"""
import json, sys
from paraview import simple, servermanager as sm
if sys.argv[1].endswith(".vtm"):
    r = simple.XMLMultiBlockDataReader(FileName=[sys.argv[1]])
    times = [0.3]
else:
    r = simple.XDMFReader(FileNames=[sys.argv[1]])
    r.UpdatePipelineInformation()
    times = list(r.TimestepValues)
r.UpdatePipeline(times[-1])
d = sm.Fetch(r)
out = []
it = d.NewIterator()
it.InitTraversal()
while not it.IsDoneWithTraversal():
    b = it.GetCurrentDataObject()
    dims = [0, 0, 0]
    b.GetDimensions(dims)
    out.append({"type": b.GetClassName(), "points": b.GetNumberOfPoints(), "dims": dims,
                "rho": b.GetPointData().GetArray("rho").GetValue(0), "x0": b.GetPoint(0)[0]})
    it.GoToNextItem()
print(json.dumps({"times": times, "blocks": out}))
"""


def test_paraview_opens_every_block(ab, grid):
    """The XDMF sidecar (every frame) and a frame converted to VTK MultiBlock (.vtm + .vts)."""
    from test_hdf5 import paraview_python
    py = paraview_python()
    if not py:
        pytest.skip("ParaView's Python module is not installed (Debian: python3-paraview)")
    mpirun(2, SOLVER, grid / "a2.json", grid / "run.h5", 3)
    r = ab("convert", grid / "run.h5", grid / "run.vtm")
    assert r.returncode == 0, r.stderr
    script = grid / "pv.py"
    script.write_text(PARAVIEW_BLOCKS)
    for view in ("run.h5.xmf", "run.vtm"):
        r = subprocess.run([py, script, grid / view], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        j = json.loads(r.stdout.strip().splitlines()[-1])
        if view.endswith(".xmf"):
            assert j["times"] == pytest.approx([0.1, 0.2, 0.3])
        dims = dims_of(grid)
        assert len(j["blocks"]) == len(dims), view
        for b, got in enumerate(j["blocks"]):
            ni, nj, nk = dims[b]
            assert got["type"] == "vtkStructuredGrid" and got["dims"] == [ni, nj, nk] and got["points"] == ni * nj * nk, view
            assert got["rho"] == expected_state(b + 1, dims[b], 3)[0, 0, 0, 0], view
            assert got["x0"] == 40.0 * ((b + 1) % 16), view


def test_convert_between_block_formats_gives_the_same_values(ab, grid):
    mpirun(3, SOLVER, grid / "a3.json", grid / "run.dat", 2, "records=fortran")
    assert ab("convert", grid / "run.dat", grid / "run.h5").returncode == 0
    r = mpirun(3, conftest.EXE, "convert", grid / "run.h5", grid / "back.dat")
    assert ab("diff", grid / "back.dat", grid / "run.dat").returncode == 0
    mpirun(2, SOLVER, grid / "a2.json", grid / "plain.dat", 2)
    assert (grid / "back.dat").read_bytes() == (grid / "plain.dat").read_bytes()
    r = ab("convert", grid / "run.dat", grid / "run.dat.vtm", "--frame", "7")
    conftest.assert_status(r, 1, "--frame 7")  # a value the command refuses
    assert not (grid / "run.dat.vtm").exists()


def test_output_named_like_the_restart_input_is_refused(grid):
    mpirun(2, SOLVER, grid / "a2.json", grid / "in.dat", 2)
    before = (grid / "in.dat").read_bytes()
    for n in (1, 3):
        r = mpirun(n, SOLVER, grid / f"a{n}.json", grid / "in.dat", 3, "", grid / "in.dat", 0, check=False)
        conftest.assert_status(r, 1)  # the solver's status for a refused output
        assert "in.dat" in r.stderr and ("input" in r.stderr or "reading" in r.stderr), r.stderr
        assert (grid / "in.dat").read_bytes() == before


def assert_only_complete_frames(out):
    """A failed HDF5 output is removed; a raw one keeps the frames its sidecar lists, whole."""
    if out.suffix == ".h5":
        assert not out.exists()
    elif out.exists():
        side = json.loads(pathlib.Path(str(out) + ".json").read_text())
        assert out.stat().st_size == side["frames"] * side["frame_bytes"], (out.stat().st_size, side["frames"])


@pytest.mark.mpi
@pytest.mark.faults
def test_a_file_size_limit_fails_every_rank_with_one_line(grid):
    """24 MiB (room for the MPI library's own files), where 10 frames take 35 MB."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (24 << 20, 24 << 20))
    for n in (2, 3):
        for options in ("strategy=collective", "strategy=independent", "strategy=aggregated", "format=hdf5"):
            out = grid / f"big{n}.{'h5' if 'hdf5' in options else 'dat'}"
            r = mpirun(n, SOLVER, grid / f"a{n}.json", out, 10, options, check=False, preexec_fn=limit, timeout=120)
            conftest.assert_failed_cleanly(r, options)
            lines = [l for l in r.stderr.splitlines() if l.startswith("blocks_solver: ")]
            assert lines and all("File too large" in l or "file-size limit" in l or "cannot write" in l for l in lines), (options, r.stderr)
            assert_only_complete_frames(out)


@pytest.mark.mpi
@pytest.mark.faults
def test_a_full_disk_fails_every_rank_with_one_line(grid, small_disk):
    for n in (2, 3):
        for options in ("strategy=collective", "strategy=independent", "strategy=aggregated", "format=hdf5"):
            out = small_disk / ("full.h5" if "hdf5" in options else "full.dat")
            r = mpirun(n, SOLVER, grid / f"a{n}.json", out, 2, options, check=False, timeout=120)
            conftest.assert_failed_cleanly(r, options)
            lines = [l for l in r.stderr.splitlines() if l.startswith("blocks_solver: ")]
            assert lines and all(str(out) in l and ("No space left" in l or "cannot write" in l) for l in lines), (options, r.stderr)
            assert_only_complete_frames(out)
            for p in small_disk.iterdir():
                p.unlink()


def test_info_describes_and_checks_block_files(ab, grid):
    mpirun(2, SOLVER, grid / "a2.json", grid / "r.dat", 2, "records=fortran")
    mpirun(2, SOLVER, grid / "a2.json", grid / "r.h5", 2)
    for name, fmt in (("r.dat", "blocks-raw"), ("r.h5", "blocks-hdf5")):
        r = ab("info", "--check", grid / name, "--json")
        assert r.returncode == 0, r.stderr
        j = r.json()[0]
        assert j["format"] == fmt and j["frames"] == 2 and j["block_count"] == 300 and j["checked"]
        assert j["blocks"][0] == {"id": 1, "dims": [70, 40, 12]} and j["variables"][0] == "rho"
    assert ab("info", grid / "r.h5").stdout.count("block ") >= 8
    # A damaged record marker: one line naming the frame, the block, the variable and the byte.
    side = json.loads((grid / "r.dat.json").read_text())
    blk = side["blocks"][3]
    at = side["frame_bytes"] + blk["offset"]  # frame 1, block 4, first variable's leading marker
    data = bytearray((grid / "r.dat").read_bytes())
    data[at:at + 4] = (7).to_bytes(4, "little")
    (grid / "r.dat").write_bytes(bytes(data))
    r = ab("info", "--check", grid / "r.dat")
    line = r.stderr.strip()
    conftest.assert_status(r, 1)
    assert "\n" not in line, r.stderr
    assert all(w in line for w in ("frame 1", f"block {blk['id']}", "variable rho", f"byte {at}")), line
    # Cut short: the frame the file ends in, and where.
    (grid / "r.dat").write_bytes(bytes(data[:side["frame_bytes"] + 100]))
    r = ab("info", grid / "r.dat")
    conftest.assert_status(r, 1, "frame 2", str(side["frame_bytes"] + 100))


PY_BLOCKS = r"""
import sys, numpy as np
import anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
mode, assignment, path = sys.argv[1:4]
layout = anabranch.BlockLayout(assignment, comm.Get_rank(), halo=(1, 2, 0))
def expected(bid, ri, rj, rk, v):
    k, j, i = np.meshgrid(np.arange(*rk), np.arange(*rj), np.arange(*ri), indexing="ij")
    return bid * 1000.0 + i + 10.0 * j + 100.0 * k + 0.5 * v
if mode == "write":
    q = layout.arrays(2)
    for (bid, (ri, rj, rk), _), arrays in zip(layout.pieces, q):
        for v, a in enumerate(arrays):
            a[:, 2:-2, 1:-1] = expected(bid, ri, rj, rk, v)
    with anabranch.BlockWriter(comm, path, layout, ["a", "b"], options=sys.argv[4]) as w:
        if "async" in sys.argv[4]:  # the caller's next step changes the arrays before the frame ends
            w.begin_frame(0.25, q)
            for arrays in q:
                for a in arrays:
                    a[...] = -1.0
            w.end_frame()
        else:
            w.write_frame(0.25, q)
else:
    with anabranch.BlockReader(comm, path, layout) as r:
        got = r.read_frame(-1)
        bad = sum(not np.array_equal(a[:, 2:-2, 1:-1], expected(bid, ri, rj, rk, v))
                  for (bid, (ri, rj, rk), _), arrays in zip(layout.pieces, got) for v, a in enumerate(arrays))
        halos = sum(float(np.abs(a).sum() - np.abs(a[:, 2:-2, 1:-1]).sum()) for arrays in got for a in arrays)
        print(f"rank {comm.Get_rank()}: {len(layout.pieces)} pieces, {bad} wrong, halo sum {halos}, times {r.times}")
"""


def test_python_writes_and_restarts_on_another_rank_count(grid):
    pytest.importorskip("mpi4py")
    import sys
    script = grid / "blocks.py"
    script.write_text(PY_BLOCKS)
    env = {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    for fmt, strategy in (("raw", "collective"), ("hdf5", "collective"), ("raw", "aggregated-async")):
        out = grid / f"py.{'h5' if fmt == 'hdf5' else 'dat'}"
        mpirun(3, sys.executable, script, "write", grid / "a3.json", out, f"strategy={strategy}", env=env)
        for n in (1, 2):
            r = mpirun(n, sys.executable, script, "read", grid / f"a{n}.json", out, env=env)
            # each rank's report (mpiexec may join two ranks' lines without their newline)
            lines = re.findall(r"rank \d+: [^\n]*?times \[[^\]]*\]", r.stdout)
            assert len(lines) == n and all(", 0 wrong, halo sum 0.0, times [0.25]" in l for l in lines), r.stdout


def test_fortran_solver_writes_the_c_solvers_bytes(grid):
    solver_f = os.environ.get("AB_BLOCKS_SOLVER_F")
    if not solver_f:
        pytest.skip("blocks_solver_f not built (no Fortran compiler)")
    mpirun(3, SOLVER, grid / "a3.json", grid / "c.dat", 3, "records=fortran")
    mpirun(2, solver_f, grid / "a2.json", grid / "f.dat", 3, "records=fortran")
    assert (grid / "f.dat").read_bytes() == (grid / "c.dat").read_bytes()
    # A restart of the C solver's file by the Fortran solver, on another process count.
    mpirun(2, SOLVER, grid / "a2.json", grid / "c1.dat", 1, "records=fortran")
    mpirun(3, solver_f, grid / "a3.json", grid / "f2.dat", 3, "records=fortran", grid / "c1.dat", 0)
    assert (grid / "f2.dat").read_bytes() == (grid / "c.dat").read_bytes()


PLAIN_FORTRAN_READER = """
program plain_read
  implicit none
  integer :: nb, b, v, f, ni, nj, nk, u
  double precision, allocatable :: q(:, :, :)
  double precision :: total
  open (newunit=u, file='dims.txt')
  read (u, *) nb
  open (10, file='c.dat', form='unformatted', access='sequential', status='old')
  total = 0
  do f = 1, 3
    rewind (u)
    read (u, *) nb
    do b = 1, nb
      read (u, *) ni, nj, nk
      allocate (q(ni, nj, nk))
      do v = 1, 5
        read (10) q
        total = total + sum(q) * v
      end do
      deallocate (q)
    end do
  end do
  print '(es25.17)', total
end program
"""


def test_a_plain_fortran_program_reads_the_records(grid):
    gfortran = shutil.which("gfortran")
    if not gfortran:
        pytest.skip("gfortran not installed")
    mpirun(3, SOLVER, grid / "a3.json", grid / "c.dat", 3, "records=fortran")
    dims = dims_of(grid)
    (grid / "dims.txt").write_text(f"{len(dims)}\n" + "".join(f"{a} {b} {c}\n" for a, b, c in dims))
    (grid / "plain.f90").write_text(PLAIN_FORTRAN_READER)
    subprocess.run([gfortran, "-O0", "plain.f90", "-o", "plain"], cwd=grid, check=True, capture_output=True)
    r = subprocess.run(["./plain"], cwd=grid, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    want = sum(expected_state(b + 1, d, f)[v].sum() * (v + 1) for f in (1, 2, 3) for b, d in enumerate(dims) for v in range(NVAR))
    assert float(r.stdout) == pytest.approx(want, rel=1e-12)


def test_diff_compares_block_files_and_names_where(ab, grid):
    mpirun(3, SOLVER, grid / "a3.json", grid / "a.dat", 2)
    mpirun(2, SOLVER, grid / "a2.json", grid / "b.h5", 2)
    r = ab("diff", grid / "a.dat", grid / "b.h5", "--json")
    assert r.returncode == 0 and r.json()["identical"], r.stdout + r.stderr
    side = json.loads((grid / "a.dat.json").read_text())
    blk = side["blocks"][5]
    ni, nj, nk = blk["dims"]
    i, j, k = 2, 1, 0
    at = side["frame_bytes"] + blk["offset"] + 3 * ni * nj * nk * 8 + ((k * nj + j) * ni + i) * 8  # frame 1, variable rhow
    data = bytearray((grid / "a.dat").read_bytes())
    old = np.frombuffer(bytes(data[at:at + 8]), "<f8")[0]
    data[at:at + 8] = np.float64(old + 0.5).tobytes()
    (grid / "a.dat").write_bytes(bytes(data))
    r = ab("diff", grid / "a.dat", grid / "b.h5", "--json")
    rep = r.json()
    conftest.assert_status(r, 1)
    assert not rep["equal"]
    v = next(x for x in rep["variables"] if x["name"] == "rhow")
    assert (v["frame"], v["block"], v["ijk"], v["beyond"]) == (1, blk["id"], [i, j, k], 1) and v["max_abs"] == pytest.approx(0.5)
    assert ab("diff", grid / "a.dat", grid / "b.h5", "--atol", "0.6").returncode == 0


P3D_DIMS = [(5, 4, 3), (7, 2, 6), (3, 3, 1)]


def write_plot3d(path, big=False, single=False, records=True, iblank=False, two_d=False, multi=True, dims=P3D_DIMS):
    e = ">" if big else "<"
    rt, it = np.dtype(e + ("f4" if single else "f8")), np.dtype(e + "i4")
    out = bytearray()

    def rec(b):
        nonlocal out
        mark = np.array([len(b)], it).tobytes() if records else b""
        out += mark + b + mark
    if multi:
        rec(np.array([len(dims)], it).tobytes())
    rec(np.array([d[:2] if two_d else d for d in dims], it).tobytes())
    for b, (ni, nj, nk) in enumerate(dims):
        k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
        xyz = [i.ravel() + 10.0 * b, j.ravel() * 0.5, k.ravel() * 0.25][: 2 if two_d else 3]
        data = b"".join(np.asarray(c, rt).tobytes() for c in xyz)
        if iblank:
            data += np.ones(ni * nj * nk, it).tobytes()
        rec(data)
    path.write_bytes(bytes(out))


@pytest.mark.parametrize("variant", [{}, {"big": True}, {"single": True, "big": True}, {"records": False}, {"iblank": True},
                                     {"two_d": True, "dims": [(5, 4, 1), (7, 2, 1)]}, {"multi": False, "dims": [(6, 5, 4)]}])
def test_plot3d_grids_in_balance_and_round_trip(ab, tmp_path, variant):
    write_plot3d(tmp_path / "g.xyz", **variant)
    dims = variant.get("dims", P3D_DIMS)
    r = ab("balance", tmp_path / "g.xyz", "-n", 2, "--json")
    assert r.returncode == 0, r.stderr
    assert [g["cells"] for g in r.json()["grid"]] == [list(d) for d in dims]
    assert ab("convert", tmp_path / "g.xyz", tmp_path / "g.h5").returncode == 0
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "g.h5") as f:
        off = f["blocks/offsets"][:]
        ni, nj, nk = dims[-1]
        x = f["grid/x"][off[-2]:off[-1]].reshape(nk, nj, ni)
        assert x[0, 0, ni - 1] == ni - 1 + 10.0 * (len(dims) - 1) and list(f["frames"]) == []
    # Back to PLOT3D: the canonical form (multi-grid 3D, double, little-endian, records).
    assert ab("convert", tmp_path / "g.h5", tmp_path / "back.xyz").returncode == 0
    write_plot3d(tmp_path / "want.xyz", dims=[d if len(d) == 3 else (*d, 1) for d in dims])
    if not variant.get("two_d"):
        assert (tmp_path / "back.xyz").read_bytes() == (tmp_path / "want.xyz").read_bytes()


def test_a_damaged_plot3d_grid_is_named(ab, tmp_path):
    write_plot3d(tmp_path / "g.xyz")
    data = (tmp_path / "g.xyz").read_bytes()
    (tmp_path / "cut.xyz").write_bytes(data[:-9])
    for cmd in (("balance", tmp_path / "cut.xyz", "-n", 2), ("convert", tmp_path / "cut.xyz", tmp_path / "cut.h5")):
        r = ab(*cmd)
        conftest.assert_status(r, 1, "cut.xyz")
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "cut.h5").exists()


def cgns_helper():
    exe = pathlib.Path(conftest.EXE or "").parent / "anabranch-cgns"
    if not exe.exists():
        pytest.skip("built without CGNS (Debian: libcgns-dev)")
    return exe


def test_cgns_export_and_back(ab, grid):
    """One structured zone per block (flat blocks in a 2D base), the grid, a FlowSolution per
    frame, the times; read back into the same bytes, and by CGNS's own cgns_to_vtk."""
    cgns_helper()
    mpirun(3, SOLVER, grid / "a3.json", grid / "run.h5", 3)
    mpirun(3, SOLVER, grid / "a3.json", grid / "run.dat", 3)
    r = ab("convert", grid / "run.h5", grid / "run.cgns", "--json")
    assert r.returncode == 0, r.stderr
    assert r.json()["frames"] == 3 and r.json()["blocks"] == 300
    assert ab("convert", grid / "run.cgns", grid / "back.dat").returncode == 0
    assert (grid / "back.dat").read_bytes() == (grid / "run.dat").read_bytes()
    assert ab("convert", grid / "run.cgns", grid / "back.h5").returncode == 0
    d = ab("diff", grid / "back.h5", grid / "run.h5", "--json")
    assert d.returncode == 0 and d.json()["identical"]
    # CGNS's own checker: no error, and no warning but the flat blocks' constant z (SIDS
    # names for the solver's variables, the data class, every array's dimensional exponents).
    check = shutil.which("cgnscheck")
    if os.environ.get("AB_REQUIRE_ALL") == "1":
        assert check, "cgnscheck not installed (Debian: cgns-convert)"
    if check:
        out = subprocess.run([check, grid / "run.cgns"], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0 and "checking complete" in out.stdout, out.stdout[-3000:]
        kinds = [line for line in out.stdout.splitlines() if line.startswith(("ERROR", "WARNING"))]
        assert set(kinds) <= {"WARNING:coordinate range is 0"}, sorted(set(kinds))
        assert len(kinds) <= sum(1 for d in dims_of(grid) if d[2] == 1)
    to_vtk = shutil.which("cgns_to_vtk")
    if to_vtk:
        out = grid / "vtk"
        out.mkdir()
        subprocess.run([to_vtk, grid / "run.cgns", out], check=True, capture_output=True, timeout=300)
        assert len(list(out.iterdir())) >= sum(1 for d in dims_of(grid) if d[2] > 1)


def cgns_program(folder, source, out):
    """Compiles a C program against CGNS's library and runs it: it writes folder/out."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    (folder / "w.c").write_text(source)
    subprocess.run([cc, "w.c", "-o", "w", "-lcgns"], cwd=folder, check=True, capture_output=True)
    subprocess.run(["./w", out], cwd=folder, check=True)


ONE_TO_ONE = r"""
#include <cgnslib.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int fn, B, Z1, Z2, C, I;
  double x[4 * 3 * 2] = {0};
  cgsize_t s1[9] = {4, 3, 2, 3, 2, 1, 0, 0, 0}, s2[9] = {5, 3, 2, 4, 2, 1, 0, 0, 0};
  if (cg_open(argv[1], CG_MODE_WRITE, &fn) || cg_base_write(fn, "Base", 3, 3, &B) ||
      cg_zone_write(fn, B, "left", s1, CGNS_ENUMV(Structured), &Z1) || cg_zone_write(fn, B, "right", s2, CGNS_ENUMV(Structured), &Z2))
    return 1;
  cgsize_t r1[6] = {4, 1, 1, 4, 3, 2}, d1[6] = {1, 1, 1, 1, 3, 2}, r2[6] = {1, 1, 1, 1, 3, 2}, d2[6] = {4, 1, 1, 4, 3, 2};
  int t[3] = {1, 2, 3};
  if (cg_1to1_write(fn, B, Z1, "to right", "right", r1, d1, t, &I) || cg_1to1_write(fn, B, Z2, "to left", "left", r2, d2, t, &I)) return 1;
  return cg_close(fn);
}
"""


def test_balance_reads_cgns_zones_and_their_faces(ab, tmp_path):
    cgns_helper()
    cgns_program(tmp_path, ONE_TO_ONE, "two.cgns")
    r = ab("balance", tmp_path / "two.cgns", "-n", 2, "--no-split", "--json")
    assert r.returncode == 0, r.stderr
    j = r.json()
    assert j["grid"] == [{"id": 1, "cells": [4, 3, 2]}, {"id": 2, "cells": [5, 3, 2]}]
    assert j["faces"] == 1 and j["cut_cells"] == 2  # the face: 2 x 1 cells, between the two processes
    r = ab("balance", tmp_path / "missing.cgns", "-n", 2)
    conftest.assert_status(r, 2, "missing.cgns")  # an input file that does not exist


CELL_CENTRED = r"""
#include <cgnslib.h>
/* Two zones, (3, 4, 2) and (2, 3, 4) points, and two cell-centred flow solutions with
   times, as CFL3D writes them: zone 1's solutions with a rind plane on both sides in j and k
   (their values -1e30, never to be read). A cell's core value: 1000 zone + 100 i + 10 j + k
   + var / 2 + frame / 4 (i, j, k from 1). The points: x = i + j^2 / 2, y = j + k / 4, z = 2 k
   (from 0). */
int main(int argc, char** argv) {
  int fn, B, Z, S, F;
  const char* names[2] = {"Density", "Pressure"};
  const char* sols[2] = {"FlowSolution1", "FlowSolution2"};
  cgsize_t pts[2][3] = {{3, 4, 2}, {2, 3, 4}};
  static double x[64], y[64], z[64], v[256];
  if (cg_open(argv[1], CG_MODE_WRITE, &fn) || cg_base_write(fn, "Base", 3, 3, &B)) return 1;
  for (int zi = 0; zi < 2; ++zi) {
    const cgsize_t* p = pts[zi];
    cgsize_t size[9] = {p[0], p[1], p[2], p[0] - 1, p[1] - 1, p[2] - 1, 0, 0, 0};
    char zname[16] = "block_1";
    zname[6] = (char)('1' + zi);
    if (cg_zone_write(fn, B, zname, size, CGNS_ENUMV(Structured), &Z)) return 1;
    for (int k = 0, n = 0; k < p[2]; ++k)
      for (int j = 0; j < p[1]; ++j)
        for (int i = 0; i < p[0]; ++i, ++n) {
          x[n] = i + 0.5 * j * j;
          y[n] = j + 0.25 * k;
          z[n] = 2.0 * k;
        }
    int C;
    if (cg_coord_write(fn, B, Z, CGNS_ENUMV(RealDouble), "CoordinateX", x, &C) ||
        cg_coord_write(fn, B, Z, CGNS_ENUMV(RealDouble), "CoordinateY", y, &C) ||
        cg_coord_write(fn, B, Z, CGNS_ENUMV(RealDouble), "CoordinateZ", z, &C))
      return 1;
    int rind[6] = {0, 0, zi == 0, zi == 0, zi == 0, zi == 0};
    int c[3] = {(int)p[0] - 1 + rind[0] + rind[1], (int)p[1] - 1 + rind[2] + rind[3], (int)p[2] - 1 + rind[4] + rind[5]};
    for (int f = 0; f < 2; ++f) {
      if (cg_sol_write(fn, B, Z, sols[f], CGNS_ENUMV(CellCenter), &S)) return 1;
      if (cg_goto(fn, B, "Zone_t", Z, "FlowSolution_t", S, "end") || cg_rind_write(rind)) return 1;
      for (int var = 0; var < 2; ++var) {
        for (int k = 0, n = 0; k < c[2]; ++k)
          for (int j = 0; j < c[1]; ++j)
            for (int i = 0; i < c[0]; ++i, ++n) {
              int ci = i + 1 - rind[0], cj = j + 1 - rind[2], ck = k + 1 - rind[4];
              int core = ci >= 1 && ci <= p[0] - 1 && cj >= 1 && cj <= p[1] - 1 && ck >= 1 && ck <= p[2] - 1;
              v[n] = core ? 1000.0 * (zi + 1) + 100 * ci + 10 * cj + ck + var / 2.0 + f / 4.0 : -1e30;
            }
        if (cg_field_write(fn, B, Z, S, CGNS_ENUMV(RealDouble), names[var], v, &F)) return 1;
      }
    }
  }
  double t[2] = {0.5, 1.5};
  cgsize_t two = 2;
  if (cg_biter_write(fn, B, "TimeIterValues", 2) || cg_goto(fn, B, "BaseIterativeData_t", 1, "end") ||
      cg_array_write("TimeValues", CGNS_ENUMV(RealDouble), 1, &two, t))
    return 1;
  return cg_close(fn);
}
"""


def test_cgns_cell_centred_solutions_are_frames_on_the_cells(ab, tmp_path):
    """A CGNS file whose flow solutions are cell-centred (as CFL3D writes them, with rind
    planes): each solution a frame, each block its zone's cells at their centres (the mean of
    the cell's corners), the core values exact (never the rind's), the times kept; `info`
    says so."""
    cgns_helper()
    h5py = pytest.importorskip("h5py")
    cgns_program(tmp_path, CELL_CENTRED, "cells.cgns")
    r = ab("info", tmp_path / "cells.cgns")
    assert r.returncode == 0, r.stderr
    assert "block 1        2 x 3 x 1" in r.stdout and "block 2        1 x 2 x 3" in r.stdout, r.stdout
    assert "variables: Density, Pressure" in r.stdout and "2 frames: t = 0.5, 1.5" in r.stdout, r.stdout
    assert "cell-centred solutions: each block is its zone's cells" in r.stdout, r.stdout
    r = ab("convert", tmp_path / "cells.cgns", tmp_path / "cells.h5")
    assert r.returncode == 0, r.stderr
    with h5py.File(tmp_path / "cells.h5") as f:
        off, bd, ids = f["blocks/offsets"][:], f["blocks/dims"][:], f["blocks/ids"][:]
        assert list(ids) == [1, 2] and [tuple(d) for d in bd] == [(2, 3, 1), (1, 2, 3)]
        assert [f["frames"][fr].attrs["time"] for fr in f["frames"]] == [0.5, 1.5]
        for b, zone in enumerate((1, 2)):
            ni, nj, nk = bd[b]
            k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
            corners = [(di, dj, dk) for dk in (0, 1) for dj in (0, 1) for di in (0, 1)]
            want_x = sum((i + di) + 0.5 * (j + dj) ** 2 for di, dj, dk in corners) / 8
            want_y = sum((j + dj) + 0.25 * (k + dk) for di, dj, dk in corners) / 8
            want_z = sum(2.0 * (k + dk) for di, dj, dk in corners) / 8
            for name, want in (("x", want_x), ("y", want_y), ("z", want_z)):
                got = f["grid/" + name][off[b]:off[b + 1]].reshape(nk, nj, ni)
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"block {zone} {name}")
            for fr, frame in enumerate(f["frames"]):
                for var, name in enumerate(("Density", "Pressure")):
                    got = f[f"frames/{frame}/{name}"][off[b]:off[b + 1]].reshape(nk, nj, ni)
                    want = 1000.0 * zone + 100 * (i + 1) + 10 * (j + 1) + (k + 1) + var / 2 + fr / 4
                    np.testing.assert_array_equal(got, want, err_msg=f"block {zone} {name} frame {fr}")


def test_a_damaged_cgns_file_is_one_line(ab, tmp_path):
    cgns_helper()
    (tmp_path / "bad.cgns").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 100)
    r = ab("convert", tmp_path / "bad.cgns", tmp_path / "out.h5")
    conftest.assert_status(r, 1, "bad.cgns")
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out.h5").exists()


@pytest.mark.parametrize("target", ["out.h5", "out.dat", "out.cgns", "out.vtm"])
def test_a_signal_during_convert_leaves_nothing(ab, grid, target):
    """SIGTERM while a block file is converted: no output under its name, no temporary
    (the CGNS helper removes its own when the stream stops)."""
    import signal
    import time
    if target.endswith(".cgns"):
        cgns_helper()
    mpirun(3, SOLVER, grid / "a3.json", grid / "in.h5", 8)
    out = grid / "out"
    out.mkdir()
    proc = subprocess.Popen([conftest.EXE, "convert", grid / "in.h5", out / target], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=dict(os.environ, ANABRANCH_PROGRESS="0"))
    seen = []
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline and not seen:
        seen = [p for p in out.rglob("*") if ".tmp." in p.name]
        time.sleep(0.001)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert seen, "the conversion ended before writing anything"
    assert proc.returncode == -signal.SIGTERM
    deadline = time.time() + 10
    while time.time() < deadline and [p for p in out.rglob("*") if p.is_file()]:
        time.sleep(0.05)
    assert [p.name for p in out.rglob("*") if p.is_file()] == []


def test_cgns_names_map_and_round_trip(ab, tmp_path):
    """A solver's own variable names: those that say what they are become SIDS identifiers
    in the CGNS file (rho -> Density, u -> VelocityX, nut -> ViscosityEddyKinematic), others
    stay; cgnscheck warns for the unknown one only; read back, every name is the writer's."""
    cgns_helper()
    anabranch = pytest.importorskip("anabranch")
    h5py = pytest.importorskip("h5py")
    layout = anabranch.BlockLayout()
    layout.add_block(1, 4, 3, 2)
    layout.add_piece(1)
    names = ["rho", "U", "nut", "myvar"]
    with anabranch.BlockWriter(None, tmp_path / "n.h5", layout, names) as w:
        w.write_grid([[np.arange(24.0), np.arange(24.0) * 2, np.arange(24.0) * 3]])
        w.write_frame(0.5, [[np.full(24, v + 1.0) for v in range(4)]])
    conftest.assert_status(ab("convert", tmp_path / "n.h5", tmp_path / "n.cgns"), 0)
    with h5py.File(tmp_path / "n.cgns") as f:
        fields = sorted(k for k in f["Base/block_1/FlowSolution000000"] if not k.startswith(" "))
    assert [x for x in fields if x != "GridLocation"] == sorted(["Density", "VelocityX", "ViscosityEddyKinematic", "myvar"])
    check = shutil.which("cgnscheck")
    if check:
        out = subprocess.run([check, tmp_path / "n.cgns"], capture_output=True, text=True, timeout=60).stdout
        kinds = [line for line in out.splitlines() if line.startswith(("ERROR", "WARNING"))]
        assert kinds == ["WARNING:not a CGNS data-name identifier"], out[-2000:]
    conftest.assert_status(ab("convert", tmp_path / "n.cgns", tmp_path / "back.h5"), 0)
    r = ab("info", tmp_path / "back.h5", "--json")
    assert r.json()[0]["variables"] == names
    r = ab("info", tmp_path / "n.cgns", "--json")  # the CGNS file itself
    conftest.assert_status(r, 0)
    j = r.json()[0]
    assert (j["format"], j["block_count"], j["frames"], j["times"], j["variables"], j["skipped_solutions"]) == \
        ("blocks-cgns", 1, 1, [0.5], names, 0)
    assert j["blocks"] == [{"id": 1, "zone": "block_1", "dims": [4, 3, 2], "points": [4, 3, 2]}]
    assert j["location"] == "Vertex"
