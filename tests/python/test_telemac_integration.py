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

from conftest import mpirun
from slf import read, shift_values

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
    assert proc.returncode != 0
    assert "ANABRANCH: " in proc.stdout and "missing" in proc.stdout and "STUB: PLANTE" in proc.stdout
    assert not (tmp_path / "T2DRES").exists()
