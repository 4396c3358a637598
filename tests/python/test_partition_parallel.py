"""`mpiexec -n R anabranch partition` at R = 1, 2, 3 (and 5 ranks for 3 elements' worth of
slices): each rank reads a slice of the mesh, the ranks partition together (PT-Scotch, or the
Hilbert curve with a parallel sort) and write the partition file together.

- sfc: the same partition file for every R and as the serial sfc, weighted or not, 2D and 3D;
- ptscotch: every part non-empty, balanced within 5%, the same file when run again with the
  same R; the per-part layouts are the serial command's bytes for that partition file;
- metis under mpiexec is refused in one line; a bad mesh is one error on every rank with no
  file left behind; --dry-run prints the per-rank estimate and partitions nothing."""
import os

import pytest

from conftest import EXE, assert_status, error_lines, mpirun, run
from slf import read

pytestmark = pytest.mark.mpi

HAVE_PTSCOTCH = os.environ.get("AB_HAVE_PTSCOTCH", "1") == "1"


def partition_file(folder):
    files = sorted(folder.iterdir())
    assert len(files) == 1 and ".epart." in files[0].name, files
    return files[0]


def parts_of(path):
    return [int(v) for v in path.read_text().split("\n")[:-1]]


@pytest.fixture(scope="module")
def meshes(tmp_path_factory):
    d = tmp_path_factory.mktemp("meshes")
    for name, args in (("m2", ["-n", 6000]), ("m3", ["-n", 1500, "--planes", 3])):
        r = run([EXE, "generate", *map(str, args), "-o", str(d / f"{name}.slf")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    # Weights: heavier elements in a band, so the weighted parts differ from the unweighted.
    n = read(d / "m2.slf").nelem
    (d / "w.txt").write_text("".join(f"{5 if 1000 <= e < 2500 else 1}\n" for e in range(n)))
    return d


@pytest.mark.parametrize("mesh,parts", [("m2", 7), ("m3", 4), ("m2", 2)])
def test_sfc_gives_the_serial_partition_for_every_rank_count(ab, meshes, tmp_path, mesh, parts):
    src = meshes / f"{mesh}.slf"
    r = ab("partition", src, "-n", parts, "--method", "sfc", "--layout", "partition-file", "-o", tmp_path / "serial")
    assert r.returncode == 0, r.stderr
    serial = partition_file(tmp_path / "serial").read_bytes()
    for ranks in (1, 2, 3, 5):
        out = tmp_path / f"r{ranks}"
        proc = mpirun(ranks, EXE, "partition", src, "-n", parts, "--method", "sfc", "--layout", "partition-file", "-o", out)
        assert proc.returncode == 0, proc.stderr
        assert partition_file(out).read_bytes() == serial, ranks
        assert ranks == 1 or f"sfc on {ranks} ranks" in proc.stdout  # one rank: the serial route


def test_sfc_weighted_is_the_serial_weighted_partition(ab, meshes, tmp_path):
    src, w = meshes / "m2.slf", meshes / "w.txt"
    r = ab("partition", src, "-n", 5, "--method", "sfc", "--weights", w, "--layout", "partition-file", "-o", tmp_path / "s")
    assert r.returncode == 0, r.stderr
    unweighted = ab("partition", src, "-n", 5, "--method", "sfc", "--layout", "partition-file", "-o", tmp_path / "u")
    assert unweighted.returncode == 0
    serial = partition_file(tmp_path / "s").read_bytes()
    assert serial != partition_file(tmp_path / "u").read_bytes()
    for ranks in (2, 3):
        proc = mpirun(ranks, EXE, "partition", src, "-n", 5, "--method", "sfc", "--weights", w, "--layout", "partition-file",
                      "-o", tmp_path / f"r{ranks}")
        assert proc.returncode == 0, proc.stderr
        assert partition_file(tmp_path / f"r{ranks}").read_bytes() == serial


def test_weights_read_in_shares_wherever_the_numbers_are_cut(ab, meshes, tmp_path):
    """Each rank parses the numbers starting in its share of the weights file's bytes: the
    same weights laid out anyhow (several on a line, runs of blanks, a '+', no last newline)
    give the serial partition at 5 ranks; a bad entry, a weight out of range and a count
    that does not match are refused on every rank with the entry's number."""
    src, w = meshes / "m2.slf", meshes / "w.txt"
    r = ab("partition", src, "-n", 5, "--method", "sfc", "--weights", w, "--layout", "partition-file", "-o", tmp_path / "s")
    assert r.returncode == 0, r.stderr
    serial = partition_file(tmp_path / "s").read_bytes()
    values = w.read_text().split()
    seps = [" ", "\n", "   ", "\t", " \r\n", "\n\n"]
    odd = tmp_path / "odd.txt"
    odd.write_text("".join(("+" if i % 11 == 3 else "") + v + seps[i % len(seps)] for i, v in enumerate(values)).rstrip())
    proc = mpirun(5, EXE, "partition", src, "-n", 5, "--method", "sfc", "--weights", odd, "--layout", "partition-file",
                  "-o", tmp_path / "odd")
    assert proc.returncode == 0, proc.stderr
    assert partition_file(tmp_path / "odd").read_bytes() == serial
    k = len(values) * 2 // 3  # an entry in the last rank's share
    for i, (bad, words) in enumerate([(values[:k] + ["1.5"] + values[k + 1:], f"entry {k + 1} is not an integer"),
                                      (values[:k] + ["1000000001"] + values[k + 1:], f"weight {k + 1} = 1000000001 is out of range"),
                                      (values[:-1], f"{len(values) - 1} weights for {len(values)}")]):
        f = tmp_path / f"bad{i}.txt"
        f.write_text("\n".join(bad) + "\n")
        proc = mpirun(3, EXE, "partition", src, "-n", 5, "--method", "sfc", "--weights", f, "--layout", "partition-file",
                      "-o", tmp_path / f"b{i}")
        assert_status(proc, 1, words)
        assert proc.stderr.count(words) == 1, proc.stderr  # one line, from rank 0


@pytest.mark.parametrize("ranks,parts", [(1, 4), (2, 7), (3, 7), (3, 2)])
def test_ptscotch_parts_are_balanced_and_repeat(meshes, tmp_path, ranks, parts):
    src = meshes / "m2.slf"
    runs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        # the dual graph checked by PT-Scotch itself (every edge both ways, none repeated)
        proc = mpirun(ranks, EXE, "partition", src, "-n", parts, "--method", "ptscotch", "--layout", "partition-file", "-o", out,
                      env={"ANABRANCH_CHECK_GRAPH": "1"})
        if not HAVE_PTSCOTCH:  # this build's MPI is not the one Debian's PT-Scotch is built for
            assert_status(proc, 1)  # a refused method
            assert any("built without PT-Scotch" in line for line in error_lines(proc.stderr)), proc.stderr
            return
        assert proc.returncode == 0, proc.stderr
        runs.append(partition_file(out).read_bytes())
    assert runs[0] == runs[1], "the same partition for the same number of ranks"
    p = parts_of(partition_file(tmp_path / "run0"))
    n = read(src).nelem
    assert len(p) == n
    counts = [p.count(k) for k in range(parts)]
    assert min(counts) > 0 and max(counts) <= 1.05 * n / parts, counts


@pytest.mark.parametrize("method", ["sfc", "ptscotch"])
def test_one_part_holds_every_element(meshes, tmp_path, method):
    """-n 1 under mpiexec: part 0 for every element, whichever method, on an odd rank count."""
    src = meshes / "m2.slf"
    proc = mpirun(3, EXE, "partition", src, "-n", 1, "--method", method, "--layout", "partition-file", "-o", tmp_path / "o")
    if method == "ptscotch" and not HAVE_PTSCOTCH:  # this build's MPI is not the one Debian's PT-Scotch is built for
        assert_status(proc, 1)
        return
    assert proc.returncode == 0, proc.stderr
    assert parts_of(partition_file(tmp_path / "o")) == [0] * read(src).nelem


def same_as_serial(ab, tmp_path, ranks, mesh, parts, method, extra=(), layout="telemac"):
    """The files `mpiexec -n ranks partition` writes are the serial command's for the same
    partition file."""
    proc = mpirun(ranks, EXE, "partition", mesh, "-n", parts, "--method", method, "--layout", layout, *extra,
                  "-o", tmp_path / "par")
    assert proc.returncode == 0, proc.stderr
    proc = mpirun(ranks, EXE, "partition", mesh, "-n", parts, "--method", method, "--layout", "partition-file", "-o", tmp_path / "e")
    assert proc.returncode == 0, proc.stderr
    r = ab("partition", mesh, "-n", parts, "--layout", layout, "--partition", partition_file(tmp_path / "e"), *extra,
           "-o", tmp_path / "ser")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "ser").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "par").iterdir()) and len(names) >= parts
    for name in names:
        assert (tmp_path / "par" / name).read_bytes() == (tmp_path / "ser" / name).read_bytes(), name
    return names


METHOD = "ptscotch" if HAVE_PTSCOTCH else "sfc"


@pytest.mark.parametrize("ranks,parts", [(2, 5), (3, 5), (3, 2)])
@pytest.mark.parametrize("mesh", ["m2", "m3"])
def test_each_rank_writes_its_parts_files_the_serial_bytes(ab, meshes, tmp_path, mesh, ranks, parts):
    """The telemac layout under mpiexec: each rank writes the SERAFIN, .cli and (2D) PAR
    files of its range of parts (3 ranks for 2 parts: one rank writes none)."""
    names = same_as_serial(ab, tmp_path, ranks, meshes / f"{mesh}.slf", parts, METHOD, ["--cli", meshes / f"{mesh}.cli"])
    assert len(names) == parts * (3 if mesh == "m2" else 2)


def test_telemac_example_with_frames_of_another_file_is_the_serial_bytes(ab, data, tmp_path):
    """malpasset (a real TELEMAC mesh: islands, liquid boundaries) into 16 parts on 3 ranks,
    with its result file split along: the per-part files, PAR halos included, byte for byte
    the serial command's."""
    names = same_as_serial(ab, tmp_path, 3, data / "geo_malpasset-small.slf", 16, METHOD,
                           ["--cli", data / "geo_malpasset-small.cli", "--also", data / "f2d_malpasset-small.slf"])
    assert len(names) == 16 * 4


def test_concatenated_parts_are_the_serial_bytes(ab, meshes, tmp_path):
    same_as_serial(ab, tmp_path, 3, meshes / "m3.slf", 4, METHOD, ["--cli", meshes / "m3.cli"], layout="concat")


@pytest.mark.parametrize("case,geo,option,source", [
    ("sections", "geo_tracer_decay", "--sections", "Control_Section.dat"),
    ("weirs", "geo_weirs2", "--weirs", "weirs2.txt"),
    ("zones", "geo_donau", "--zones", "gitter_09_tbl.bfr"),
])
def test_case_files_split_on_the_ranks_are_the_serial_bytes(ab, data, tmp_path, case, geo, option, source):
    """TELEMAC's examples of control sections (walked on the ranks' slices), weirs and
    friction zones (each rank keeps its own nodes' zones), 7 parts on 3 ranks: the serial
    command's files, which are partel's (test_telemac_v8)."""
    ref = data / "telemac-v8" / f"partel-{case}-p3"
    names = same_as_serial(ab, tmp_path, 3, ref / f"{geo}.slf", 7, "sfc", ["--cli", ref / f"{geo}.cli", option, ref / source])
    assert len([n for n in names if n.startswith(source)]) == 7


@pytest.mark.parametrize("layout", ["records", "split record", "blank line"])
def test_zones_read_in_shares_or_whole_are_the_serial_bytes(ab, meshes, tmp_path, layout):
    """Friction zones laid out as TELEMAC writes them (a node and its zone a line, any
    order, a node twice: the later line wins, lines after the last record ignored) are read
    by the ranks in shares of the file; a record over two lines or a blank line among the
    records is read whole by every rank, as before. Either way, at 3 ranks, the serial
    command's files."""
    import random
    m = read(meshes / "m2.slf")
    rng = random.Random(7)
    nodes = list(range(1, m.npoin + 1))
    rng.shuffle(nodes)
    nodes[5] = nodes[900]  # listed twice (and one node not at all: zone 0)
    lines = [f"{n} {rng.randint(1, 9)}" for n in nodes]
    if layout == "split record":
        lines[m.npoin // 2] = lines[m.npoin // 2].replace(" ", "\n  ")
    elif layout == "blank line":
        lines.insert(m.npoin // 3, "")
    (tmp_path / "zones.txt").write_text("\n".join(lines) + "\n# past the records\n\n")
    same_as_serial(ab, tmp_path, 3, meshes / "m2.slf", 5, METHOD, ["--cli", meshes / "m2.cli", "--zones", tmp_path / "zones.txt"])


def test_sections_by_coordinates_walk_across_the_slices(ab, meshes, tmp_path):
    """Sections given by their ends' coordinates, across the whole mesh: the nearest nodes
    are found on every rank's own nodes and the walks cross every rank's slice; the
    concatenated layout, 2 ranks."""
    m = read(meshes / "m2.slf")
    x0, x1, y0, y1 = float(m.x.min()), float(m.x.max()), float(m.y.min()), float(m.y.max())
    ends = [(x0, y0, x1, y1), (x1, y0, x0, y1), (x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)]
    text = f"# across the mesh\n{len(ends)} 1\n" + "".join(f"S{i}\n{a} {b} {c} {d}\n" for i, (a, b, c, d) in enumerate(ends))
    (tmp_path / "sec.txt").write_text(text)
    same_as_serial(ab, tmp_path, 2, meshes / "m2.slf", 5, METHOD, ["--cli", meshes / "m2.cli", "--sections", tmp_path / "sec.txt"],
                   layout="concat")
    segments = sum(len(t.splitlines()) - 2 - 2 * len(ends) for t in (tmp_path / "par" / f"sec.txt00004-0000{p}" for p in range(5))
                   for t in [t.read_text()])
    assert segments > 100, segments


def test_an_hdf5_mesh_is_partitioned_as_its_serafin(ab, meshes, tmp_path):
    """The mesh converted to HDF5 (with a frame): each rank reads its slice from the
    datasets; in one process and on 3 ranks, the files of the SERAFIN mesh, byte for byte."""
    assert ab("convert", meshes / "m2.slf", tmp_path / "m2.h5").returncode == 0
    common = ["-n", 5, "--cli", meshes / "m2.cli", "--method", "sfc", "--names", "T2DGEO,T2DCLI"]
    r = ab("partition", meshes / "m2.slf", *common, "-o", tmp_path / "slf")
    assert r.returncode == 0, r.stderr
    runs = [ab("partition", tmp_path / "m2.h5", *common, "-o", tmp_path / "one"),
            mpirun(3, EXE, "partition", tmp_path / "m2.h5", *common, "-o", tmp_path / "three")]
    for proc, out in zip(runs, ("one", "three")):
        assert proc.returncode == 0, proc.stderr
        names = sorted(p.name for p in (tmp_path / "slf").iterdir())
        assert names == sorted(p.name for p in (tmp_path / out).iterdir()) and len(names) == 15
        for name in names:
            assert (tmp_path / out / name).read_bytes() == (tmp_path / "slf" / name).read_bytes(), (out, name)


def test_metis_under_mpiexec_is_refused_in_one_line(meshes, tmp_path):
    proc = mpirun(2, EXE, "partition", meshes / "m2.slf", "-n", 4, "--method", "metis", "-o", tmp_path / "o")
    assert_status(proc, 1)  # a refused method
    lines = error_lines(proc.stderr)
    assert lines and all("ptscotch" in line and "sfc" in line for line in lines), proc.stderr
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())


def test_a_bad_mesh_stops_every_rank_and_leaves_nothing(meshes, tmp_path):
    bad = tmp_path / "bad.slf"
    data = bytearray((meshes / "m2.slf").read_bytes())
    m = read(meshes / "m2.slf")
    # A node number beyond NPOIN in the last element: IKLE's record follows the title, the
    # variable counts and names, IPARAM, the date and the sizes.
    ikle = 88 + 16 + 40 * len(m.vars) + 48 + (32 if m.date else 0) + 24
    at = ikle + 4 + (m.nelem - 1) * 12
    data[at:at + 4] = (m.npoin + 5).to_bytes(4, "big" if m.order == ">" else "little")
    bad.write_bytes(bytes(data))
    proc = mpirun(3, EXE, "partition", bad, "-n", 4, "--method", "sfc", "--layout", "partition-file", "-o", tmp_path / "o")
    assert_status(proc, 1)
    lines = error_lines(proc.stderr)
    assert lines and all("bad.slf: IKLE at byte" in line and f"node {m.npoin + 5} outside" in line for line in lines), proc.stderr
    assert list((tmp_path / "o").iterdir()) == []


@pytest.mark.parametrize("option,text,words", [
    ("--sections", "# c\n2 -1\nA\n1 2\nB\n3 999999\n", ["sec.txt: section B", "line 6", "999999 is outside the mesh"]),
    ("--sections", "# c\n1 -1\nA\n7 7\n", ["sec.txt: section A (line 3) at byte 9", "the section is empty"]),
    ("--zones", "1 1\n2 1\n", ["sec.txt: line 3 at byte 8", "the file ends after 2 of"]),
    ("--weirs", "# c\n1 0 0.5\n# w\n1\n# a\n# b\n# c\n" + " ".join(["1"] * 4 + ["99999999"] + ["1"] * 14) + "\n",
     ["sec.txt: weir element 1", "99999999", "outside the mesh"]),
])
def test_a_bad_case_file_stops_every_rank_with_one_line_and_leaves_nothing(meshes, tmp_path, option, text, words):
    (tmp_path / "sec.txt").write_text(text)
    proc = mpirun(3, EXE, "partition", meshes / "m2.slf", "--cli", meshes / "m2.cli", "-n", 4, "--method", METHOD, option,
                  tmp_path / "sec.txt", "-o", tmp_path / "o")
    assert_status(proc, 1)
    lines = error_lines(proc.stderr)
    assert lines and all(all(w in line for w in words) for line in lines), proc.stderr
    assert list((tmp_path / "o").iterdir()) == []


def test_dry_run_estimates_per_rank_and_partitions_nothing(ab, meshes, tmp_path):
    r = ab("partition", meshes / "m2.slf", "-n", 8, "--dry-run", "--ranks", 4, "--json", "-o", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    j = r.json()
    assert j["ranks"] == 4 and j["nelem"] == read(meshes / "m2.slf").nelem
    one = ab("partition", meshes / "m2.slf", "-n", 8, "--dry-run", "--ranks", 1, "--json").json()
    for method in ("sfc", "ptscotch"):
        assert 0 < j["per_rank_bytes"][method] < one["per_rank_bytes"][method]
    assert not (tmp_path / "o").exists()


def test_dry_run_follows_the_documented_model(ab, meshes):
    """--dry-run's figures are the model docs/commands/partition.md gives users to size R,
    from the mesh's own sizes (read here): the method's bytes a rank alone with the partition
    file, the larger of the method's and the writer's with the per-part files."""
    import pathlib
    import re
    text = " ".join((pathlib.Path(__file__).parents[2] / "docs/commands/partition.md").read_text().split())
    m = re.search(r"plus about (\d+) MiB: `sfc` (\d+) E \+ (\d+) N bytes, `ptscotch` (\d+) E, "
                  r"writing the per-part files (\d+) E \+ (\d+) N", text)
    assert m, "the sizing paragraph of docs/commands/partition.md"
    base, sfc_e, sfc_n, pt_e, wr_e, wr_n = (int(v) for v in m.groups())
    mesh = read(meshes / "m2.slf")
    for ranks in (1, 3, 4):
        e, n = mesh.nelem / ranks, mesh.npoin / ranks
        sfc, pt, writer = (base * 2**20 + a * e + b * n for a, b in ((sfc_e, sfc_n), (pt_e, 0), (wr_e, wr_n)))
        for layout, want in (("partition-file", {"sfc": sfc, "ptscotch": pt}),
                             ("telemac", {"sfc": max(sfc, writer), "ptscotch": max(pt, writer)})):
            j = ab("partition", meshes / "m2.slf", "-n", 8, "--dry-run", "--ranks", ranks, "--layout", layout, "--json").json()
            for method, bytes_ in want.items():
                assert abs(j["per_rank_bytes"][method] - bytes_) <= 1, (ranks, layout, method, j)


@pytest.mark.faults
@pytest.mark.parametrize("layout", ["partition-file", "telemac", "concat"])
def test_a_full_disk_stops_every_rank_and_leaves_nothing(meshes, small_disk, layout):
    """The outputs onto a file system with 4 kB left: the ranks whose bytes do not fit
    fail, every rank exits non-zero with one line naming a file, and no file (final or
    temporary) stays."""
    filler = small_disk / "filler"
    filler.write_bytes(b"x" * (596 * 1024))
    out = small_disk / "o"
    out.mkdir()
    proc = mpirun(3, EXE, "partition", meshes / "m2.slf", "--cli", meshes / "m2.cli", "-n", 4, "--method", "sfc",
                  "--layout", layout, "-o", out)
    assert_status(proc, 1)
    lines = error_lines(proc.stderr)
    assert lines and all("/o/m2." in line and "No space left on device" in line for line in lines), proc.stderr
    assert list(out.iterdir()) == []


def test_partel_answers_under_mpiexec(ab, data, tmp_path):
    """TELEMAC's runner with `mpiexec -n R anabranch partition --partel` as its partel: the
    answers come on rank 0's standard input; the geometry is partitioned on the R ranks (the
    same files as the command line's run with the same method and R), and partel's second
    mode (a result on the existing parts) is split by one rank, as the serial run splits it."""
    import shutil
    from conftest import MPIEXEC, MPI_ENV
    for name in ("geo_gouttedo.slf", "geo_gouttedo.cli", "r2d_gouttedo.slf"):
        shutil.copy(data / name, tmp_path / name)
    def partel(ranks, source, folder):
        folder.mkdir(exist_ok=True)
        for name in ("geo_gouttedo.slf", "geo_gouttedo.cli", "r2d_gouttedo.slf"):
            if not (folder / name).exists():
                shutil.copy(tmp_path / name, folder / name)
        answers = f"{source}\nSERAFIN\ngeo_gouttedo.cli\n4\n1\n\n\n\ngeo_gouttedo.slf\n0\nNO\n"
        cmd = [EXE, "partition", "--partel"] if ranks == 0 else ["timeout", "120", MPIEXEC, "-n", str(ranks), EXE, "partition", "--partel"]
        proc = run(cmd, input=answers, capture_output=True, text=True, cwd=folder, env=MPI_ENV)
        assert proc.returncode == 0, proc.stderr
        return proc
    proc = partel(3, "geo_gouttedo.slf", tmp_path / "par")
    assert f"on 3 ranks: partitioned with {METHOD}" in proc.stderr
    cmdline = mpirun(3, EXE, "partition", tmp_path / "geo_gouttedo.slf", "--cli", tmp_path / "geo_gouttedo.cli", "-n", 4,
                     "--method", METHOD, "-o", tmp_path / "cmd")
    assert cmdline.returncode == 0, cmdline.stderr
    parts = sorted(p.name for p in (tmp_path / "cmd").iterdir())
    assert len(parts) == 12
    for name in parts:
        assert (tmp_path / "par" / name).read_bytes() == (tmp_path / "cmd" / name).read_bytes(), name
    # The second mode: the result split on those parts, by one rank, the serial run's bytes.
    partel(3, "r2d_gouttedo.slf", tmp_path / "par")
    shutil.copytree(tmp_path / "par", tmp_path / "ser", ignore=shutil.ignore_patterns("r2d_gouttedo.slf0*"))
    partel(0, "r2d_gouttedo.slf", tmp_path / "ser")
    split = sorted(p.name for p in (tmp_path / "ser").iterdir() if p.name.startswith("r2d_gouttedo.slf0"))
    assert len(split) == 4
    for name in split:
        assert (tmp_path / "par" / name).read_bytes() == (tmp_path / "ser" / name).read_bytes(), name


@pytest.mark.parametrize("ranks", [1, 3])
def test_an_output_named_like_an_input_is_refused_and_the_input_kept(ab, meshes, tmp_path, ranks):
    """The weights file given as input is also where the partition file would go: refused in
    one line on every rank (never a hang), the weights file untouched, nothing written."""
    import shutil
    shutil.copy(meshes / "m2.slf", tmp_path / "m2.slf")
    weights = tmp_path / "m2.slf.epart.4"
    shutil.copy(meshes / "w.txt", weights)
    before = weights.read_bytes()
    proc = mpirun(ranks, EXE, "partition", tmp_path / "m2.slf", "-n", 4, "--method", "sfc", "--weights", weights,
                  "--layout", "partition-file", "-o", tmp_path, timeout=60)
    assert_status(proc, 1)  # a refused output
    lines = error_lines(proc.stderr)
    assert lines and all("an input of this command" in line for line in lines), proc.stderr
    assert weights.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m2.slf", "m2.slf.epart.4"]
