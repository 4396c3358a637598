"""integrations/telemac/anabranch_telemac.f as a TELEMAC user meets it: compiled with
nothing but TELEMAC's own compile command (mpif90 -c -O3 -cpp -DHAVE_MPI
-fconvert=big-endian -frecord-marker=4, no include folder of anabranch, no anabranch.mod),
linked with -lanabranch_c only, and run over stand-ins of the TELEMAC modules it uses
(tests/telemac_stub): every rank hands its frames to BIEF_DESIMP and the one T2DRES is
the file gretel makes of the per-rank results, byte for byte."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import assert_status, mpirun, run
from slf import read, shift_values

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

ROOT = pathlib.Path(__file__).resolve().parents[2]
STUB = ROOT / "tests/telemac_stub"
INTEGRATION = ROOT / "integrations/telemac/anabranch_telemac.f"
# The compile command of a TELEMAC configuration (systel.cfg's cmd_obj), as the runner uses it.
TELEMAC_FLAGS = ["-c", "-O3", "-cpp", "-DHAVE_MPI", "-fconvert=big-endian", "-frecord-marker=4"]


@pytest.fixture(scope="module")
def telemac_like(tmp_path_factory):
    """The stubs, the user Fortran file and the driver compiled and linked as TELEMAC would."""
    mpif90, lib = os.environ.get("AB_MPIF90"), os.environ.get("AB_C_LIBRARY")
    if not mpif90 or not lib:
        pytest.skip("no Fortran compiler configured (AB_MPIF90, AB_C_LIBRARY)")
    work = tmp_path_factory.mktemp("telemac_like")
    for src in [STUB / "bief_stub.f90", INTEGRATION, STUB / "driver.f90"]:
        r = subprocess.run([mpif90, *TELEMAC_FLAGS, str(src)], cwd=work, capture_output=True, text=True)
        assert r.returncode == 0, f"{src.name} does not compile with TELEMAC's flags alone:\n{r.stderr}"
    libdir = str(pathlib.Path(lib).parent)
    objs = sorted(str(p) for p in work.glob("*.o"))
    r = subprocess.run([mpif90, "-o", "t2d", *objs, f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-lanabranch_c"], cwd=work,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not list(work.glob("anabranch.mod")), "the user Fortran needs no anabranch module"
    return work / "t2d"


def case(ab, data, tmp_path, ranks):
    """A TELEMAC run's folder: T2DGEO, T2DCLI, per-rank results T2DRES0000P-0000R holding
    only header and mesh, the per-rank frames in PART0000P-0000R, and classic.slf, the file
    gretel (anabranch merge) makes of per-rank results with those frames."""
    shutil.copy(data / "geo_gouttedo.slf", tmp_path / "T2DGEO")
    shutil.copy(data / "geo_gouttedo.cli", tmp_path / "T2DCLI")
    shutil.copy(data / "r2d_gouttedo.slf", tmp_path / "PART")
    assert ab("partition", tmp_path / "PART", "-n", ranks, "-o", tmp_path, "--cli", tmp_path / "T2DCLI").returncode == 0
    for r in range(ranks):
        name = f"{ranks - 1:05d}-{r:05d}"
        shift_values(tmp_path / f"PART{name}", 1000.0 * (r + 1))  # interface nodes differ by rank, as in a run
        src = tmp_path / f"PART{name}"
        (tmp_path / f"T2DRES{name}").write_bytes(src.read_bytes()[:read(src).header_bytes])
    r = ab("merge", tmp_path / "PART", "--geo", tmp_path / "T2DGEO", "--cli", tmp_path / "T2DCLI", "-o", tmp_path / "classic.slf")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("ranks", [2, 3])
def test_user_fortran_writes_the_merged_file(ab, data, tmp_path, telemac_like, ranks):
    case(ab, data, tmp_path, ranks)
    proc = mpirun(ranks, telemac_like, tmp_path / "PART", tmp_path / "T2DRES", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ANABRANCH: ALL PROCESSES WRITE T2DRES (ONE FILE, NO MERGE)" in proc.stdout
    frames = len(read(tmp_path / "classic.slf").frames)
    assert f"T2DRES: {frames} FRAMES WRITTEN, OUTPUT TIME" in proc.stdout
    assert "WRITE_DATA" not in proc.stdout
    assert (tmp_path / "T2DRES").read_bytes() == (tmp_path / "classic.slf").read_bytes()


def test_off_by_environment_is_telemacs_own_writing(ab, data, tmp_path, telemac_like):
    case(ab, data, tmp_path, 2)
    proc = mpirun(2, telemac_like, tmp_path / "PART", tmp_path / "T2DRES", env={"ANABRANCH_TELEMAC": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "STUB: WRITE_DATA CALLED" in proc.stdout and "ANABRANCH:" not in proc.stdout
    assert not (tmp_path / "T2DRES").exists()


def test_an_error_stops_every_rank_with_the_reason(ab, data, tmp_path, telemac_like):
    """A geometry that is not there: the reason in the listing, the run stopped (PLANTE)."""
    case(ab, data, tmp_path, 2)
    proc = mpirun(2, telemac_like, tmp_path / "PART", tmp_path / "T2DRES",
                  env={"ANABRANCH_TELEMAC_GEOMETRY": str(tmp_path / "missing")})
    # The stub's PLANTE: `error stop 2` on every rank. MPICH's launcher hangs up on the other
    # ranks when the first ends; one caught in gfortran's ERROR STOP then ends with 1, and
    # mpiexec.mpich reports whichever it saw first (seen in one suite run): 1 or 2, never a crash.
    mpich = "mpich" in os.path.basename(os.environ.get("AB_MPIEXEC", "mpiexec"))
    assert_status(proc, proc.returncode if mpich and proc.returncode in (1, 2) else 2)
    assert "ANABRANCH: " in proc.stdout and "missing" in proc.stdout and "STUB: PLANTE" in proc.stdout
    assert not (tmp_path / "T2DRES").exists()


def read_said(path, nvar, npoin):
    words = path.read_text().split()
    at, record, pos, values = float(words[0]), int(words[1]), 2, []
    for _ in range(nvar + 1):
        found = int(words[pos])
        pos += 1
        if found == 1:
            values.append([float(w) for w in words[pos:pos + npoin]])
            pos += npoin
        else:
            values.append(None if found == 0 else "untouched")
    return at, record, values


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("record", [None, 1])
@pytest.mark.parametrize("code,previous", [("T2D", "r2d_gouttedo.slf"), ("T3D", "r3d_gouttedo.slf")])
def test_continued_run_reads_the_one_file(ab, data, tmp_path, telemac_like, ranks, record, code, previous):
    """A continued run (PREVIOUS COMPUTATION FILE = the one result file): the runner's partel
    with ANABRANCH_TELEMAC_RESTART=1 gives each rank a part with header and mesh only, and
    READ_DATASET reads every rank's own nodes of the record from the one file: the values
    the classic split would have given the rank, found by name, a variable the file lacks
    not found. TELEMAC-3D: a 3D file on the parts of the 2D geometry (every plane)."""
    shutil.copy(data / "geo_gouttedo.slf", tmp_path / f"{code}GEO")
    shutil.copy(data / "geo_gouttedo.cli", tmp_path / f"{code}CLI")
    shutil.copy(data / previous, tmp_path / f"{code}PRE")
    assert ab("partition", tmp_path / f"{code}GEO", "--cli", tmp_path / f"{code}CLI", "-n", ranks, "-o", tmp_path).returncode == 0
    # The runner's split of the previous computation, as partel (TELEMAC v8's 11 answers).
    answers = f"{code}PRE\nSERAFIN\n{code}CLI\n{ranks}\n1\n\n\n\n{code}GEO\nSERAFIN\nNO\n"
    r = run([os.environ["ANABRANCH_EXE"], "partition", "--partel"], cwd=tmp_path, input=answers, text=True,
            capture_output=True, env=dict(os.environ, ANABRANCH_TELEMAC_RESTART="1"))
    assert r.returncode == 0, r.stderr
    assert "header and mesh only" in r.stdout
    # The classic split, for the values each rank should get.
    r = ab("split", tmp_path / f"{code}PRE", "--plan", tmp_path / f"{code}GEO", "-o", tmp_path / "classic")
    assert r.returncode == 0, r.stderr
    args = [tmp_path / f"{code}PRE", "read", tmp_path / "said"] + ([record] if record is not None else [])
    proc = mpirun(ranks, telemac_like, *args, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ANABRANCH: PREVIOUS COMPUTATION READ FROM" in proc.stdout and "STUB: HERMES" not in proc.stdout
    for rk in range(ranks):
        name = f"{ranks - 1:05d}-{rk:05d}"
        assert read(tmp_path / f"{code}PRE{name}").frames == []  # the runner's part: no frame
        part = read(tmp_path / "classic" / f"{code}PRE{name}")
        want = len(part.frames) - 1 if record is None else record
        at, got_record, values = read_said(tmp_path / f"said.{rk}", len(part.vars), part.npoin)
        assert got_record == want and at == pytest.approx(float(part.frames[want][0]))
        for v in range(len(part.vars)):
            assert values[v] == pytest.approx([float(x) for x in part.frames[want][1][v]], rel=1e-15, abs=0), (rk, v)
        assert values[-1] is None  # a variable the file does not hold is not found


def test_without_the_one_file_the_part_is_read_as_telemac_reads_it(ab, data, tmp_path, telemac_like):
    """Parts holding frames (the classic split): READ_DATASET reads the part through
    TELEMAC's own HERMES (here a stand-in that says so)."""
    shutil.copy(data / "geo_gouttedo.slf", tmp_path / "T2DGEO")
    shutil.copy(data / "r2d_gouttedo.slf", tmp_path / "T2DPRE")
    assert ab("partition", tmp_path / "T2DGEO", "-n", 2, "-o", tmp_path).returncode == 0
    assert ab("split", tmp_path / "T2DPRE", "--plan", tmp_path / "T2DGEO", "-o", tmp_path).returncode == 0
    proc = mpirun(2, telemac_like, tmp_path / "T2DPRE", "read", tmp_path / "said", timeout=120)
    assert "STUB: HERMES GET_MESH_NPOIN" in proc.stdout and "ANABRANCH: PREVIOUS" not in proc.stdout
