"""`anabranch info` on TELEMAC's own files, cross-checked against xarray-selafin."""
import math
import struct
import os

import pytest

from conftest import assert_status, fixture_files

FILES = fixture_files()


def test_info_text_names_the_essentials(ab, data):
    r = ab("info", data / "r3d_gouttedo.slf")
    assert r.returncode == 0, r.stderr
    assert "NELEM 17,956 prisms (NDP 6), NPOIN 13,872, NPLAN 3" in r.stdout
    assert "ELEVATION Z" in r.stdout
    assert "frames     11" in r.stdout


def test_info_json_several_files(ab, data):
    r = ab("info", "--json", data / "geo_malpasset-small.slf", data / "f2d_nestor3.slf")
    assert r.returncode == 0, r.stderr
    a, b = r.json()
    assert (a["nelem"], a["npoin"], a["ndp"], a["precision"]) == (26000, 13541, 3, "single")
    assert a["integrity"] == "stray trailing byte"
    assert (b["precision"], b["byte_order"], len(b["variables"])) == ("double", "big", 10)
    assert b["date"] == [1900, 1, 1, 0, 0, 0]


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_info_agrees_with_xarray_selafin(ab, path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("xarray_selafin")
    np = pytest.importorskip("numpy")
    r = ab("info", "--json", "--stats", "--check", path)
    assert r.returncode == 0, r.stderr
    info = r.json()[0]
    ds = xr.open_dataset(path, engine="selafin")
    nplan = info["nplan"]
    assert ds.sizes["node"] * (nplan if nplan > 1 else 1) == info["npoin"]
    assert ds.sizes["time"] == info["frames"]
    names = [v[0].strip() for v in ds.attrs["variables"].values()]
    units = [v[1].strip() for v in ds.attrs["variables"].values()]
    assert names == [v["name"] for v in info["variables"]]
    assert units == [v["unit"] for v in info["variables"]]
    assert list(ds.attrs["params"]) == info["iparam"]
    ikle = ds.attrs["ikle3"] if nplan > 1 else ds.attrs["ikle2"]
    assert ikle.shape == (info["nelem"], info["ndp"])
    # Times: xarray gives datetimes from the date record; compare elapsed seconds.
    t = (ds.time.values - ds.time.values[0]) / np.timedelta64(1, "s")
    assert np.allclose(t, np.array(info["times"]) - info["times"][0], atol=1e-3)
    for f, frame in enumerate(info["stats"]):
        for (key, var), st in zip(ds.attrs["variables"].items(), frame):
            vals = ds[key].isel(time=f).values.astype("float64")
            assert math.isclose(vals.min(), st["min"], rel_tol=1e-6, abs_tol=1e-6), (key, f)
            assert math.isclose(vals.max(), st["max"], rel_tol=1e-6, abs_tol=1e-6), (key, f)
            assert math.isclose(vals.mean(), st["mean"], rel_tol=1e-5, abs_tol=1e-5), (key, f)


def test_info_reports_torn_frames_and_bad_files(ab, data, tmp_path):
    good = (data / "r2d_gouttedo.slf").read_bytes()
    (tmp_path / "torn.slf").write_bytes(good[:-100])
    r = ab("info", "--json", tmp_path / "torn.slf")
    assert r.returncode == 0
    assert r.json()[0]["frames"] == 20 and r.json()[0]["integrity"] == "torn last frame"
    (tmp_path / "cut.slf").write_bytes(good[:5000])
    r = ab("info", tmp_path / "cut.slf")
    assert_status(r, 1)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cut.slf: record" in lines[0] and "at byte" in lines[0] and "truncated" in lines[0]
    r = ab("info", tmp_path / "missing.slf")
    assert_status(r, 2, "missing.slf")  # an input file that does not exist: the command line


def test_fifo_input_is_refused_not_waited_on(ab, tmp_path):
    fifo = tmp_path / "pipe.slf"
    os.mkfifo(fifo)
    r = ab("info", fifo, timeout=30)
    assert_status(r, 1, "not a regular file", str(fifo))


def test_nan_values_are_counted(ab, data, tmp_path):
    """--check counts NaN and infinities (and says where the first is); --stats leaves them out
    of min/mean/max and says how many."""
    raw = bytearray((data / "r2d_gouttedo.slf").read_bytes())
    info = ab("info", "--json", data / "r2d_gouttedo.slf").json()[0]
    frame1 = info["header_bytes"] + info["frame_bytes"]  # start of frame 2
    first_var = frame1 + 12 + 4  # time record, then the marker of variable 1
    for node, value in ((10, b"\x7f\xc0\x00\x00"), (20, b"\x7f\x80\x00\x00")):  # big-endian NaN, +inf
        raw[first_var + 4 * node:first_var + 4 * node + 4] = value
    bad = tmp_path / "nan.slf"
    bad.write_bytes(bytes(raw))
    j = ab("info", "--json", "--check", "--stats", bad).json()[0]
    assert j["non_finite_values"] == 2
    assert j["first_non_finite"] == {"frame": 2, "variable": info["variables"][0]["name"], "node": 11}
    assert j["stats"][1][0]["non_finite"] == 2 and math.isfinite(j["stats"][1][0]["mean"])
    assert j["stats"][0][0]["non_finite"] == 0
    text = ab("info", "--check", "--stats", bad).stdout
    assert "2 values NaN or infinite (the first: frame 2" in text



def test_check_reads_the_mesh_in_pieces_and_names_a_bad_node_far_in(ab, tmp_path):
    """--check reads IKLE a piece at a time: a node number out of range in an element past
    the first piece is named with its element and the byte it is at."""
    src = tmp_path / "g.slf"
    assert ab("generate", "-n", 200000, "--frames", 1, "-o", src).returncode == 0
    info = ab("info", "--json", src).json()[0]
    nelem, npoin, ndp = info["nelem"], info["npoin"], info["ndp"]
    ikle = info["header_bytes"] - ((8 + nelem * ndp * 4) + (8 + npoin * 4) + 2 * (8 + npoin * 4))
    element = 100000  # 1-based, in the second piece of 65,536 rows
    at = ikle + 4 + ((element - 1) * ndp + 1) * 4
    raw = bytearray(src.read_bytes())
    raw[at:at + 4] = struct.pack(">i", npoin + 7)
    bad = tmp_path / "bad.slf"
    bad.write_bytes(bytes(raw))
    assert ab("info", bad).returncode == 0  # the header alone is sound
    r = ab("info", "--check", bad)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert f"node number {npoin + 7} of element {element} " in r.stderr and f"byte {at}" in r.stderr, r.stderr

@pytest.mark.parametrize("precision,endian", [("double", "little"), ("double", "big"), ("single", "little")])
def test_non_finite_values_in_every_precision_and_byte_order(ab, tmp_path, precision, endian):
    """The check reads the stored words: NaN, both infinities and the largest finite values
    (all exponent bits but one) are told apart in either precision and byte order."""
    src = tmp_path / "g.slf"
    assert ab("generate", "-n", 2000, "--frames", 3, "--precision", precision, "--endian", endian, "-o", src).returncode == 0
    info = ab("info", "--json", src).json()[0]
    rs = 8 if precision == "double" else 4
    fmt = ("<" if endian == "little" else ">") + ("d" if rs == 8 else "f")
    raw = bytearray(src.read_bytes())
    var2 = info["header_bytes"] + 2 * info["frame_bytes"] + (4 + rs + 4) + (8 + info["npoin"] * rs) + 4  # frame 3, variable 2
    big = struct.unpack(fmt, struct.pack(fmt, float("inf")))[0]
    largest = 1.7976931348623157e308 if rs == 8 else 3.4028234663852886e38
    for node, value in ((5, largest), (7, float("-inf")), (9, float("nan")), (11, -largest), (13, big)):
        raw[var2 + rs * node:var2 + rs * node + rs] = struct.pack(fmt, value)
    bad = tmp_path / "bad.slf"
    bad.write_bytes(bytes(raw))
    j = ab("info", "--json", "--check", bad).json()[0]
    assert j["non_finite_values"] == 3, j
    assert j["first_non_finite"] == {"frame": 3, "variable": info["variables"][1]["name"], "node": 8}


def test_non_finite_values_across_both_halves_of_a_large_file(ab, tmp_path):
    """From 16 MiB of values the records are checked by two threads, each half of them: the
    count adds both halves, the first one reported is the file's first, whichever half holds it."""
    src = tmp_path / "g.slf"
    assert ab("generate", "-n", 200000, "--frames", 12, "-o", src).returncode == 0
    info = ab("info", "--json", src).json()[0]
    assert info["frame_bytes"] * info["frames"] > 16 << 20
    raw = bytearray(src.read_bytes())

    def value_at(frame, var, node):  # 0-based
        return (info["header_bytes"] + frame * info["frame_bytes"] + (4 + 4 + 4) + var * (8 + info["npoin"] * 4) + 4
                + 4 * node)
    names = [v["name"] for v in info["variables"]]
    late = value_at(10, 1, 17)  # in the later half only
    raw[late:late + 4] = struct.pack(">f", float("nan"))
    (tmp_path / "late.slf").write_bytes(bytes(raw))
    j = ab("info", "--json", "--check", tmp_path / "late.slf").json()[0]
    assert j["non_finite_values"] == 1 and j["first_non_finite"] == {"frame": 11, "variable": names[1], "node": 18}, j
    early = value_at(1, 0, 5)  # and one in the first half: the first reported
    raw[early:early + 4] = struct.pack(">f", float("inf"))
    (tmp_path / "both.slf").write_bytes(bytes(raw))
    j = ab("info", "--json", "--check", tmp_path / "both.slf").json()[0]
    assert j["non_finite_values"] == 2 and j["first_non_finite"] == {"frame": 2, "variable": names[0], "node": 6}, j


def test_title_ending_in_d_is_kept(ab, data, tmp_path):
    """Some tools mark double precision with a lone 'D' at byte 80: kept as it is."""
    raw = bytearray((data / "r2d_bowl_vf_gb_DoublePrecision_BigEndian.slf").read_bytes())
    raw[4 + 72:4 + 80] = b"       D"
    src = tmp_path / "d.slf"
    src.write_bytes(bytes(raw))
    assert ab("convert", src, tmp_path / "back.slf").returncode == 0
    assert (tmp_path / "back.slf").read_bytes()[:84] == bytes(raw[:84])


def test_unknown_command_and_bad_numbers_say_so(ab, tmp_path):
    """Usage errors exit 2 and refused values 1 (the documented statuses), never one of the
    option parser's own codes."""
    r = ab("bogus")
    assert r.returncode == 2 and "unknown command 'bogus'" in r.stderr and "merge" in r.stderr
    r = ab("tune", tmp_path, "--ranks", 0)  # a value out of its range: refused
    assert r.returncode == 1 and "--ranks" in r.stderr
    r = ab("info", tmp_path / "missing.slf")
    assert r.returncode == 2 and "missing.slf" in r.stderr, r
    r = ab("partition", tmp_path / "missing.slf", "--no-such-option")
    assert r.returncode == 2 and r.stderr.strip(), r


def test_output_folders_are_made(ab, data, tmp_path):
    out = tmp_path / "a" / "b"
    assert ab("partition", data / "geo_gouttedo.slf", "-n", 2, "-o", out).returncode == 0
    assert len(list(out.iterdir())) == 2
    r = ab("split", data / "r2d_gouttedo.slf", "--plan", out / "geo_gouttedo.slf", "-o", tmp_path / "c" / "d")
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "c" / "d").iterdir())) == 2


def test_non_finite_values_at_the_split_points(ab, tmp_path):
    """The two threads' split (the first record of the later half, the last of the first half)
    and the pieces a record is read in (256 KiB: the last word of a piece, the first of the
    next, the record's last node): a non-finite value at each is found, and counted once."""
    src = tmp_path / "g.slf"
    assert ab("generate", "-n", 200000, "--frames", 12, "-o", src).returncode == 0
    info = ab("info", "--json", src).json()[0]
    npoin, nvar, frames = info["npoin"], len(info["variables"]), info["frames"]
    assert info["frame_bytes"] * frames > 16 << 20 and npoin > 65536 + 1
    names = [v["name"] for v in info["variables"]]
    split = frames * nvar // 2
    piece = (256 << 10) // 4

    def value_at(record, node):  # 0-based
        frame, var = divmod(record, nvar)
        return info["header_bytes"] + frame * info["frame_bytes"] + 12 + var * (8 + npoin * 4) + 4 + 4 * node

    clean = src.read_bytes()
    spots = [(split, 0), (split - 1, npoin - 1), (split + 1, piece - 1), (split + 1, piece), (0, npoin - 1),
             (frames * nvar - 1, npoin - 1)]
    for record, node in spots:
        raw = bytearray(clean)
        raw[value_at(record, node):value_at(record, node) + 4] = struct.pack(">f", float("nan"))
        (tmp_path / "one.slf").write_bytes(bytes(raw))
        r = ab("info", "--json", "--check", tmp_path / "one.slf")
        j = r.json()[0]
        want = {"frame": record // nvar + 1, "variable": names[record % nvar], "node": node + 1}
        assert j["non_finite_values"] == 1 and j["first_non_finite"] == want, (record, node, j)
