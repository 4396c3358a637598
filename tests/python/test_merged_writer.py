"""A parallel run that writes its result as ONE file, the way TELEMAC does through
integrations/telemac: each rank has its own part file holding only the header and mesh
(IPOBO = KNOLG, as TELEMAC writes it), gives its frames to the merged writer
(Writer.merged, ab_writer_open_merged), and the file is the one `anabranch merge` (gretel)
makes of per-rank files holding the same frames, byte for byte; gretel's step afterwards
sees the parts hold no frames and leaves the file as it is."""
import sys

import pytest

from conftest import assert_status, mpirun
from slf import read, shift_values

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

RUN = """
import sys, anabranch
from mpi4py import MPI

comm = MPI.COMM_WORLD
full, part, geo, cli, out, strategy = sys.argv[1:7]
options = sys.argv[7] if len(sys.argv) > 7 else ""
full = full + f"{comm.size - 1:05d}-{comm.rank:05d}"
part = part + f"{comm.size - 1:05d}-{comm.rank:05d}"
src = anabranch.read(full)
with anabranch.Writer.merged(comm, part, geo, out, boundary=cli, strategy=strategy, options=options) as w:
    assert w.nlocal == src.npoin
    for f in src.frames:
        w.write_frame(f.time, {k: v for k, v in f.items()})
"""


def header_only(src, dst):
    """What TELEMAC's rank has written to its own result file when frames go elsewhere."""
    dst.write_bytes(src.read_bytes()[:read(src).header_bytes])


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("mesh,cli,strategy", [
    ("r2d_gouttedo.slf", "geo_gouttedo.cli", "aggregated"),
    ("r2d_gouttedo.slf", "geo_gouttedo.cli", "collective"),
    ("r3d_gouttedo.slf", None, "aggregated"),
    ("r3d_gouttedo.slf", None, "collective"),
])
def test_one_file_written_during_the_run_is_the_merged_file(ab, data, tmp_path, ranks, mesh, cli, strategy):
    pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")
    pytest.importorskip("mpi4py")
    mesh = data / mesh
    cli = data / cli if cli else None
    args = ["partition", mesh, "-n", ranks, "-o", tmp_path] + (["--cli", cli] if cli else [])
    assert ab(*args).returncode == 0
    full = tmp_path / mesh.name
    for r in range(ranks):
        name = f"{ranks - 1:05d}-{r:05d}"
        shift_values(tmp_path / f"{mesh.name}{name}", 1000.0 * (r + 1))
        header_only(tmp_path / f"{mesh.name}{name}", tmp_path / f"RES{name}")
    # The classic way: per-rank files with frames, merged afterwards.
    geo = data / "geo_gouttedo.slf" if "3d" in mesh.name else mesh
    merge_args = ["--geo", geo] + (["--cli", cli] if cli else [])
    assert ab("merge", full, *merge_args, "-o", tmp_path / "classic.slf").returncode == 0
    # Through the merged writer.
    script = tmp_path / "run.py"
    script.write_text(RUN)
    proc = mpirun(ranks, sys.executable, script, full, tmp_path / "RES", geo, cli or "", tmp_path / "RES", strategy)
    assert proc.returncode == 0, proc.stderr
    written = (tmp_path / "RES").read_bytes()
    assert written == (tmp_path / "classic.slf").read_bytes()
    # The merge step after the run (gretel's answers, as TELEMAC's runner gives them) leaves it.
    fmt = "SERAFIND" if read(tmp_path / "RES").rs == 8 else "SERAFIN"
    answers = f"{geo}\nSERAFIN\n{cli or ''}\n{tmp_path / 'RES'}\n{fmt}\n{ranks}\n0\n1\n"
    if cli:
        r = ab("merge", "--gretel", stdin=answers)
        assert r.returncode == 0, r.stderr
        assert "was written during the run (" in r.stdout and "left as it is" in r.stdout, r.stdout
    r = ab("merge", tmp_path / "RES", *merge_args, "--json")
    assert r.returncode == 0, r.stderr
    assert r.json()["kept"] is True and r.json()["frames"] == len(read(tmp_path / "RES").frames)
    assert (tmp_path / "RES").read_bytes() == written


def test_a_merge_over_a_different_file_still_merges(ab, data, tmp_path):
    """Only the complete file the parts describe is kept: any other file under the output's
    name (here: a result of another mesh) is merged over as before."""
    mesh = data / "r2d_gouttedo.slf"
    assert ab("partition", mesh, "-n", 2, "-o", tmp_path).returncode == 0
    for r in range(2):
        header_only(tmp_path / f"{mesh.name}00001-0000{r}", tmp_path / f"RES00001-0000{r}")
    ab("generate", "-n", 500, "--frames", 2, "-o", tmp_path / "RES")
    r = ab("merge", tmp_path / "RES", "--geo", mesh, "--json")
    assert r.returncode == 0, r.stderr
    assert r.json()["kept"] is False and r.json()["frames"] == 0
    out = read(tmp_path / "RES")
    assert out.npoin == read(mesh).npoin and out.frames == []


def test_parts_of_another_mesh_are_refused(ab, data, tmp_path):
    pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")
    pytest.importorskip("mpi4py")
    mesh = data / "r2d_gouttedo.slf"
    assert ab("partition", mesh, "-n", 2, "-o", tmp_path).returncode == 0
    ab("generate", "-n", 300, "-o", tmp_path / "other.slf")
    script = tmp_path / "run.py"
    script.write_text(RUN)
    proc = mpirun(2, sys.executable, script, tmp_path / mesh.name, tmp_path / mesh.name, tmp_path / "other.slf", "",
                  tmp_path / "RES", "aggregated")
    assert_status(proc, 1, "outside the geometry's 1..")  # anabranch.Error, uncaught: Python's status 1
    assert not (tmp_path / "RES").exists()

