"""An output named like an input (any spelling: ./a.slf, a link, a part the command reads)
is refused before anything is written: one line, exit 1, every input unchanged, no file left."""
import hashlib

import pytest

import conftest


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def test_outputs_never_replace_inputs(ab, data, tmp_path):
    for name in ("r2d_gouttedo.slf", "geo_gouttedo.slf", "geo_gouttedo.cli"):
        (tmp_path / name).write_bytes((data / name).read_bytes())
    (tmp_path / "link.slf").symlink_to("r2d_gouttedo.slf")
    parts = tmp_path / "parts"
    parts.mkdir()
    assert ab("partition", tmp_path / "r2d_gouttedo.slf", "-n", 3, "-o", parts).returncode == 0
    assert ab("convert", tmp_path / "r2d_gouttedo.slf", tmp_path / "r2d.h5").returncode == 0
    assert ab("convert", tmp_path / "r2d_gouttedo.slf", tmp_path / "r2d.plt").returncode == 0
    before = digest(tmp_path), digest(parts)
    cases = [
        ("convert", "r2d_gouttedo.slf", "./r2d_gouttedo.slf"),
        ("convert", "r2d_gouttedo.slf", "link.slf"),
        ("convert", "r2d.h5", "./r2d.h5"),  # an HDF5 output written alone, without MPI
        ("convert", "r2d.plt", "./r2d.plt"),  # a Tecplot output
        ("refine", "geo_gouttedo.slf", "--cli", "geo_gouttedo.cli", "-o", "geo_gouttedo.slf"),
        ("refine", "geo_gouttedo.slf", "--cli", "geo_gouttedo.cli", "-o", "fine.slf", "--cli-output", "./geo_gouttedo.cli"),
        ("merge", "parts/r2d_gouttedo.slf", "--geo", "geo_gouttedo.slf", "-o", "parts/r2d_gouttedo.slf00002-00001"),
        ("merge", "parts/r2d_gouttedo.slf", "--geo", "geo_gouttedo.slf", "-o", "geo_gouttedo.slf"),
        ("split", "r2d_gouttedo.slf", "--plan", "parts/r2d_gouttedo.slf", "-o", "parts", "--name", "r2d_gouttedo.slf"),
    ]
    for args in cases:
        r = ab(*args, cwd=tmp_path)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        line = r.stderr.strip()
        assert "\n" not in line and "input of this command" in line, (args, line)
        assert (digest(tmp_path), digest(parts)) == before, args  # nothing changed, nothing left


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_under_mpiexec_the_refusal_is_said_once(ab, data, tmp_path, ranks):
    """Refusals made before MPI starts (split, refine) or after (convert): rank 0 alone says
    it (before MPI, the launcher's rank), and the job exits 1."""
    for name in ("r2d_gouttedo.slf", "geo_gouttedo.slf"):
        (tmp_path / name).write_bytes((data / name).read_bytes())
    parts = tmp_path / "parts"
    assert ab("partition", tmp_path / "geo_gouttedo.slf", "-n", 3, "-o", parts).returncode == 0
    before = digest(tmp_path), digest(parts)
    for args in (("split", tmp_path / "r2d_gouttedo.slf", "--plan", parts / "geo_gouttedo.slf", "-o", parts, "--name", "geo_gouttedo.slf"),
                 ("refine", tmp_path / "geo_gouttedo.slf", "-o", f"{tmp_path}/./geo_gouttedo.slf"),
                 ("convert", tmp_path / "r2d_gouttedo.slf", f"{tmp_path}/./r2d_gouttedo.slf")):
        proc = conftest.mpirun(ranks, conftest.EXE, *args)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        lines = conftest.error_lines(proc.stderr)
        assert len(lines) == 1 and "input of this command" in lines[0], (args, proc.stderr)
        assert (digest(tmp_path), digest(parts)) == before, args
