"""The C mini solver under mpiexec: the shared file is the same bits at 1, 2 and 3 ranks,
for every strategy, from per-rank or concatenated parts; file-per-process leaves one
TELEMAC-named file per rank; a run killed between frames leaves its complete frames."""
import json
import os
import re

import pytest

import conftest
from slf import read

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

SOLVER = os.environ.get("AB_MINI_SOLVER")
CRASH = os.environ.get("AB_WRITER_CRASH")
SOLVER_F = os.environ.get("AB_MINI_SOLVER_F")


def mpirun(n, *args, check=True):
    proc = conftest.mpirun(n, *args)
    if check:
        conftest.assert_status(proc, 0)
    return proc


@pytest.fixture
def mesh(ab, tmp_path):
    if not SOLVER:
        pytest.skip("mini_solver not built")
    r = ab("generate", "-n", 6000, "-o", tmp_path / "mesh.slf")
    assert r.returncode == 0, r.stderr
    return tmp_path


def test_same_bits_at_every_rank_count_and_strategy(ab, mesh):
    outputs = {}
    for n in (1, 2, 3):
        for layout in ("telemac", "concat"):
            parts = mesh / f"p{n}{layout}"
            parts.mkdir()
            assert ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", n, "--layout", layout, "-o", parts).returncode == 0
            for strategy in ("aggregated", "aggregated-async", "collective", "independent"):
                if layout == "concat" and strategy != "aggregated":
                    continue
                out = mesh / f"r{n}{layout}{strategy}.slf"
                mpirun(n, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", out, strategy, 3)
                outputs[(n, layout, strategy)] = out.read_bytes()
    reference = outputs[(1, "telemac", "aggregated")]
    for key, data in outputs.items():
        assert data == reference, key
    s = read(mesh / "r3telemacaggregated.slf")
    assert len(s.frames) == 3 and s.vars[0].startswith("TEMPERATURE")
    g = read(mesh / "mesh.slf")
    assert (s.ikle == g.ikle).all() and (s.x == g.x).all() and (s.ipobo == g.ipobo).all()


def test_xarray_selafin_reads_the_shared_file(ab, mesh):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("xarray_selafin")
    parts = mesh / "p2"
    parts.mkdir()
    ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", 2, "-o", parts)
    mpirun(2, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "out.slf", "aggregated", 2)
    ds = xr.open_dataset(mesh / "out.slf", engine="selafin")
    assert ds.sizes["time"] == 2 and "TEMPERATURE" in [v[0].strip() for v in ds.attrs["variables"].values()]


def test_file_per_process_writes_telemac_named_parts(ab, mesh):
    parts = mesh / "p3"
    parts.mkdir()
    ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", 3, "-o", parts)
    mpirun(3, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "T2DRES", "file-per-process", 2)
    mpirun(3, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "shared.slf", "aggregated", 2)
    shared = read(mesh / "shared.slf")
    for r in range(3):
        p = read(mesh / f"T2DRES00002-0000{r}")
        geo = read(parts / f"mesh.slf00002-0000{r}")
        assert (p.ipobo == geo.ipobo).all() and (p.ikle == geo.ikle).all()
        for (t, vals), (st, svals) in zip(p.frames, shared.frames):
            assert t == st
            for v, sv in zip(vals, svals):
                assert (v == sv[p.ipobo - 1]).all()


@pytest.mark.parametrize("strategy", ["aggregated", "aggregated-async", "collective", "independent"])
def test_killed_between_frames_leaves_complete_frames(ab, tmp_path, strategy):
    if not CRASH:
        pytest.skip("writer_crash not built")
    out = tmp_path / "crash.slf"
    mpirun(3, CRASH, out, strategy, 4, check=False)
    info = ab("info", "--json", out).json()[0]
    assert info["frames"] == 4 and info["integrity"] == "OK"
    data = out.read_bytes()
    (tmp_path / "torn.slf").write_bytes(data[:-1000])
    info = ab("info", "--json", tmp_path / "torn.slf").json()[0]
    assert info["frames"] == 3 and info["integrity"] == "torn last frame"


def test_killed_hdf5_run_keeps_its_frames_when_flushed(ab, tmp_path):
    """hdf5 with flush_frames=1: a run killed between frames leaves a readable file with
    every frame written; with one file per step, the complete steps are there."""
    if not CRASH:
        pytest.skip("writer_crash not built")
    mpirun(3, CRASH, tmp_path / "crash.h5", "hdf5 flush_frames=1", 4, check=False)
    info = ab("info", "--json", tmp_path / "crash.h5").json()[0]
    assert info["frames"] == 4 and info["times"] == [0, 1, 2, 3]
    mpirun(3, CRASH, tmp_path / "steps.h5", "hdf5 file_per_step=1", 3, check=False)
    for k in range(3):
        assert ab("info", "--json", tmp_path / f"steps_{k:06d}.h5").json()[0]["times"] == [k]


def test_fortran_solver_writes_the_c_solvers_bits(ab, mesh):
    if not SOLVER_F:
        pytest.skip("built without Fortran")
    outputs = []
    for n in (1, 2, 3):
        parts = mesh / f"pf{n}"
        parts.mkdir()
        assert ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", n, "-o", parts).returncode == 0
        mpirun(n, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / f"c{n}.slf", "aggregated", 3)
        proc = mpirun(n, SOLVER_F, parts / "mesh.slf", mesh / "mesh.slf", mesh / f"f{n}.slf", "collective", 3)
        outputs += [(mesh / f"c{n}.slf").read_bytes(), (mesh / f"f{n}.slf").read_bytes()]
        # Rank 0 read the file back through the module (ab_file_*) and ran `info` (ab_command).
        f = read(mesh / f"f{n}.slf")
        t, values = f.frames[-1]
        lines = {l.split(":")[1].split()[0]: l for l in proc.stdout.splitlines() if l.startswith("mini_solver_f: ")}
        m = re.search(r"read back (\d+) frames of (\d+) variables, the last at t = ([\d.]+), highest TEMPERATURE ([\d.]+)",
                      lines["read"])
        assert m, proc.stdout
        assert (int(m[1]), int(m[2]), float(m[3])) == (3, 2, t)
        assert abs(float(m[4]) - values[0].max()) < 1e-6
        report = json.loads(lines["info"].split("info ", 1)[1])
        assert report[0]["frames"] == 3 and report[0]["npoin"] == f.npoin, report
    assert all(o == outputs[0] for o in outputs)


@pytest.mark.parametrize("chunks", [1, 4])
def test_hdf5_strategy_holds_the_same_frames(ab, mesh, chunks):
    """The C solver writing HDF5 at 1-3 ranks: converted to SERAFIN, the bits of its SERAFIN
    run. Each variable's frame is one HDF5 chunk, or, with chunk_bytes, equal chunks no
    larger: the ranks' values cut where the chunks end."""
    h5py = pytest.importorskip("h5py")
    parts = mesh / "p3h"
    parts.mkdir()
    ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", 3, "-o", parts)
    mpirun(3, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "ref.slf", "aggregated", 3)
    npoin = read(mesh / "mesh.slf").npoin
    assert npoin % chunks == 0
    strategy = "hdf5" if chunks == 1 else f"hdf5 chunk_bytes={npoin // chunks * 4}"
    for n in (1, 2, 3):
        p = mesh / f"p{n}h"
        p.mkdir(exist_ok=True)
        ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", n, "-o", p)
        mpirun(n, SOLVER, p / "mesh.slf", mesh / "mesh.slf", mesh / f"r{n}.h5", strategy, 3)
        with h5py.File(mesh / f"r{n}.h5", "r") as f:
            assert all(d.chunks == (npoin // chunks,) for d in f["VTKHDF/PointData"].values())
        r = ab("convert", mesh / f"r{n}.h5", mesh / f"r{n}.slf")
        assert r.returncode == 0, r.stderr
        assert (mesh / f"r{n}.slf").read_bytes() == (mesh / "ref.slf").read_bytes(), n
        assert (mesh / f"r{n}.h5.xmf").exists()


def test_hdf5_one_file_per_step(ab, mesh):
    """file_per_step=1: one complete VTKHDF file per frame, later steps linking to the first
    step's mesh, and one XDMF series over them all."""
    h5py = pytest.importorskip("h5py")
    parts = mesh / "p2s"
    parts.mkdir()
    ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", 2, "-o", parts)
    mpirun(2, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "ref.slf", "aggregated", 3)
    mpirun(2, SOLVER, parts / "mesh.slf", mesh / "mesh.slf", mesh / "run.h5", "hdf5 file_per_step=1", 3)
    assert sorted(p.name for p in mesh.glob("run*")) == ["run.h5.xmf", "run_000000.h5", "run_000001.h5", "run_000002.h5"]
    ref = read(mesh / "ref.slf")
    for k in range(3):
        step = mesh / f"run_{k:06d}.h5"
        with h5py.File(step, "r") as f:
            link = f["VTKHDF"].get("Points", getlink=True)
            assert isinstance(link, h5py.ExternalLink) == (k > 0)
            assert f["VTKHDF/Steps"].attrs["NSteps"] == 1
            assert f["VTKHDF/Points"].shape == (ref.npoin, 3)
        assert ab("convert", step, mesh / f"s{k}.slf").returncode == 0
        s = read(mesh / f"s{k}.slf")
        assert len(s.frames) == 1 and s.frames[0][0] == ref.frames[k][0]
        for a, b in zip(s.frames[0][1], ref.frames[k][1]):
            assert (a == b).all()
    xmf = (mesh / "run.h5.xmf").read_text()
    assert all(f"run_{k:06d}.h5:/VTKHDF/PointData/TEMPERATURE" in xmf for k in range(3))


SOLVER_PY = os.environ.get("AB_PY_MINI_SOLVER")


@pytest.fixture
def parted(ab, mesh):
    """The mesh partitioned for 1, 2 and 3 ranks."""
    for n in (1, 2, 3):
        (mesh / f"q{n}").mkdir()
        assert ab("partition", mesh / "mesh.slf", "--cli", mesh / "mesh.cli", "-n", n, "-o", mesh / f"q{n}").returncode == 0
    return lambda n: mesh / f"q{n}" / "mesh.slf"


@pytest.mark.parametrize("first,then", [(3, 2), (2, 3), (1, 3), (3, 1)])
@pytest.mark.parametrize("read_strategy", ["aggregated", "independent"])
def test_restart_on_another_rank_count_gives_the_uninterrupted_bits(mesh, parted, first, then, read_strategy):
    """10 frames on N ranks; a restart from frame 5 of that one shared file on M ranks, each
    reading only its own nodes: the same file as the uninterrupted run, byte for byte."""
    full = mesh / "full.slf"
    mpirun(first, SOLVER, parted(first), mesh / "mesh.slf", full, "aggregated", 10)
    again = mesh / "again.slf"
    mpirun(then, SOLVER, parted(then), mesh / "mesh.slf", again, "collective", 10, full, 5, read_strategy)
    assert again.read_bytes() == full.read_bytes()
    # A restart from the last frame, with nothing left to compute, is the file itself too.
    mpirun(then, SOLVER, parted(then), mesh / "mesh.slf", again, "aggregated", 10, full, 10, read_strategy)
    assert again.read_bytes() == full.read_bytes()


@pytest.mark.parametrize("first,then", [(3, 2), (2, 3), (1, 2)])
@pytest.mark.parametrize("read_strategy", ["hdf5", "aggregated", "independent"])
def test_restart_from_hdf5(ab, mesh, parted, first, then, read_strategy):
    """The same through HDF5: written and restarted with the hdf5 strategy, converted to
    SERAFIN it is the uninterrupted SERAFIN run's bits."""
    mpirun(first, SOLVER, parted(first), mesh / "mesh.slf", mesh / "ref.slf", "aggregated", 10)
    mpirun(first, SOLVER, parted(first), mesh / "mesh.slf", mesh / "full.h5", "hdf5", 10)
    mpirun(then, SOLVER, parted(then), mesh / "mesh.slf", mesh / "again.h5", "hdf5", 10, mesh / "full.h5", 5, read_strategy)
    assert ab("convert", mesh / "again.h5", mesh / "again.slf").returncode == 0
    assert (mesh / "again.slf").read_bytes() == (mesh / "ref.slf").read_bytes()


def test_compressed_frames_within_their_bound_and_a_restart_reads_them(mesh, parted):
    """compress=SPEC in the solver's option string: its frames within the bound of the same run
    uncompressed (h5py decodes them), and a restart on another rank count reads them back."""
    h5py = pytest.importorskip("h5py")
    pytest.importorskip("hdf5plugin")  # h5py's zstd
    import numpy as np
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", mesh / "plain.h5", "hdf5", 6)
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", mesh / "packed.h5", "hdf5 compress=rel=1e-3", 6)
    mpirun(2, SOLVER, parted(2), mesh / "mesh.slf", mesh / "again.h5", "hdf5 compress=lossless:zstd", 6, mesh / "packed.h5", 3, "hdf5")

    def frames(path):
        with h5py.File(path, "r") as f:
            pd = f["VTKHDF/PointData"]
            return {k: (pd[k][()].reshape(6, -1).astype(np.float64), sorted(pd[k]._filters)) for k in pd}

    plain, packed, again = frames(mesh / "plain.h5"), frames(mesh / "packed.h5"), frames(mesh / "again.h5")
    for k, (a, _) in plain.items():
        b, filt = packed[k]
        assert filt == ["gzip", "shuffle"] and again[k][1] == ["32015", "shuffle"], (filt, again[k][1])
        for f in range(6):
            assert np.abs(a[f] - b[f]).max() <= 1e-3 * (a[f].max() - a[f].min()), (k, f)
        # The restarted run copies the frames before its restart frame: the decoded values.
        for f in range(3):
            np.testing.assert_array_equal(again[k][0][f], b[f])


@pytest.mark.formats  # a format round trip: Open MPI's run (MPICH's spinning ranks make it slow on 2 cores)
def test_compressed_cgns_in_chunks_and_a_restart_reads_them(mesh, parted):
    """compress=SPEC with the cgns strategy and small chunks (several a rank, a chunk index of
    hundreds): h5py decodes each frame within the bound of the uncompressed run; a restart on
    another rank count reads the compressed frames back (each rank its own nodes) and copies
    them as decoded."""
    h5py = pytest.importorskip("h5py")
    pytest.importorskip("hdf5plugin")  # h5py's zstd
    import numpy as np
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", mesh / "plain.cgns", "cgns", 6)
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", mesh / "packed.cgns", "cgns compress=rel=1e-3 chunk_bytes=512", 6)
    mpirun(2, SOLVER, parted(2), mesh / "mesh.slf", mesh / "again.cgns", "cgns compress=lossless:zstd chunk_bytes=4096", 6,
           mesh / "packed.cgns", 3, "independent")

    def frames(path):
        with h5py.File(path, "r") as f:
            zone = f["Base/mesh"]
            steps = sorted(k for k in zone if k.startswith("FlowSolution"))
            out = {k: np.array([zone[s][k][" data"][()] for s in steps], dtype=np.float64) for k in zone[steps[0]]}
            chunks = zone[steps[0]][next(iter(zone[steps[0]]))][" data"].chunks
            return out, chunks, f["Base/mesh/GridCoordinates/CoordinateX/ data"][()]

    (plain, _, x), (packed, chunks, px), (again, _, ax) = frames(mesh / "plain.cgns"), frames(mesh / "packed.cgns"), frames(mesh / "again.cgns")
    assert chunks == (128,) and np.array_equal(x, px) and np.array_equal(x, ax)  # 512 bytes of floats; the mesh exact
    for k, a in plain.items():
        for f in range(6):
            assert np.abs(a[f] - packed[k][f]).max() <= 1e-3 * (a[f].max() - a[f].min()), (k, f)
        for f in range(3):
            np.testing.assert_array_equal(again[k][f], packed[k][f])


@pytest.mark.formats
def test_compressed_cgns_chunk_index_past_a_page(ab, tmp_path):
    """Over 1024 chunks an array (HDF5's fixed array pages 1024 entries by default; anabranch
    writes one unpaged block of them all): h5py and CGNS's own tools (HDF5 1.10, where
    installed) read the lossless file as the uncompressed one, array for array."""
    h5py = pytest.importorskip("h5py")
    import numpy as np
    import shutil
    import subprocess
    if not SOLVER:
        pytest.skip("mini_solver not built")
    assert ab("generate", "-n", 50000, "-o", tmp_path / "mesh.slf").returncode == 0
    (tmp_path / "q").mkdir()
    assert ab("partition", tmp_path / "mesh.slf", "-n", 2, "-o", tmp_path / "q").returncode == 0
    parts = tmp_path / "q" / "mesh.slf"
    mpirun(2, SOLVER, parts, tmp_path / "mesh.slf", tmp_path / "u.cgns", "cgns", 2)
    mpirun(2, SOLVER, parts, tmp_path / "mesh.slf", tmp_path / "p.cgns", "cgns compress=lossless chunk_bytes=64", 2)
    with h5py.File(tmp_path / "u.cgns") as u, h5py.File(tmp_path / "p.cgns") as p:
        names = []
        p.visit(lambda n: names.append(n) if n.endswith(" data") and isinstance(p[n], h5py.Dataset) else None)
        x = p["Base/mesh/GridCoordinates/CoordinateX/ data"]
        assert x.chunks == (16,) and x.shape[0] // 16 > 1024
        for n in names:
            assert np.array_equal(u[n][()], p[n][()]), n
    if shutil.which("cgnsdiff"):
        r = subprocess.run(["cgnsdiff", "-d", tmp_path / "u.cgns", tmp_path / "p.cgns"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == "", r.stdout[-400:]


def test_restart_in_fortran_and_python(mesh, parted):
    """The Fortran and Python solvers restart from the C solver's file on other rank counts
    and write its bits."""
    full = mesh / "full.slf"
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", full, "aggregated", 8)
    ran = 0
    if SOLVER_F:
        mpirun(2, SOLVER_F, parted(2), mesh / "mesh.slf", mesh / "f.slf", "aggregated", 8, full, 3)
        assert (mesh / "f.slf").read_bytes() == full.read_bytes()
        ran += 1
    if SOLVER_PY and os.environ.get("PYTHONPATH"):
        python = os.environ.get("PYTHON", "python3")
        mpirun(1, python, SOLVER_PY, parted(1), mesh / "mesh.slf", mesh / "p.slf", "aggregated", 8, full, 6, "independent")
        assert (mesh / "p.slf").read_bytes() == full.read_bytes()
        ran += 1
    if not ran:
        pytest.skip("neither the Fortran nor the Python solver is built")


def test_restart_from_a_frame_the_file_does_not_have(mesh, parted):
    mpirun(2, SOLVER, parted(2), mesh / "mesh.slf", mesh / "full.slf", "aggregated", 3)
    proc = mpirun(2, SOLVER, parted(2), mesh / "mesh.slf", mesh / "again.slf", "aggregated", 10, mesh / "full.slf", 7,
                  check=False)
    conftest.assert_status(proc, 1, "has 3 frames, no frame 7")  # the solver's status for a failed call


def test_no_per_rank_file_at_all(ab, mesh, parted):
    """The part from the global geometry and a partition file (ab_part_open_global), the
    restart from one shared file: a run and its restart on another rank count with no
    per-rank file, the same bits as the per-rank-file run."""
    full = mesh / "full.slf"
    mpirun(3, SOLVER, parted(3), mesh / "mesh.slf", full, "aggregated", 8)
    for n in (1, 2, 3):
        assert ab("partition", mesh / "mesh.slf", "-n", n, "--layout", "partition-file", "-o", mesh / "e").returncode == 0
        epart = mesh / "e" / f"mesh.slf.epart.{n}"
        mpirun(n, SOLVER, epart, mesh / "mesh.slf", mesh / f"g{n}.slf", "aggregated", 8)
        assert (mesh / f"g{n}.slf").read_bytes() == full.read_bytes(), n
        mpirun(n, SOLVER, epart, mesh / "mesh.slf", mesh / f"h{n}.slf", "collective", 8, full, 4)
        assert (mesh / f"h{n}.slf").read_bytes() == full.read_bytes(), n
    assert sorted(p.name for p in (mesh / "e").iterdir()) == [f"mesh.slf.epart.{n}" for n in (1, 2, 3)]
    # The Fortran and Python solvers too (ab_part_open_global in the module, read_part_global).
    if SOLVER_F:
        mpirun(2, SOLVER_F, mesh / "e" / "mesh.slf.epart.2", mesh / "mesh.slf", mesh / "f.slf", "aggregated", 8)
        assert (mesh / "f.slf").read_bytes() == full.read_bytes()
    if SOLVER_PY and os.environ.get("PYTHONPATH"):
        mpirun(3, os.environ.get("PYTHON", "python3"), SOLVER_PY, mesh / "e" / "mesh.slf.epart.3", mesh / "mesh.slf",
               mesh / "p.slf", "aggregated", 8, full, 2)
        assert (mesh / "p.slf").read_bytes() == full.read_bytes()
