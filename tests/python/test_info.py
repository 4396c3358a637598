"""`anabranch info` on TELEMAC's own files, cross-checked against xarray-selafin."""
import math

import pytest

from conftest import fixture_files

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
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cut.slf: record" in lines[0] and "at byte" in lines[0] and "truncated" in lines[0]
    r = ab("info", tmp_path / "missing.slf")
    assert r.returncode != 0 and "missing.slf" in r.stderr
