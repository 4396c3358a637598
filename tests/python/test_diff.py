"""anabranch diff: per variable and frame the largest differences and where they are, with
tolerances, frame selections, headers and meshes; SERAFIN of either precision and byte order,
HDF5, and per-rank sets against a global file; exit status 0 equal, 1 different, 2 trouble."""
import shutil
import struct

import numpy as np
import pytest

import slf
from conftest import error_lines


@pytest.fixture
def case(tmp_path, ab):
    """A generated 2D result (5 variables, 3 frames) and a byte copy."""
    a = tmp_path / "a.slf"
    assert ab("generate", "-o", a, "-n", "600", "--frames", "3").returncode == 0
    b = tmp_path / "b.slf"
    shutil.copy(a, b)
    return a, b


def change_one(path, frame, var, node, by):
    slf.edit_values(path, lambda f, v, a: a + by * ((np.arange(a.size) == node - 1) & (f == frame) & (v == var)))


def by_name(report):
    return {v["name"]: v for v in report["variables"]}


def test_identical_files(case, ab):
    a, b = case
    r = ab("diff", a, b)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith("identical: ")
    j = ab("diff", a, b, "--json").json()
    assert j["identical"] and j["equal"] and j["status"] == 0 and j["header"]["same"]
    assert j["values"] == 5 * 3 * j["a"]["npoin"]
    assert all(v["max_abs"] == 0 and v["beyond"] == 0 and len(v["per_frame"]) == 3 for v in j["variables"])


def test_one_changed_value_is_found_with_its_place(case, ab):
    a, b = case
    s = slf.read(a)
    change_one(b, frame=1, var=2, node=17, by=0.5)
    r = ab("diff", a, b, "--json")
    assert r.returncode == 1, r.stderr
    j = r.json()
    assert not j["equal"] and not j["identical"] and j["header"]["same"]
    v = by_name(j)["WATER DEPTH"]
    old = float(s.frames[1][1][2][16])
    new = float(np.float32(np.float32(old) + np.float32(0.5)))
    assert (v["frame"], v["node"], v["beyond"], v["nan"]) == (1, 17, 1, 0)
    assert v["max_abs"] == pytest.approx(abs(new - old), rel=1e-12)
    assert v["max_rel"] == pytest.approx(abs(new - old) / max(abs(new), abs(old)), rel=1e-9)
    assert (v["x"], v["y"]) == (float(s.x[16]), float(s.y[16]))
    assert (v["a"], v["b"]) == (old, new)
    assert [f["beyond"] for f in v["per_frame"]] == [0, 1, 0]
    assert [f["frame"] for f in v["per_frame"]] == [0, 1, 2]
    assert [f["time"] for f in v["per_frame"]] == [float(t) for t, _ in s.frames]
    for name, other in by_name(j).items():
        if name != "WATER DEPTH":
            assert other["max_abs"] == 0 and other["beyond"] == 0, name
    text = ab("diff", a, b)
    assert text.returncode == 1
    row = next(line for line in text.stdout.splitlines() if line.startswith("WATER DEPTH"))
    assert row.split()[5:7] == ["1", "17"]
    assert "1 of" in text.stdout.splitlines()[-1] and "WATER DEPTH" in text.stdout.splitlines()[-1]
    frames = [line.split() for line in text.stdout.splitlines() if line.startswith("  WATER DEPTH")]
    assert len(frames) == 1 and frames[0][2:4] == ["frame", "1"] and "17" in frames[0], text.stdout



@pytest.mark.parametrize("extra", [["--precision", "double", "--endian", "little"], ["--precision", "double"],
                                   ["--endian", "little"]], ids=["double-little", "double-big", "single-little"])
def test_a_changed_value_in_every_precision_and_byte_order(tmp_path, ab, extra):
    """Files stored alike are compared as stored: a step that differs is decoded in the
    files' own precision and byte order, and its values come out exact."""
    a, b = tmp_path / "a.slf", tmp_path / "b.slf"
    assert ab("generate", "-o", a, "-n", "600", "--frames", "3", *extra).returncode == 0
    shutil.copy(a, b)
    s = slf.read(a)
    change_one(b, frame=2, var=0, node=5, by=0.25)
    j = ab("diff", a, b, "--json").json()
    v = by_name(j)["VELOCITY U"]
    old = float(s.frames[2][1][0][4])
    assert (v["frame"], v["node"], v["beyond"], v["a"]) == (2, 5, 1, old)
    assert v["b"] == pytest.approx(old + 0.25, abs=1e-6) and v["max_abs"] == abs(v["b"] - old)
    assert all(by_name(j)[n]["max_abs"] == 0 for n in by_name(j) if n != "VELOCITY U")

def test_tolerances_per_variable_and_for_all(case, ab):
    a, b = case
    change_one(b, frame=2, var=0, node=5, by=0.25)
    assert ab("diff", a, b).returncode == 1
    assert ab("diff", a, b, "--atol", "0.3").returncode == 0
    assert ab("diff", a, b, "--atol", "0.2").returncode == 1
    assert ab("diff", a, b, "--tol", "VELOCITY U=0.3").returncode == 0
    assert ab("diff", a, b, "--atol", "velocity u = 0.3").returncode == 0  # names: case and blanks do not matter
    assert ab("diff", a, b, "--tol", "VELOCITY V=0.3").returncode == 1
    # relative: |a - b| <= rtol * max(|a|, |b|)
    v = by_name(ab("diff", a, b, "--json").json())["VELOCITY U"]
    assert ab("diff", a, b, "--rtol", str(v["max_rel"] * 1.01)).returncode == 0
    assert ab("diff", a, b, "--rtol", str(v["max_rel"] * 0.99)).returncode == 1
    j = ab("diff", a, b, "--rtol", "1e-3", "--atol", "VELOCITY U=0.3", "--json").json()
    assert (by_name(j)["VELOCITY U"]["atol"], by_name(j)["VELOCITY U"]["rtol"]) == (0.3, 1e-3)
    assert (by_name(j)["BOTTOM"]["atol"], by_name(j)["BOTTOM"]["rtol"]) == (0, 1e-3)
    assert j["equal"] and not j["identical"] and j["status"] == 0
    assert ab("diff", a, b, "--atol", "0.3").stdout.splitlines()[-1].startswith("equal within tolerances")
    # Only some variables.
    assert ab("diff", a, b, "--variables", "VELOCITY V,bottom").returncode == 0
    j = ab("diff", a, b, "--variables", "BOTTOM, velocity u", "--json").json()
    assert [v["name"] for v in j["variables"]] == ["VELOCITY U", "BOTTOM"] and j["status"] == 1


def test_frames(case, ab):
    a, b = case
    change_one(b, frame=1, var=4, node=3, by=1.0)
    for spec, status in (("0", 0), ("-1", 0), ("1", 1), ("0:1", 1), ("2:", 0), (":0", 0), ("0,2", 0), ("0,-2", 1)):
        r = ab("diff", a, b, f"--frames={spec}")
        assert r.returncode == status, (spec, r.stdout, r.stderr)
    j = ab("diff", a, b, "--frames", "2,0", "--json").json()
    assert [f["frame"] for f in j["variables"][0]["per_frame"]] == [2, 0]
    for bad in ("3", "-4", "x", "1:9", "2:1", "0,,1"):
        r = ab("diff", a, b, f"--frames={bad}")
        assert r.returncode == 2 and len(error_lines(r.stderr)) == 1 and "--frames" in r.stderr, bad


def test_precision_byte_order_and_hdf5(tmp_path, ab):
    big = tmp_path / "big.slf"
    little = tmp_path / "little.slf"
    double = tmp_path / "double.slf"
    for path, extra in ((big, []), (little, ["--endian", "little"]), (double, ["--precision", "double"])):
        assert ab("generate", "-o", path, "-n", "500", "--frames", "2", *extra).returncode == 0
    j = ab("diff", big, little, "--json").json()
    assert j["identical"] and any("little-endian" in n for n in j["header"]["notes"])
    # The double file holds values a single one cannot: they differ by rounding only.
    r = ab("diff", big, double, "--json")
    assert r.returncode == 1 and r.json()["header"]["same"]
    assert max(v["max_rel"] for v in r.json()["variables"]) < 1e-7
    assert ab("diff", big, double, "--rtol", "1e-7").returncode == 0
    if ab("convert", big, tmp_path / "big.h5").returncode != 0:
        pytest.skip("no HDF5")
    r = ab("diff", tmp_path / "big.h5", big, "--json")
    assert r.returncode == 0 and r.json()["identical"] and r.json()["a"]["kind"].startswith("HDF5")


@pytest.mark.parametrize("layout", ["telemac", "concat"])
def test_per_rank_set_against_the_global_file(tmp_path, case, ab, layout):
    tmp_path = case[0].parent
    a, _ = case
    parts = tmp_path / "parts"
    r = ab("partition", a, "--cli", tmp_path / "a.cli", "-n", "3", "--layout", layout, "-o", parts)
    assert r.returncode == 0, r.stderr
    base = parts / "a.slf"
    j = ab("diff", base, a, "--json").json()
    assert j["identical"], j
    assert j["a"]["npoin"] == j["b"]["npoin"] and j["a"]["nelem"] == j["b"]["nelem"]
    assert "per-rank" in j["a"]["kind"] or "CONCAT" in j["a"]["kind"]
    if layout == "concat":
        return
    # A value of the last part, at its local node 4: found at that node's global number.
    last = parts / "a.slf00002-00002"
    knolg = slf.read(last).ipobo
    change_one(last, frame=0, var=1, node=4, by=2.0)
    r = ab("diff", base, a, "--json")
    assert r.returncode == 1
    v = by_name(r.json())["VELOCITY V"]
    assert (v["frame"], v["node"], v["beyond"]) == (0, int(knolg[3]), 1)
    r = ab("diff", parts / "nothing", a)
    assert r.returncode == 2 and "nothing" in error_lines(r.stderr)[0]


def patch(path, offset, fmt, value):
    raw = bytearray(path.read_bytes())
    order = ">" if struct.unpack(">i", raw[:4])[0] == 80 else "<"
    raw[offset:offset + struct.calcsize(fmt)] = struct.pack(order + fmt, value)
    path.write_bytes(bytes(raw))


def test_headers_and_meshes(case, ab):
    a, b = case
    s = slf.read(a)
    # The title is noted, not counted.
    patch(b, 4, "8s", b"OTHER RU")
    r = ab("diff", a, b, "--json")
    assert r.returncode == 0 and any(n.startswith("title:") for n in r.json()["header"]["notes"])
    # IPARAM(3), the origin: a difference.
    iparam_at = 88 + 16 + 40 * len(s.vars) + 4
    patch(b, iparam_at + 8, "i", 1234)
    r = ab("diff", a, b, "--json")
    assert r.returncode == 1 and r.json()["header"]["differences"] == [f"IPARAM(3): {s.iparam[2]} / 1234"]
    assert r.json()["variables"][0]["max_abs"] == 0
    assert ab("diff", a, b).stdout.splitlines()[-1] == "different: the headers"
    assert ab("diff", a, b, "--values-only").returncode == 0
    # A coordinate.
    shutil.copy(a, b)
    x_at = s.header_bytes - 2 * (8 + s.npoin * s.rs) + 4
    patch(b, x_at + 9 * s.rs, "f", 12345.5)
    r = ab("diff", a, b, "--json")
    assert r.returncode == 1 and r.json()["header"]["differences"][0].startswith("X of node 10: ")
    assert ab("diff", a, b, "--values-only").returncode == 0
    # A variable renamed: a difference; the others still compared.
    shutil.copy(a, b)
    patch(b, 88 + 16 + 4, "16s", b"OTHER NAME      ")
    r = ab("diff", a, b, "--json")
    assert r.returncode == 1 and r.json()["header"]["differences"][0].startswith("variables: ")
    assert [v["name"] for v in r.json()["variables"]] == ["VELOCITY V", "WATER DEPTH", "FREE SURFACE", "BOTTOM"]
    # Another mesh: NPOIN differs, values cannot be compared.
    c = a.parent / "c.slf"
    assert ab("generate", "-o", c, "-n", "900", "--frames", "3").returncode == 0
    r = ab("diff", a, c, "--json")
    assert r.returncode == 1 and not r.json()["values_compared"]
    assert any(d.startswith("NPOIN: ") for d in r.json()["header"]["differences"])
    # Fewer frames: compared as far as both go.
    assert ab("generate", "-o", c, "-n", "600", "--frames", "2").returncode == 0
    r = ab("diff", a, c, "--json")
    assert r.returncode == 1 and r.json()["header"]["differences"] == ["frames: 3 / 2"]
    assert r.json()["values"] == 5 * 2 * s.npoin


def test_trouble_is_status_2_with_one_line(case, ab):
    a, b = case
    s = slf.read(a)
    for args, words in (((a,), "required"), ((a, b.parent / "none.slf"), "none.slf"), ((a, b, "--atol", "x"), "--atol x"),
                        ((a, b, "--atol", "-1"), "--atol -1"), ((a, b, "--tol", "NOPE=1"), "NOPE"),
                        ((a, b, "--tol", "1"), "--tol 1"), ((a, b, "--variables", "U,"), "--variables"),
                        ((a, b, "--variables", "NOPE"), "NOPE")):
        r = ab("diff", *args)
        assert r.returncode == 2, (args, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and words in lines[0], (args, r.stderr)
    # A damaged length marker: the file, the record and the byte.
    at = s.header_bytes + (8 + s.rs) + (8 + s.npoin * s.rs)  # variable 2 of frame 1
    patch(b, at, "i", 7)
    r = ab("diff", a, b)
    assert r.returncode == 2
    line = error_lines(r.stderr)[0]
    assert str(b) in line and "frame 1" in line and str(at) in line, line


def test_quiet_and_python(case, ab):
    a, b = case
    assert ab("-q", "diff", a, b).returncode == 0 and ab("diff", a, b, "-q").returncode == 0
    anabranch = pytest.importorskip("anabranch", reason="the Python package is not built")
    change_one(b, frame=0, var=0, node=2, by=1.0)
    j = anabranch.diff(a, b)
    assert j["status"] == 1 and by_name(j)["VELOCITY U"]["node"] == 2
    assert anabranch.diff(a, b, atol={"VELOCITY U": 1.5})["equal"]
    assert anabranch.diff(a, b, atol=1.5, frames="0")["status"] == 0
    assert anabranch.diff(a, b, frames="1:")["identical"]


def test_nan_on_one_side_differs_on_both_sides_does_not(case, ab):
    a, b = case
    nan_at = lambda f, v, x: (np.where(np.arange(x.size) == 6, np.nan, x) if (f, v) == (2, 3) else x)  # noqa: E731
    slf.edit_values(b, nan_at)
    r = ab("diff", a, b, "--atol", "1e9", "--json")
    assert r.returncode == 1
    v = by_name(r.json())["FREE SURFACE"]
    assert (v["beyond"], v["nan"], v["max_abs"]) == (1, 1, 0) and v["per_frame"][2]["nan"] == 1
    slf.edit_values(a, nan_at)
    r = ab("diff", a, b, "--json")
    assert r.returncode == 0 and r.json()["identical"], r.stdout


@pytest.mark.parametrize("forms", ["for all", "per variable"])
def test_tolerance_rule_is_symmetric_at_its_threshold(case, ab, forms):
    """|a - b| <= atol + rtol * max(|a|, |b|), whichever file comes first: one value 2 in A
    and 3 in B, |a - b| = 1 = 0.25 + 0.25 * 3 exactly (equal), and just under it (different),
    both ways round; a rule on |a| or |b| alone, or with < instead of <=, fails one of them."""
    a, b = case
    set_one = lambda path, value: slf.edit_values(  # noqa: E731
        path, lambda f, v, arr: np.where((np.arange(arr.size) == 9) & (f == 0) & (v == 0), value, arr))
    set_one(a, 2.0)
    set_one(b, 3.0)

    def tol(atol, rtol):
        if forms == "for all":
            return ["--atol", str(atol), "--rtol", str(rtol)]
        return ["--atol", f"VELOCITY U={atol}", "--rtol", f"VELOCITY U={rtol}"]

    for first, second in ((a, b), (b, a)):
        assert ab("diff", first, second, "--values-only", *tol(0.25, 0.25)).returncode == 0
        assert ab("diff", first, second, "--values-only", *tol(0.25, 0.2499)).returncode == 1
        assert ab("diff", first, second, "--values-only", *tol(0.2499, 0.25)).returncode == 1
        assert ab("diff", first, second, "--values-only", *tol(1.0, 0)).returncode == 0  # absolute alone, at 1
        assert ab("diff", first, second, "--values-only", *tol(0, 1 / 3)).returncode == 0  # relative alone: 1 <= 3 / 3
