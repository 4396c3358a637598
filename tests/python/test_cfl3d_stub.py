"""integrations/cfl3d/anabranch_cfl3d.F (CFL3D's WREST and RREST replaced: each rank writes and
reads its own blocks of restart.bin through anabranch) without CFL3D: tests/cfl3d_stub, a
stand-in for the CFL3D run around the two routines, built by CMake with CFL3D's flags in CFL3D's
two builds: MPI (-DDIST_MPI: rank 0 the host, holding no block, ranks 1..P-1 the blocks' owners)
and sequential (one process, no MPI of its own). AB_CFL3D_STUB names the folder of both.

The stand-in's `ref` mode writes each case's restart file with plain Fortran WRITE statements in
CFL3D's record layout (checked here record by record against that layout); the replacement's
file must be the same bytes, from 1 (sequential), 2, 3 and 4 ranks, and each owner must get its
arrays back exactly on another rank count."""
import os
import pathlib
import struct

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
    path = pathlib.Path(STUB) / f"cfl3d_stub_{build}"
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
    proc = stub(READ_AT[ranks], "read", tmp_path / "w")
    assert_status(proc, 0)
    assert "every check passed" in proc.stdout and "CFL3D's own" not in proc.stdout, proc.stdout


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
def test_full_disk_stops_every_rank_with_one_line(small_disk, ranks):
    """The restart file's disk full while an owner writes its block: one line naming the file
    and the reason, and the run stopped with status 1 on every rank (anabranch_cfl3d.F's
    abc_die: MPI_Abort(MPI_COMM_WORLD, 1)), no crash. (A file-size limit cannot stand in here:
    gfortran's runtime turns SIGXFSZ into a crash even when ignored, and MPI_Init's shared
    memory meets the limit first; an unwritable folder does not stop root.)"""
    room = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (room.f_bavail * room.f_frsize - 40 * 1024))
    proc = stub(ranks, "write", small_disk / "w", "sst")
    assert_status(proc, 1)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("anabranch_cfl3d: ")]
    assert len(lines) == 1, proc.stderr
    assert f"{small_disk}/w-sst.bin" in lines[0] and "No space left on device" in lines[0], lines[0]
    assert "every check passed" not in proc.stdout


def test_sequential_build_under_mpiexec(tmp_path, reference):
    """The sequential build started by mpiexec -n 1 (as a batch system may start any program):
    the file is the reference's. anabranch_cfl3d.F starts MPI itself there and never ends it,
    which Open MPI's mpiexec reports as a failed job (status 1)."""
    proc = mpirun(1, exe("seq"), "write", tmp_path / "w", "lam")
    assert "every check passed" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "w-lam.bin").read_bytes() == reference["lam"].read_bytes()
    assert_status(proc, 0)
