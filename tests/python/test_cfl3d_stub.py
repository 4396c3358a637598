"""integrations/cfl3d/anabranch_cfl3d.F (CFL3D's WREST, RREST and PLOT3D replaced: each rank
writes and reads its own blocks of restart.bin, and writes its own blocks of the PLOT3D files,
through anabranch) without CFL3D: tests/cfl3d_stub, a stand-in for the CFL3D run around the
routines, built by CMake with CFL3D's flags in CFL3D's two builds: MPI (-DDIST_MPI: rank 0 the
host, holding no block, ranks 1..P-1 the blocks' owners) and sequential (one process, no MPI of
its own). AB_CFL3D_STUB names the folder of both.

The stand-in's `ref` mode writes each case's restart file with plain Fortran WRITE statements in
CFL3D's record layout (checked here record by record against that layout); the replacement's
file must be the same bytes, from 1 (sequential), 2, 3 and 4 ranks, and each owner must get its
arrays back exactly on another rank count. Its `plot3d` mode makes PLOT3D output as CFL3D's
qout.F does, with a stand-in of CFL3D's own PLOT3D (cfl3d_fallback.F90) whose files are checked
value by value against PLOT3D's layout; the replacement's must be the same bytes."""
import math
import os
import pathlib
import shutil
import struct
import subprocess
import sys

import pytest

import conftest
from conftest import assert_status, mpirun, run

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

STUB = os.environ.get("AB_CFL3D_STUB")
# The stand-in's grids (jdim, kdim, idim), in file order, its cases (ivisc, iwghost, nummem,
# a record after the blocks) and the cycles of its last dump.
GRIDS = [(5, 4, 3), (9, 7, 2), (3, 6, 5), (7, 5, 4)]
CASES = {"lam": ((0, 0, 0), 1, 2, False), "vis2": ((2, 2, 0), 1, 2, False), "sst": ((0, 0, 7), 1, 2, True),
         "easm": ((0, 0, 8), 0, 2, False), "bb": ((0, 0, 4), 1, 2, False), "k30": ((0, 0, 30), 0, 3, False),
         "k40": ((0, 0, 40), 1, 4, False)}
NTT = 7
READ_AT = {1: 3, 2: 4, 3: 1, 4: 2}  # each write's file restarted on another rank count


def exe(build):
    if not STUB:
        pytest.skip("the CFL3D stand-in is not built (no Fortran compiler; AB_CFL3D_STUB)")
    path = pathlib.Path(STUB) / f"cfl3d_{build}"
    assert path.exists(), f"AB_CFL3D_STUB={STUB} has no {path.name}"
    return path


def stub(ranks, mode, prefix, *cases, env=None):
    """The stand-in: at 1 rank the sequential build, run as CFL3D's sequential build is (no
    launcher); at more the MPI build under mpiexec."""
    if ranks == 1:
        return run([exe("seq"), mode, prefix, *cases], capture_output=True, text=True, timeout=120,
                   env=dict(conftest.MPI_ENV, **(env or {})))
    return mpirun(ranks, exe("mpi"), mode, prefix, *cases, env=env)


def records(path):
    """The payloads of a gfortran sequential unformatted file (4-byte little-endian markers)."""
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        (n,) = struct.unpack_from("<i", data, pos)
        assert 0 <= n and pos + 8 + n <= len(data), (path.name, pos, n)
        assert data[pos + 4 + n:pos + 8 + n] == data[pos:pos + 4], (path.name, pos)
        out.append(data[pos + 4:pos + 4 + n])
        pos += 8 + n
    return out


def layout(case):
    """The records of a case's restart file as CFL3D's dist/wrest.F writes them: (name, bytes)."""
    ivisc, iwg, nummem, trail = CASES[case]
    ivmx, out = max(ivisc), []
    for g, (j, k, i) in enumerate(GRIDS):
        jkim = (j - 1) * (k - 1) * (i - 1)
        fq = (j - 1) * (k - 1) + (k - 1) * (i - 1) + (j - 1) * (i - 1)
        fv = j * k + k * (i - 1) + j * (i - 1)
        out += [("B1", 20 * 8 + 8 + 3 * 4 + 8 + 8 + 4 + 8)]
        out += [("B2", 16 * NTT * 8)] if g == 0 else []
        out += [("B3", 5 * jkim * 8)] + ([("B4", 20 * fq * 8)] if iwg else []) + [("B5", 12)]
        if g == 0:
            out += [("B6", 2 * NTT * 8 + 2 * NTT * 4)]
            if ivmx >= 30:
                out += [("B6a", 4)] + [("B6b", NTT * 12)] * (nummem - 2)
        if ivmx >= 2:
            out += [("B7", jkim * 8)] + ([("B8", 4 * fv * 8)] if iwg else [])
        if ivmx >= 4:
            out += [("B9", 2 * jkim * 8)]
            out += [("B9a", 4), ("B9b", (nummem - 2) * jkim * 8)] if ivmx >= 30 else []
            if iwg:
                out += [("B10", 8 * fv * 8)] + ([("B10a", 4 * (nummem - 2) * fv * 8)] if ivmx >= 30 else [])
            out += [("B11", jkim * 8)]
        if 4 in ivisc or 25 in ivisc:
            out += [("B12", jkim * 8), ("B13", jkim * 8), ("B14", jkim * 8)]
        if {8, 9, 13, 14} & set(ivisc):
            out += [("B15", jkim * 8)]
    return out + ([("after the blocks", 4)] if trail else [])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Each case's file as the stand-in writes it with Fortran WRITE statements alone."""
    exe("mpi")
    work = tmp_path_factory.mktemp("cfl3d_ref")
    proc = stub(1, "ref", work / "ref")
    assert_status(proc, 0)
    return {case: work / f"ref-{case}.bin" for case in CASES}


def test_reference_is_cfl3ds_layout(reference):
    """The reference's records, their sizes and the values that say what follows: the header's
    dimensions and ntt, ivisc, nummem."""
    for case, path in reference.items():
        recs, want = records(path), layout(case)
        assert [len(r) for r in recs] == [n for _, n in want], (case, [name for name, _ in want])
        ivisc, _, nummem, _ = CASES[case]
        g = 0
        for (name, _), rec in zip(want, recs):
            if name == "B1":  # title(20), xmach, jdim, kdim, idim, alpha, reue, ntt, time
                assert struct.unpack_from("<3i", rec, 168) == GRIDS[g], case
                assert struct.unpack_from("<i", rec, 196) == (NTT,), case
                g += 1
            elif name == "B5":
                assert struct.unpack("<3i", rec) == ivisc, case
            elif name in ("B6a", "B9a"):
                assert struct.unpack("<i", rec) == (nummem,), case
            elif name == "after the blocks":
                assert struct.unpack("<i", rec) == (0,), case
        assert g == len(GRIDS)


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_restart_file_is_cfl3ds_and_reads_back(tmp_path, reference, ranks):
    """Two restart dumps of every case (the last one stays) over an older, longer file: the
    reference's bytes, WREST's lines in the host's cfl3d.out, and what WREST tells the host
    (thetay, the eddy-viscosity limit: the stand-in checks). Then RREST on another rank count:
    each owner's arrays, the histories, ntt and time as written (the stand-in checks)."""
    for case in CASES:
        (tmp_path / f"w-{case}.bin").write_bytes(b"\xff" * 200000)
    proc = stub(ranks, "write", tmp_path / "w")
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout and "CFL3D's own" not in proc.stdout, proc.stdout
    for case, ref in reference.items():
        assert (tmp_path / f"w-{case}.bin").read_bytes() == ref.read_bytes(), case
    lines = [line.split() for line in (tmp_path / "w.out").read_text().splitlines() if "writing restart file" in line]
    assert [int(w[-1]) for w in lines] == [1, 3, 5, 7] * 2 * len(CASES)
    proc = stub(READ_AT[ranks], "read", tmp_path / "w", env={"ANABRANCH_CFL3D_VERBOSE": "1"})
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout and "CFL3D's own" not in proc.stdout, proc.stdout
    # the run's first dump after the restart goes at once (the blocks are the restart's)
    for case, ref in reference.items():
        assert (tmp_path / f"w-again-{case}.bin").read_bytes() == ref.read_bytes(), case
    assert proc.stderr.count("blocks at once:") == len(CASES), proc.stderr


@pytest.mark.parametrize("ranks", [2, 4])
def test_owners_write_at_once_with_one_message_each_way(tmp_path, reference, ranks):
    """From the second dump of a run on (the blocks the host saw in the first), the host sends
    each owning rank one table of its blocks' offsets (and the path) at the dump's first block
    and takes one answer at the last: 3 messages a rank, whatever the number of blocks, with
    no wait between blocks. The first dump goes block by block (3 messages a block). The
    file is the reference's either way, and a dump at once leaves no temporary file."""
    proc = stub(ranks, "write", tmp_path / "w", env={"ANABRANCH_CFL3D_VERBOSE": "1"})
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout, proc.stdout
    for case, ref in reference.items():
        assert (tmp_path / f"w-{case}.bin").read_bytes() == ref.read_bytes(), case
    owners = min(ranks - 1, len(GRIDS))
    err = proc.stderr.splitlines()
    dumps = [line.split() for line in err if "blocks at once:" in line]
    assert [(int(w[4]), int(w[-2])) for w in dumps] == [(len(GRIDS), 3 * owners)] * len(CASES), proc.stderr
    by_block = [line for line in err if line.endswith("s (anabranch)")]
    assert len(by_block) == len(GRIDS) * len(CASES), proc.stderr
    # a dump at once is written under another name, renamed at its last block
    assert not list(tmp_path.glob("*.part")), sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_each_levels_first_dump_goes_under_another_name(tmp_path, reference, ranks):
    """A run over two mesh levels (the stand-in's levels mode): each level's first dump has
    blocks the last dump did not, so it goes block by block; it is written to
    restart.bin.part and renamed at its last block, which the host knows from the deck
    CFL3D keeps open (its grids). The file is the reference's, with nothing left beside it."""
    for case in ("lam", "sst"):
        (tmp_path / f"w-{case}.bin").write_bytes(b"\xff" * 200000)  # an older, longer file
    proc = stub(ranks, "levels", tmp_path / "w", "lam", "sst", env={"ANABRANCH_CFL3D_VERBOSE": "1"})
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout, proc.stdout
    for case in ("lam", "sst"):
        assert (tmp_path / f"w-{case}.bin").read_bytes() == reference[case].read_bytes(), case
    renamed = [line.split() for line in proc.stderr.splitlines() if "dump renamed at block" in line]
    assert [int(w[6]) for w in renamed] == [8, 7] * 2, proc.stderr  # the coarser level's last block, the finest's
    assert not list(tmp_path.glob("*.part")), sorted(p.name for p in tmp_path.iterdir())


def test_without_the_deck_a_dump_block_by_block_goes_in_place(tmp_path, reference):
    """No deck on CFL3D's unit (AB_STUB_NODECK: a main that is not CFL3D's): the host cannot
    know a block-by-block dump's end, so the dump is written in place, as CFL3D writes it."""
    proc = stub(3, "levels", tmp_path / "w", "sst", env={"ANABRANCH_CFL3D_VERBOSE": "1", "AB_STUB_NODECK": "1"})
    assert_status(proc, 0)
    assert (tmp_path / "w-sst.bin").read_bytes() == reference["sst"].read_bytes()
    assert "renamed" not in proc.stderr, proc.stderr


@pytest.mark.faults
@pytest.mark.parametrize("ranks", [1, 3])
def test_file_size_limit_at_a_later_levels_first_dump_keeps_the_last_restart(tmp_path, ranks):
    """The finer level's first dump (block by block) stopped by the file-size limit: one line
    naming restart.bin.part, status 1 on every rank, and restart.bin is still the coarser
    level's dump, whole (the file a run of that dump alone leaves); no .part is left. (MPI's
    shared memory is files too: Open MPI's and PMIx's data store, MPICH's and UCX's; the run
    uses TCP and PMIx's in-memory store, so that the limit meets the dump first.)"""
    import resource

    one = tmp_path / "one"
    one.mkdir()
    proc = stub(ranks, "levels", one / "w", "sst", env={"AB_STUB_DUMPS": "1"})
    assert_status(proc, 0)
    first = (one / "w-sst.bin").read_bytes()
    limit = len(first) + 200  # the second dump's file is longer (its histories: ntt 7 against 4)

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(conftest.MPI_ENV, OMPI_MCA_btl="self,tcp", PMIX_MCA_gds="hash", UCX_TLS="self,tcp", MPIR_CVAR_NOLOCAL="1")
    if ranks == 1:
        proc = run([exe("seq"), "levels", tmp_path / "w", "sst"], capture_output=True, text=True, timeout=120, env=env,
                   preexec_fn=limited)
    else:
        proc = mpirun(ranks, exe("mpi"), "levels", tmp_path / "w", "sst", env=env, preexec_fn=limited)
    assert_status(proc, 1)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("anabranch_cfl3d: ")]
    assert len(lines) == 1 and f"{tmp_path}/w-sst.bin.part" in lines[0] and "File too large" in lines[0], proc.stderr
    assert (tmp_path / "w-sst.bin").read_bytes() == first
    assert not list(tmp_path.glob("*.part")), sorted(p.name for p in tmp_path.iterdir())


def test_off_by_environment_is_cfl3ds_own(tmp_path, reference):
    """ANABRANCH_CFL3D=0: CFL3D's own WREST and RREST (the stand-in's stubs) on the host and on
    each block's owner, for every block; nothing written through anabranch."""
    proc = stub(3, "write", tmp_path / "w", "lam", env={"ANABRANCH_CFL3D": "0"})
    assert_status(proc, 0)
    said = [line for line in proc.stdout.splitlines() if "CFL3D's own wrest called" in line]
    owners = {1: 1, 3: 2, 5: 2, 7: 1}  # the stand-in's map at 3 ranks (CFL3D's compg2n)
    want = [f"block {b} on rank {r}" for b in owners for r in (0, owners[b])] * 2
    assert sorted(line.split("for ")[1] for line in said) == sorted(want), proc.stdout
    assert (tmp_path / "w-lam.bin").read_bytes() == b""
    proc = stub(3, "read", reference["lam"].parent / "ref", "lam", env={"ANABRANCH_CFL3D": "0"})
    assert_status(proc, 0)
    said = [line for line in proc.stdout.splitlines() if "CFL3D's own rrest called" in line]
    assert sorted(line.split("for ")[1] for line in said) == sorted(want[:8]), proc.stdout


@pytest.mark.faults
@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("mode,case,room,names", [("write", "sst", 40, ["w-sst.bin"]),
                                                  ("plot3d", "q3", 8, ["w-q3.g", "w-q3.q"])])
def test_full_disk_stops_every_rank_with_one_line(small_disk, ranks, mode, case, room, names):
    """The disk full while an owner writes its block of the restart file, or of the PLOT3D
    files: one line naming the file and the reason, and the run stopped with status 1 on every
    rank (anabranch_cfl3d.F's abc_die: MPI_Abort(MPI_COMM_WORLD, 1)), no crash. (A file-size
    limit cannot stand in here: gfortran's runtime turns SIGXFSZ into a crash even when
    ignored, and MPI_Init's shared memory meets the limit first; an unwritable folder does not
    stop root.)"""
    left = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (left.f_bavail * left.f_frsize - room * 1024))
    proc = stub(ranks, mode, small_disk / "w", case)
    assert_status(proc, 1)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("anabranch_cfl3d: ")]
    assert len(lines) == 1, proc.stderr
    assert any(f"{small_disk}/{name}" in lines[0] for name in names), lines[0]
    assert "No space left on device" in lines[0], lines[0]
    assert "every check passed" not in proc.stdout


def test_sequential_build_under_mpiexec(tmp_path, reference):
    """The sequential build started by mpiexec -n 1 (as a batch system may start any program):
    the file is the reference's. anabranch_cfl3d.F starts MPI itself there and never ends it,
    which Open MPI's mpiexec reports as a failed job (status 1)."""
    proc = mpirun(1, exe("seq"), "write", tmp_path / "w", "lam")
    assert "every check passed" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "w-lam.bin").read_bytes() == reference["lam"].read_bytes()
    assert_status(proc, 0)


# The PLOT3D cases of the stand-in (cfl3d_stub.F90's PNAME): (i2d, ialph, iblnk, ifunc, strides)
PCASES = {"q3": (0, 0, 1, 0, False), "qa": (0, 1, 0, 0, False), "q2": (1, 0, 1, 0, False),
          "fn": (0, 0, 0, -5, False), "qs": (0, 0, 1, 0, True), "mix": (0, 0, 1, 0, False)}


def plot3d_points(g, case):
    """The points (i, j, k) of grid g (0-based) a case writes, in PLOT3D's order (i fastest)."""
    j_n, k_n, i_n = GRIDS[g]
    i2d, _, _, _, strided = PCASES[case]
    ir, jr, kr = range(1, i_n + 1), range(1, j_n + 1), range(1, k_n + 1)
    if i2d:
        ir = range(1, 2)
    if strided:
        ir, jr, kr = range(1, i_n + 1, 2), range(2, j_n + 1, 3), range(1, k_n + 1, 2)
    return [(i, j, k) for k in kr for j in jr for i in ir], (len(ir), len(jr), len(kr))


def expected_plot3d(case):
    """The records of a case's grid and q files as PLOT3D (and CFL3D's qout.F and plot3d.F)
    lay them out, from the stand-in's values: x = 1000 g + 100 i + 10 k + j (g from 1),
    y = x + 1/4, z = x + 1/2, q(m) = x + m/8 + (frame - 1)/16, blank 0 where i + j + k is a
    multiple of 4; the header Mach 0.85, alpha in degrees plus the block's thetay, Re 2.5e6,
    time 0.25 frame."""
    i2d, ialph, iblnk, ifunc, _ = PCASES[case]
    f32 = lambda vals: struct.pack(f"<{len(vals)}f", *vals)
    i32 = lambda vals: struct.pack(f"<{len(vals)}i", *vals)
    dims = [plot3d_points(g, case)[1] for g in range(len(GRIDS))]
    cut = (lambda d: d[1:]) if i2d else (lambda d: d)
    grid = [i32([len(GRIDS)]), i32([v for d in dims for v in cut(d)])]
    q = []
    for frame in (1, 2):
        q += [i32([len(GRIDS)]), i32([v for d in dims for v in cut(d) + ((1,) if ifunc else ())])]
        for g in range(len(GRIDS)):
            pts, _ = plot3d_points(g, case)
            x = [1000 * (g + 1) + 100 * i + 10 * k + j for i, j, k in pts]
            y, z = [v + 0.25 for v in x], [v + 0.5 for v in x]
            if frame == 1:
                if ialph and not i2d:
                    y, z = z, [-v for v in y]
                rec = f32(x + (z if i2d else y + z))
                if iblnk:
                    rec += i32([0 if (i + j + k) % 4 == 0 else 1 for i, j, k in pts])
                grid.append(rec)
            qm = {m: [v + m / 8 + (frame - 1) / 16 for v in x] for m in range(1, 6)}
            if ifunc:
                q.append(f32(qm[1]))
                continue
            nbl = 2 * g + 1
            alpha = (45.0 / math.atan(1.0)) * (0.0523 + (0.01 * nbl + 0.003))
            q.append(f32([0.85, alpha, 2.5e6, 0.25 * frame]))
            order = [1, 2, 4, 5] if i2d else [1, 2, 4, 3, 5] if ialph else [1, 2, 3, 4, 5]
            vals = []
            for m in order:
                vals += [-v for v in qm[m]] if (ialph and not i2d and m == 3) else qm[m]
            q.append(f32(vals))
    return grid, q


@pytest.fixture(scope="module")
def plot3d_reference(tmp_path_factory):
    """Each PLOT3D case as the stand-in's own PLOT3D writes it (ANABRANCH_CFL3D=0, one process:
    Fortran WRITE statements on the host's units 3 and 4, as CFL3D's plot3d.F)."""
    exe("mpi")
    work = tmp_path_factory.mktemp("cfl3d_p3d")
    proc = stub(1, "plot3d", work / "ref", env={"ANABRANCH_CFL3D": "0"})
    assert_status(proc, 0)
    assert "done by CFL3D's own routines" in proc.stdout, proc.stdout
    return {case: (work / f"ref-{case}.g", work / f"ref-{case}.q") for case in PCASES}


def test_plot3d_reference_is_plot3d(plot3d_reference):
    """The reference's records are PLOT3D's: the grid count, the dimensions (i, j, k; 2D: j, k;
    a function file's count of functions), each grid's x, y, z (2D: x, z) i fastest with
    IBLANK, then each frame's q header and values (alpha's y-z turn: the third and fourth
    values swapped, the turned one negated), or the function's values."""
    for case, (gfile, qfile) in plot3d_reference.items():
        grid, q = expected_plot3d(case)
        got = records(gfile)
        assert [len(r) for r in got] == [len(r) for r in grid], case
        assert got == grid, case
        got = records(qfile)
        assert [len(r) for r in got] == [len(r) for r in q], case
        for n, (a, b) in enumerate(zip(got, q)):
            if len(a) == 16:  # the header: alpha through atan and degrees
                assert struct.unpack("<4f", a) == pytest.approx(struct.unpack("<4f", b), rel=1e-6), (case, n)
            else:
                assert a == b, (case, n)


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_plot3d_files_are_cfl3ds_own(tmp_path, plot3d_reference, ranks):
    """CFL3D's PLOT3D output through anabranch (each owner writes its grid's records into the
    two files at the host's offsets): every case's files are the reference's bytes, from 1
    (sequential), 2, 3 and 4 ranks, two frames each, with a grid CFL3D writes itself between
    anabranch's (mix); the host prints CFL3D's lines for each block."""
    proc = stub(ranks, "plot3d", tmp_path / "w")
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout and "CFL3D's own" not in proc.stdout, proc.stdout
    for case, (gfile, qfile) in plot3d_reference.items():
        assert (tmp_path / f"w-{case}.g").read_bytes() == gfile.read_bytes(), case
        assert (tmp_path / f"w-{case}.q").read_bytes() == qfile.read_bytes(), case
    out = (tmp_path / "w.out").read_text().splitlines()
    said = [line for line in out if "writing plot3d file" in line]
    assert len(said) == len(PCASES) * 2 * len(GRIDS) - 2, said  # mix: grid 3 is CFL3D's own
    assert said[0] == " writing plot3d file for IDIM X JDIM X KDIM =    3 x     5 x     4 grid"
    assert "writing plot3d file for JDIM X KDIM =    9 x     7 grid" in out
    assert "   plot3dq file is a function file of Cp at grid points" in out
    assert "   plot3d files to be read with /mgrid/blank/2d qualifiers" in out


def test_plot3d_off_by_environment_is_cfl3ds_own(tmp_path, plot3d_reference):
    """ANABRANCH_CFL3D=0 at 3 ranks: the stand-in's own PLOT3D on every block (the host
    receives each block from its owner), the same files."""
    proc = stub(3, "plot3d", tmp_path / "w", "q3", "fn", env={"ANABRANCH_CFL3D": "0"})
    assert_status(proc, 0)
    assert "done by CFL3D's own routines" in proc.stdout, proc.stdout
    for case in ("q3", "fn"):
        assert (tmp_path / f"w-{case}.g").read_bytes() == plot3d_reference[case][0].read_bytes(), case
        assert (tmp_path / f"w-{case}.q").read_bytes() == plot3d_reference[case][1].read_bytes(), case


def test_plot3d_units_of_the_other_byte_order_are_cfl3ds_own(tmp_path):
    """Units 3 and 4 opened big-endian (gfortran's GFORTRAN_CONVERT_UNIT, as CONVERT= would):
    the replacement hands every block to CFL3D's own PLOT3D, with one notice naming the unit,
    and the files are big-endian throughout."""
    proc = stub(1, "plot3d", tmp_path / "w", "q3", env={"GFORTRAN_CONVERT_UNIT": "big_endian:3-4"})
    assert_status(proc, 0)
    assert "done by CFL3D's own routines" in proc.stdout, proc.stdout
    notices = [line for line in proc.stderr.splitlines() if line.startswith("anabranch_cfl3d: ")]
    assert notices == ["anabranch_cfl3d: unit 4 converts byte order (BIG_ENDIAN): CFL3D's own PLOT3D output"], proc.stderr
    for name in ("w-q3.g", "w-q3.q"):
        data = (tmp_path / name).read_bytes()
        assert data[:12] == struct.pack(">3i", 4, len(GRIDS), 4), name


# anabranch-cfl3d's deck commands (integrations/cfl3d/anabranch_cfl3d_tool.py), on decks of
# CFL3D's layout: the stand-in's, and a split deck's boundary segments.
TOOL = pathlib.Path(__file__).resolve().parents[2] / "integrations" / "cfl3d" / "anabranch_cfl3d_tool.py"
STANDIN_DECK = pathlib.Path(__file__).resolve().parents[1] / "cfl3d_stub" / "cfl3d.inp"


def tool(*args):
    return run([sys.executable, TOOL, *map(str, args)], capture_output=True, text=True, timeout=60)


def values(lines, *words):
    i = next(k for k, line in enumerate(lines) if all(w in line.lower().split() for w in words))
    return i, lines[i + 1].split()


def test_restart_deck_is_irest_1_on_the_finest_level(tmp_path):
    proc = tool("restart-deck", STANDIN_DECK, "-o", tmp_path / "restart.inp", "--cycles", 40)
    assert_status(proc, 0)
    before, after = STANDIN_DECK.read_text().split("\n"), (tmp_path / "restart.inp").read_text().split("\n")
    assert values(after, "dt", "irest")[1][1] == "1" and values(before, "dt", "irest")[1][1] == "0"
    assert values(after, "mseq", "mgflag")[1][0] == "1"
    i, ncyc = values(after, "ncyc", "mglevg")
    j, finest = values(before, "ncyc", "mglevg")
    assert ncyc == ["40"] + before[j + 2].split()[1:]  # the finest level's line (the last), its cycles replaced
    assert values(after, "mit1")[0] == i + 2  # one ncyc line, then one mit line
    assert len(after) == len(before) - 2
    # the rest of the deck untouched
    assert [l for l in after if l not in before] == [after[values(after, "dt", "irest")[0] + 1], after[values(after, "mseq", "mgflag")[0] + 1], after[i + 1]]


def test_periodic_self_points_each_piece_at_itself(tmp_path):
    seg = "{g:>10}{s:>10}{bc:>10}         1        21         1       101         4\n      nblp     dthtx     dthty     dthtz\n   1.00000  -1.00000   0.00000   0.00000\n"
    deck = ("i0:   grid   segment    bctype      jsta      jend      ksta      kend     ndata\n"
            + "".join(seg.format(g=g, s=1, bc=2005) for g in (1, 2, 3))
            + "idim: grid   segment    bctype      jsta      jend      ksta      kend     ndata\n"
            + seg.format(g=2, s=1, bc=2005) + "{:>10}{:>10}{:>10}         1        21         1       101         0\n".format(3, 1, 1003)
            + "      mseq    mgflag    iconsf       mtt      ngam\n         1         1         0         0         2\n")
    (tmp_path / "split.inp").write_text(deck)
    proc = tool("periodic-self", tmp_path / "split.inp", "-o", tmp_path / "fixed.inp")
    assert_status(proc, 0)
    assert "3 periodic segment(s)" in proc.stderr
    lines = (tmp_path / "fixed.inp").read_text().split("\n")
    nblp = [float(lines[k + 2].split()[0]) for k, l in enumerate(lines) if len(l.split()) == 8 and l.split()[2] == "2005"]
    assert nblp == [1.0, 2.0, 3.0, 2.0]
    assert [l for l in lines if "1003" in l] == [l for l in deck.split("\n") if "1003" in l]


@pytest.mark.parametrize("args,says", [
    (("restart-deck", "nowhere.inp"), "nowhere.inp: No such file or directory"),
    (("periodic-self", "{deck}", "-o", "{deck}"), "the output is the input deck"),
    (("restart-deck", "{empty}"), "no line with dt irest"),
    (("build", "nowhere"), "nowhere: no build/ folder"),
    (("check", "{deck}"), "nm cannot read it"),
])
def test_tool_errors_name_the_file_with_status_1(tmp_path, args, says):
    (tmp_path / "d.inp").write_text(STANDIN_DECK.read_text())
    (tmp_path / "e.inp").write_text("input/output files:\n")
    args = [a.format(deck=tmp_path / "d.inp", empty=tmp_path / "e.inp") for a in args]
    proc = run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert_status(proc, 1)
    assert proc.stderr.startswith("anabranch-cfl3d: error: ") and says in proc.stderr, proc.stderr
    assert (tmp_path / "d.inp").read_text() == STANDIN_DECK.read_text()  # never the input changed


def test_check_tells_a_linked_build_from_cfl3ds_own():
    """`check` on the stand-in linked by `anabranch-cfl3d build` (status 0, the library named)
    and on an object of the stand-in tree that holds CFL3D's own routines (status 1)."""
    linked = exe("mpi")
    proc = tool("check", linked)
    assert_status(proc, 0)
    assert "restart and PLOT3D files through anabranch" in proc.stdout and "libanabranch_c" in proc.stdout, proc.stdout
    own = linked.parent.parent / "cfl3d_tree" / "build" / "cfl" / "mpi" / "wrest.o"
    proc = tool("check", own)
    assert_status(proc, 1)
    assert "CFL3D's own restart and PLOT3D routines" in proc.stdout, proc.stdout


def test_check_warns_of_a_build_that_ignores_standard_input(tmp_path):
    """A CFL3D built with -DNOREDIRECT reads ./cfl3d.inp, never standard input: its main.o
    lacks the name of the copy CFL3D makes of its input (tempz3y2x1.inp). `check` still says
    the routines are anabranch's (status 0) and warns in one line."""
    linked = exe("mpi")
    data = linked.read_bytes()
    assert b"tempz3y2x1.inp" in data  # the stand-in's main copies its input as CFL3D's does
    noredirect = tmp_path / "cfl3d_mpi"
    noredirect.write_bytes(data.replace(b"tempz3y2x1.inp", b"cfl3d.inp\0\0\0\0\0"))
    noredirect.chmod(0o755)
    proc = tool("check", noredirect)
    assert_status(proc, 0)
    assert "through anabranch" in proc.stdout
    warns = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warns) == 1 and "-DNOREDIRECT" in warns[0] and "cfl3d.inp" in warns[0], proc.stderr
    assert "warning" not in tool("check", linked).stderr


def test_cgns_dir_lets_a_program_that_calls_cgns_without_the_header_link(tmp_path):
    """`anabranch-cfl3d cgns-dir DIR` (CFL3D's Install -cgnsdir=DIR over Debian's CGNS): a
    one-line cgnslib_f.h (`use cgns`) beside cgns.mod, and lib/libcgns.so, a linker script
    naming CGNS's library and libcgnsfix.a (the module's object, cg_close_f_ and
    cg_error_print_f_). A Fortran program built as CFL3D is (the header in one routine, the
    two calls in another without it, -I DIR -L DIR/lib -lcgns) links and runs: it makes a
    CGNS file and closes it."""
    if not shutil.which("mpif90") or not (pathlib.Path("/usr/include") / "cgns.mod").exists():
        pytest.skip("no Fortran compiler or no CGNS Fortran module (Debian: libcgns-dev)")
    d = tmp_path / "cgnsdir"
    proc = tool("cgns-dir", d)
    assert_status(proc, 0)
    assert (d / "cgnslib_f.h").read_text() == "      use cgns\n"
    assert (d / "cgns.mod").resolve() == (pathlib.Path("/usr/include") / "cgns.mod").resolve()
    script = (d / "lib" / "libcgns.so").read_text()
    assert "INPUT(" in script and "libcgnsfix.a" in script and "libcgns.so" in script, script
    members = subprocess.run(["nm", "-g", "--defined-only", d / "lib" / "libcgnsfix.a"], capture_output=True, text=True).stdout
    assert "cg_close_f_" in members and "cg_error_print_f_" in members, members
    (tmp_path / "prog.F").write_text(
        "      subroutine opens(fn)\n"
        "#     include \"cgnslib_f.h\"\n"
        "      integer fn, ier\n"
        "      call cg_open_f('made.cgns', CG_MODE_WRITE, fn, ier)\n"
        "      if (ier .ne. 0) stop 3\n"
        "      end\n"
        "      program prog\n"
        "      integer fn, ier\n"
        "      call opens(fn)\n"
        "      call cg_close_f(fn, ier)\n"
        "      if (ier .ne. 0) call cg_error_print_f\n"
        "      end\n")
    r = subprocess.run(["mpif90", "-cpp", f"-I{d}", "prog.F", "-o", "prog", f"-L{d / 'lib'}", "-lcgns"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([tmp_path / "prog"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and (tmp_path / "made.cgns").stat().st_size > 0, r.stderr
    bad = tool("cgns-dir", tmp_path / "x", "--cgns-libdir", tmp_path / "none")
    assert_status(bad, 1)
    assert "no libcgns.so in" in bad.stderr, bad.stderr


STUB_CGNS = os.environ.get("AB_CFL3D_STUB_CGNS")


def cgns_stub(ranks, prefix, *cases, env=None):
    if not STUB_CGNS:
        pytest.skip("the CFL3D stand-in built with CGNS is not there (no libcgns-dev; AB_CFL3D_STUB_CGNS)")
    return mpirun(ranks, pathlib.Path(STUB_CGNS) / "cfl3d_mpi", "cgns", prefix, *cases, env=env)


def cgns_tree(path):
    """Every node of a CGNS (HDF5) file: {path: (attributes, children in creation order, the
    bytes and shape of its values)}, read by h5py."""
    h5py = pytest.importorskip("h5py")
    out = {}

    def walk(group, where):
        names = []
        group.id.links.iterate(lambda n: names.append(n.decode()), idx_type=h5py.h5.INDEX_CRT_ORDER)
        attrs = {k: bytes(v) if hasattr(v, "tobytes") and not hasattr(v, "shape") else repr(v) for k, v in group.attrs.items()}
        out[where] = (attrs, names)
        for n in names:
            item = group[n]
            if isinstance(item, h5py.Dataset):
                v = item[()]
                out[where + "/" + n] = (str(v.dtype), v.shape, v.tobytes())
            else:
                walk(item, where + "/" + n)
    with h5py.File(path, "r") as f:
        walk(f, "")
    return out


@pytest.mark.parametrize("ranks", [2, 3, 5])
def test_cgns_dumps_from_the_owners_are_cfl3ds_own(tmp_path, ranks):
    """CFL3D built with CGNS (icgns 1): its dumps go into the grid's CGNS file. Through
    anabranch, the host makes every node with CFL3D's routines (the stand-in of cgnstools.F,
    renamed as anabranch-cfl3d build renames CFL3D's) and the owners write the arrays
    (boundary values, FlowSolution, turbulence fields) where HDF5 put them. The file must be
    the one CFL3D's own routine (the host writing every block) makes, node for node, value for
    value, children in the same order, for four turbulence settings; the second and third
    dumps are written at once: 4 messages through rank 0 an owning rank, and one more (the
    first block's thetay)."""
    cases = ["lam", "vis2", "easm", "k40"]
    own = cgns_stub(ranks, tmp_path / "own", *cases, env={"ANABRANCH_CFL3D": "0"})
    assert_status(own, 0)
    proc = cgns_stub(ranks, tmp_path / "ab", *cases, env={"ANABRANCH_CFL3D_VERBOSE": "1"})
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout, proc.stdout
    for case in cases:
        want, got = cgns_tree(tmp_path / f"own-{case}.cgns"), cgns_tree(tmp_path / f"ab-{case}.cgns")
        assert list(got) == list(want), case
        for node in want:
            assert got[node] == want[node], (case, node)
        arrays = [n for n in want if n.endswith("/ data") and ("FlowSolution" in n or "CFL3DBoundaryValues" in n)]
        assert any("Density" in n for n in arrays), case
        # ghost values (iwghost 1) under CFL3DBoundaryValues; without them the node is deleted
        assert any("Qj0_CFL3D" in n for n in arrays) == bool(CASES[case][1]), case
    owners = min(ranks - 1, len(GRIDS))
    dumps = [line.split() for line in proc.stderr.splitlines() if "written by their owners" in line]
    assert len(dumps) == 2 * len(cases), proc.stderr
    assert {int(w[-2]) for w in dumps} == {4 * owners + 1}, proc.stderr


@pytest.mark.faults
def test_a_cgns_dump_that_fails_leaves_the_last_good_file(small_disk, tmp_path):
    """A CGNS dump changes the grid's file in place (CFL3D's routines delete and make its
    nodes): the host keeps a copy of the file as the last dump left it (NAME.last) and drops
    it when the dump is done, so that a failure puts it back. On a disk that holds the copy
    but not the third dump: one line, status 1, and the file is the second dump's, node for
    node and value for value (the same run stopped after its second dump); no copy left. On a
    disk too small for the copy: a warning, the dumps written in place as CFL3D writes them."""
    two = tmp_path / "two"
    two.mkdir()
    assert_status(cgns_stub(3, two / "w", "sst", env={"AB_STUB_DUMPS": "2"}), 0)
    left = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (left.f_bavail * left.f_frsize - 405 * 1024))
    proc = cgns_stub(3, small_disk / "w", "sst")
    assert_status(proc, 1)
    said = proc.stderr + (small_disk / "w.out").read_text()
    lines = [line.strip() for line in said.splitlines() if line.strip().startswith("anabranch_cfl3d: ")]
    assert lines and all(line == lines[0] for line in lines) and "w-sst.cgns" in lines[0], said[-2000:]
    assert cgns_tree(small_disk / "w-sst.cgns") == cgns_tree(two / "w-sst.cgns")
    assert not list(small_disk.glob("*.last*")), sorted(p.name for p in small_disk.iterdir())
    # no room for the copy: written in place, and the run goes on
    (small_disk / "filler").unlink()
    for p in small_disk.glob("w*"):
        p.unlink()
    left = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (left.f_bavail * left.f_frsize - 380 * 1024))
    proc = cgns_stub(3, small_disk / "w", "sst")
    assert_status(proc, 0)
    assert "cannot keep a copy of" in proc.stderr and "written in place" in proc.stderr, proc.stderr


def test_cgns_without_anabranch_is_cfl3ds_own(tmp_path):
    """ANABRANCH_CFL3D=0 in a build with CGNS: every dump through CFL3D's own routine (the
    host writes every block; each owner's call is CFL3D's own), nothing at once."""
    proc = cgns_stub(3, tmp_path / "own", "lam", env={"ANABRANCH_CFL3D": "0", "ANABRANCH_CFL3D_VERBOSE": "1"})
    assert_status(proc, 0)
    assert "written by their owners" not in proc.stderr
    said = [line for line in proc.stdout.splitlines() if "CFL3D's own wrest called" in line]
    assert len(said) == 3 * len(GRIDS), proc.stdout
