"""Byte for byte against TELEMAC v8's own partel and gretel (../shared/data/telemac/telemac-v8,
read in place): every file they wrote, made again from the same inputs and the same answers on
standard input, in partel's and gretel's place (`partition --partel`, `merge --gretel`, and the
executable called as `partel` and `gretel`)."""
import filecmp
import os
import pathlib

import pytest

import slf
from conftest import DATA, EXE, assert_status, run as run_checked

V8 = DATA / "telemac-v8"

pytestmark = [pytest.mark.skipif(not (V8 / "README.md").exists(), reason=f"TELEMAC v8 reference files absent: {V8}"),
              pytest.mark.skipif(not EXE, reason="anabranch executable not found (set ANABRANCH_EXE)")]


def partel_answers(geo="T2DGEO", cli="T2DCLI", sec="", zfi="", seu="", concat="NO", method=1):
    # What TELEMAC's runner writes into partel_T2DGEO.par (12 lines, the last empty).
    return "\n".join([geo, "SERAFIN", cli, "3", str(method), sec, zfi, seu, geo, "SERAFIN", concat, ""]) + "\n"


def run(argv0, args, stdin, cwd):
    """Runs the executable under another name (argv0) with stdin; returns the process."""
    env = dict(os.environ, ANABRANCH_PROGRESS="0")
    return run_checked([argv0, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=300,
                       executable=EXE, env=env)


def link(src, dst):
    pathlib.Path(dst).symlink_to(src)


def assert_same(ref_dir, out_dir, names):
    assert names, "no reference file to compare"
    for n in names:
        assert (out_dir / n).exists(), f"{n} was not written"
        assert filecmp.cmp(ref_dir / n, out_dir / n, shallow=False), f"{n} differs from partel/gretel v8's"


@pytest.mark.parametrize("concat", ["NO", "YES"])
def test_partel_split_and_concat(tmp_path, concat):
    ref = V8 / ("partel-concat-p3" if concat == "YES" else "partel-split-p3")
    link(DATA / "geo_gouttedo.slf", tmp_path / "T2DGEO")
    link(DATA / "geo_gouttedo.cli", tmp_path / "T2DCLI")
    r = run("anabranch", ["partition", "--partel"], partel_answers(concat=concat), tmp_path)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in ref.iterdir())
    assert_same(ref, tmp_path, names)
    # Nothing else: partel's files only (the inputs are links).
    written = sorted(p.name for p in tmp_path.iterdir() if not p.is_symlink())
    assert written == names


@pytest.mark.parametrize("case,geo,answer,name,source", [
    ("sections", "geo_tracer_decay", "sec", "T2DSEC", "Control_Section.dat"),
    ("weirs", "geo_weirs2", "seu", "T2DSEU", "weirs2.txt"),
    ("zones", "geo_donau", "zfi", "T2DZFI", "gitter_09_tbl.bfr"),
])
def test_partel_case_files(tmp_path, case, geo, answer, name, source):
    """Control sections, weirs and friction zones split per part as partel v8 splits them,
    with the mesh parts around them; also through the executable called `partel`."""
    ref = V8 / f"partel-{case}-p3"
    link(ref / f"{geo}.slf", tmp_path / "T2DGEO")
    link(ref / f"{geo}.cli", tmp_path / "T2DCLI")
    link(ref / source, tmp_path / name)
    r = run("partel", [], partel_answers(**{answer: name}), tmp_path)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in ref.iterdir() if p.name.startswith("T2D"))
    assert_same(ref, tmp_path, names)
    assert len([n for n in names if n.startswith(name)]) == 3


def test_case_files_by_options(tmp_path, ab):
    """The same files through the command line's own options, into another folder."""
    ref = V8 / "partel-sections-p3"
    r = ab("partition", ref / "geo_tracer_decay.slf", "--cli", ref / "geo_tracer_decay.cli", "-n", 3,
           "--sections", ref / "Control_Section.dat", "--names", "T2DGEO,T2DCLI", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    for p in range(3):
        got = (tmp_path / f"Control_Section.dat00002-0000{p}").read_bytes()
        assert got == (ref / f"T2DSEC00002-0000{p}").read_bytes()
        assert (tmp_path / f"T2DPAR00002-0000{p}").read_bytes() == (ref / f"T2DPAR00002-0000{p}").read_bytes()


@pytest.mark.parametrize("argv0", ["anabranch", "gretel"])
def test_gretel_merge(tmp_path, argv0):
    """gretel's merge of partel's parts of r2d_gouttedo: gretel v8's bytes (IPARAM(8) = the
    .cli's boundary points, the title's format word), which are the original file's."""
    ref = V8 / "gretel-p3"
    for p in range(3):
        link(ref / f"T2DRES00002-0000{p}", tmp_path / f"T2DRES00002-0000{p}")
    link(DATA / "geo_gouttedo.slf", tmp_path / "T2DGEO")
    link(DATA / "geo_gouttedo.cli", tmp_path / "T2DCLI")
    answers = "T2DGEO\nSERAFIN\nT2DCLI\nT2DRES\nSERAFIN\n3\n0\n1\n"  # TELEMAC's gretel_T2DRES.par
    args = ["merge", "--gretel"] if argv0 == "anabranch" else []
    r = run(argv0, args, answers, tmp_path)
    assert r.returncode == 0, r.stderr
    assert filecmp.cmp(tmp_path / "T2DRES", ref / "T2DRES-merged", shallow=False)
    assert filecmp.cmp(tmp_path / "T2DRES", DATA / "r2d_gouttedo.slf", shallow=False)


def test_merge_cli_option(tmp_path, ab):
    ref = V8 / "gretel-p3"
    out = tmp_path / "merged.slf"
    r = ab("merge", ref / "T2DRES", "--geo", DATA / "geo_gouttedo.slf", "--cli", DATA / "geo_gouttedo.cli", "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == (ref / "T2DRES-merged").read_bytes()
    # Without the boundary file, IPARAM(8) is the geometry's (0 here): the only difference.
    out2 = tmp_path / "merged2.slf"
    assert ab("merge", ref / "T2DRES", "--geo", DATA / "geo_gouttedo.slf", "-o", out2).returncode == 0
    a, b = out.read_bytes(), out2.read_bytes()
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    assert len(a) == len(b) and diff and all(256 <= i < 260 for i in diff)  # bytes of IPARAM(8)
    r = ab("diff", out, out2, "--json")
    assert r.returncode == 1 and r.json()["header"]["differences"] == [f"IPARAM(8): {slf.read(out).iparam[7]} / 0"]
    assert ab("diff", out, out2, "--values-only").returncode == 0


def test_diff_of_telemac_parts_and_gretels_merge(ab):
    """TELEMAC's own per-rank results against gretel v8's merge of them: the same values and
    coordinates at every global node (the parts' KNOLG)."""
    ref = V8 / "gretel-p3"
    r = ab("diff", ref / "T2DRES", ref / "T2DRES-merged", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    j = r.json()
    assert j["identical"] and j["a"]["kind"].startswith("3 per-rank") and j["values"] > 0


def test_partel_scotch(tmp_path):
    """partel's method 2: SCOTCH, the same partition on every run, and parts that tile the mesh."""
    outs = []
    for k in range(2):
        d = tmp_path / f"run{k}"
        d.mkdir()
        link(DATA / "geo_gouttedo.slf", d / "T2DGEO")
        link(DATA / "geo_gouttedo.cli", d / "T2DCLI")
        r = run("partel", [], partel_answers(method=2), d)
        assert r.returncode == 0, r.stderr
        outs.append({p.name: p.read_bytes() for p in d.iterdir() if not p.is_symlink()})
    assert outs[0] == outs[1] and len(outs[0]) == 9
    # Not METIS's partition.
    ref = V8 / "partel-split-p3"
    assert outs[0]["T2DPAR00002-00000"] != (ref / "T2DPAR00002-00000").read_bytes()


def test_bad_case_files(tmp_path, ab):
    """A section point outside the mesh, a weir node missing, a short zones file: one line
    naming the file and the line, and no file written."""
    ref = V8 / "partel-weirs-p3"
    bad_sec = tmp_path / "sec.txt"
    bad_sec.write_text("# sections\n1 -1\nOne\n2 999999\n")
    text = (ref / "weirs2.txt").read_text().splitlines()
    text[7] = text[7].replace(" 893 ", " 99999 ", 1)
    bad_weir = tmp_path / "weirs.txt"
    bad_weir.write_text("\n".join(text) + "\n")
    short = tmp_path / "zones.txt"
    short.write_text("1 3\n2 4\n")
    empty_sec = tmp_path / "empty.txt"
    empty_sec.write_text("# sections\n2 -1\nOne\n5 9\nTwo\n7 7\n")  # the second starts and ends at node 7
    for opt, f, words in [("--sections", bad_sec, ["sec.txt", "line 4", "999999", "outside"]),
                          ("--sections", empty_sec, ["empty.txt: section Two (line 5) at byte 24:", "empty"]),
                          ("--weirs", bad_weir, ["weirs.txt", "line 8", "99999", "outside"]),
                          ("--zones", short, ["zones.txt", "ends after 2 of"])]:
        out = tmp_path / ("out" + opt + f.stem)
        out.mkdir()
        r = ab("partition", ref / "geo_weirs2.slf", "--cli", ref / "geo_weirs2.cli", "-n", 3, opt, f, "-o", out)
        assert_status(r, 1)
        line = r.stderr.strip()
        assert "\n" not in line and all(w in line for w in words), line
        assert list(out.iterdir()) == []


def test_file_size_limit(tmp_path):
    """A write that hits RLIMIT_FSIZE (a full disk's stand-in): one line naming the file, exit 1,
    no output and no temporary left, for partel with a case file and for gretel."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (30 * 1024, 30 * 1024))

    ref = V8 / "partel-sections-p3"
    link(ref / "geo_tracer_decay.slf", tmp_path / "T2DGEO")
    link(ref / "geo_tracer_decay.cli", tmp_path / "T2DCLI")
    link(ref / "Control_Section.dat", tmp_path / "T2DSEC")
    env = dict(os.environ, ANABRANCH_PROGRESS="0")
    r = run_checked(["partel"], input=partel_answers(sec="T2DSEC"), capture_output=True, text=True, cwd=tmp_path,
                    timeout=300, executable=EXE, env=env, preexec_fn=limit)
    assert_status(r, 1, "File too large")
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["T2DCLI", "T2DGEO", "T2DSEC"]
    g = tmp_path / "gretel"
    g.mkdir()
    for p in range(3):
        link(V8 / "gretel-p3" / f"T2DRES00002-0000{p}", g / f"T2DRES00002-0000{p}")
    r = run_checked(["gretel"], input=f"{DATA / 'geo_gouttedo.slf'}\nSERAFIN\n{DATA / 'geo_gouttedo.cli'}\nT2DRES\nSERAFIN\n3\n0\n1\n",
                    capture_output=True, text=True, cwd=g, timeout=300, executable=EXE, env=env, preexec_fn=limit)
    assert_status(r, 1, "T2DRES", "File too large")
    assert sorted(p.name for p in g.iterdir()) == [f"T2DRES00002-0000{p}" for p in range(3)]
