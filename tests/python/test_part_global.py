"""A rank's part straight from the global geometry and an element -> part file
(`partition --layout partition-file`, ab_part_open_global, anabranch.read_part_global) at 1,
2 and 3 ranks: the same elements, KNOLG and coordinates as the per-rank part files of the
same partition, 2D and 3D; the mini solver runs on it with the same bits; a bad partition
file is an error naming the file, the line and the byte on every rank."""
import sys

import pytest

from conftest import mpirun, said
from slf import read

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

pytest.importorskip("mpi4py")
pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")

CHECK = """
import sys, numpy as np, anabranch
from mpi4py import MPI

comm = MPI.COMM_WORLD
geometry, partition, parts, out = sys.argv[1:5]
try:
    g = anabranch.read_part_global(geometry, partition, comm)
    said = "ok"
    if parts != "-":
        p = anabranch.read_part(parts, comm)
        # The same nodes, coordinates and elements (as global node triples) as the part file's.
        order = np.argsort(p.knolg)
        assert np.array_equal(g.knolg, p.knolg[order]), "KNOLG"
        assert np.array_equal(g.x, p.x[order]) and np.array_equal(g.y, p.y[order]), "coordinates"
        mine = {tuple(sorted(g.knolg[e - 1])) for e in g.ikle}
        theirs = {tuple(sorted(p.knolg[e - 1])) for e in p.ikle}
        assert mine == theirs and len(g.ikle) == len(p.ikle), "elements"
        said = f"same {len(g.ikle)} {len(g.knolg)}"
except anabranch.Error as e:
    said = f"error {type(e).__name__} {e}"
with open(f"{out}.{comm.rank}", "w") as f:
    f.write(said)
"""


@pytest.mark.parametrize("planes", [1, 3])
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_the_part_from_the_global_geometry_is_the_part_files_part(ab, tmp_path, ranks, planes):
    args = ["--planes", planes] if planes > 1 else []
    assert ab("generate", "-n", 3000, *args, "-o", tmp_path / "m.slf").returncode == 0
    for layout, d in (("telemac", "p"), ("partition-file", "e")):
        r = ab("partition", tmp_path / "m.slf", "-n", ranks, "--method", "metis", "--layout", layout, "-o", tmp_path / d)
        assert r.returncode == 0, r.stderr
    epart = tmp_path / "e" / f"m.slf.epart.{ranks}"
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == [epart.name]
    lines = epart.read_text().split("\n")
    m = read(tmp_path / "m.slf")
    nelem2 = m.nelem // (planes - 1) if planes > 1 else m.nelem
    assert lines[-1] == "" and len(lines) - 1 == nelem2 and set(lines[:-1]) == {str(r) for r in range(ranks)}
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    proc = mpirun(ranks, sys.executable, script, tmp_path / "m.slf", epart, tmp_path / "p" / "m.slf", tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    got = said(tmp_path, ranks)
    assert all(s.startswith("same ") for s in got), got
    assert sum(int(s.split()[1]) for s in got) == m.nelem


@pytest.mark.parametrize("last_newline", [True, False])
def test_every_rank_reads_its_share_of_the_lines_wherever_they_are_cut(ab, tmp_path, last_newline):
    """Each rank parses the lines starting in its share of the file's bytes: lines of every
    width (leading and trailing blanks, CRLF, leading zeros) and a last line with or without
    its newline, at 5 ranks, cut the shares at every kind of place; each part is still the
    part files' part."""
    assert ab("generate", "-n", 600, "-o", tmp_path / "m.slf").returncode == 0
    for layout, d in (("telemac", "p"), ("partition-file", "e")):
        r = ab("partition", tmp_path / "m.slf", "-n", 5, "--method", "metis", "--layout", layout, "-o", tmp_path / d)
        assert r.returncode == 0, r.stderr
    values = (tmp_path / "e" / "m.slf.epart.5").read_text().split()
    text = "".join(" " * (i % 7) + "0" * (i % 3) + v + "\t" * (i % 2) + ("\r\n" if i % 4 == 1 else "\n")
                   for i, v in enumerate(values))
    odd = tmp_path / "odd.epart.5"
    odd.write_text(text if last_newline else text.rstrip("\r\n"))
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    proc = mpirun(5, sys.executable, script, tmp_path / "m.slf", odd, tmp_path / "p" / "m.slf", tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    got = said(tmp_path, 5)
    assert all(s.startswith("same ") for s in got), got
    assert sum(int(s.split()[1]) for s in got) == len(values)


@pytest.mark.parametrize("content,words", [
    ("0\n1\nx\n", "line 3"),
    ("0\n1\n", "the file ends after 2 elements"),
    ("0\n7\n", "part 7 outside 0.."),
    ("0\n3\n", "part 3 outside 0..2"),  # parts are 0..P-1: P itself is outside
    ("0 1\n", "more than one number on the line"),
    ("\n", "no part number"),
])
def test_a_bad_partition_file_is_an_error_on_every_rank(ab, tmp_path, content, words):
    assert ab("generate", "-n", 200, "-o", tmp_path / "m.slf").returncode == 0
    bad = tmp_path / "bad.epart.3"
    bad.write_text(content)
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    proc = mpirun(3, sys.executable, script, tmp_path / "m.slf", bad, "-", tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    got = said(tmp_path, 3)
    assert all(s.startswith("error FormatError") and "bad.epart.3" in s and words in s and "byte" in s for s in got), got


def test_a_geometry_node_beyond_npoin_is_an_error_on_every_rank(ab, tmp_path):
    """A part read from the global geometry checks its elements' node numbers: one beyond
    NPOIN is a FormatError naming IKLE and the byte, on every rank."""
    assert ab("generate", "-n", 200, "-o", tmp_path / "m.slf").returncode == 0
    assert ab("partition", tmp_path / "m.slf", "-n", 3, "--method", "sfc", "--layout", "partition-file",
              "-o", tmp_path / "e").returncode == 0
    m = read(tmp_path / "m.slf")
    data = bytearray((tmp_path / "m.slf").read_bytes())
    ikle = 88 + 16 + 40 * len(m.vars) + 48 + (32 if m.date else 0) + 24  # IKLE's marker
    data[ikle + 4 + 50 * 12:ikle + 4 + 50 * 12 + 4] = (m.npoin + 1).to_bytes(4, "big" if m.order == ">" else "little")
    (tmp_path / "bad.slf").write_bytes(bytes(data))
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    proc = mpirun(3, sys.executable, script, tmp_path / "bad.slf", tmp_path / "e" / "m.slf.epart.3", "-", tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    got = said(tmp_path, 3)
    assert all(s.startswith("error FormatError") and "bad.slf: IKLE at byte" in s and f"node {m.npoin + 1} outside" in s
               for s in got), got
