"""`anabranch generate` and `refine`: sizes, determinism, files other readers open, errors."""
import hashlib

import pytest

from conftest import assert_status


def sha(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_generate_is_deterministic_and_readable(ab, tmp_path):
    for name in ("a", "b"):
        r = ab("generate", "-n", 3000, "--frames", 3, "-o", tmp_path / f"{name}.slf", "--json")
        assert r.returncode == 0, r.stderr
    assert sha(tmp_path / "a.slf") == sha(tmp_path / "b.slf")
    assert sha(tmp_path / "a.cli") == sha(tmp_path / "b.cli")
    s = r.json()
    assert abs(s["nelem"] - 3000) < 100 and s["frames"] == 3 and s["variables"] == 5
    info = ab("info", "--json", "--check", tmp_path / "a.slf").json()[0]
    assert info["integrity"] == "OK" and info["times"] == [0, 60, 120]
    assert info["nptfr"] == len((tmp_path / "a.cli").read_text().splitlines())
    r = ab("generate", "-n", 3000, "--seed", 7, "-o", tmp_path / "c.slf")
    assert sha(tmp_path / "c.slf") != sha(tmp_path / "a.slf")


@pytest.mark.parametrize("planes,precision,endian", [(1, "single", "big"), (1, "double", "little"), (4, "single", "big"), (3, "double", "big")])
def test_generated_files_open_in_xarray_selafin(ab, tmp_path, planes, precision, endian):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("xarray_selafin")
    out = tmp_path / "g.slf"
    r = ab("generate", "-n", 800, "--planes", planes, "--frames", 2, "--precision", precision, "--endian", endian, "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    s = r.json()
    ds = xr.open_dataset(out, engine="selafin")
    assert ds.sizes["node"] * planes == s["npoin"]
    assert ds.sizes["time"] == 2
    assert ds.attrs["float_size"] == (8 if precision == "double" else 4)
    first = list(ds.attrs["variables"].values())[0][0].strip()
    assert first == ("ELEVATION Z" if planes > 1 else "VELOCITY U")


def test_refine_levels_and_boundary(ab, tmp_path):
    ab("generate", "-n", 1000, "--frames", 2, "-o", tmp_path / "m.slf")
    r = ab("refine", tmp_path / "m.slf", "--cli", tmp_path / "m.cli", "--levels", 2, "-o", tmp_path / "r.slf", "--json")
    assert r.returncode == 0, r.stderr
    s = r.json()
    base = ab("info", "--json", tmp_path / "m.slf").json()[0]
    assert s["nelem"] == 16 * base["nelem"]
    cli = (tmp_path / "r.cli").read_text().splitlines()
    assert len(cli) == 4 * base["nptfr"] == s["nptfr"]
    info = ab("info", "--json", "--stats", tmp_path / "r.slf").json()[0]
    assert info["nptfr"] == len(cli)
    # Interpolation keeps the range of every variable.
    src = ab("info", "--json", "--stats", tmp_path / "m.slf").json()[0]
    for a, b in zip(src["stats"][1], info["stats"][1]):
        assert b["min"] >= a["min"] - 1e-4 and b["max"] <= a["max"] + 1e-4


def test_refine_malpasset_to_the_papers_first_case(ab, data, tmp_path):
    r = ab("refine", data / "geo_malpasset-small.slf", "--cli", data / "geo_malpasset-small.cli", "-o", tmp_path / "m1.slf", "--json")
    assert r.returncode == 0, r.stderr
    s = r.json()
    assert (s["nelem"], s["npoin"], s["nptfr"]) == (104000, 53081, 2160)
    lines = (tmp_path / "m1.cli").read_text().splitlines()
    original = (data / "geo_malpasset-small.cli").read_text().splitlines()
    # Input lines are kept as written except N and K; midpoints follow each of them.
    assert lines[0] == original[0]
    assert lines[2].split()[:11] == original[1].split()[:11] and lines[2].split()[11] == original[1].split()[11]


def test_bad_input_gives_one_line_and_leaves_nothing(ab, data, tmp_path):
    good = (data / "geo_gouttedo.slf").read_bytes()
    (tmp_path / "bad.slf").write_bytes(good[:20000])
    r = ab("refine", tmp_path / "bad.slf", "-o", tmp_path / "out.slf")
    assert_status(r, 1, "bad.slf")
    assert len(r.stderr.strip().splitlines()) == 1 and "bad.slf" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.slf"]
    (tmp_path / "bad.cli").write_text("  2 2 2 0 0 0 0 2 0 0 0 99999 1\n")
    r = ab("refine", data / "geo_gouttedo.slf", "--cli", tmp_path / "bad.cli", "-o", tmp_path / "out.slf")
    assert_status(r, 1, "bad.cli: line 1, column 12")
    assert not (tmp_path / "out.slf").exists()
    r = ab("generate", "-n", 1, "-o", tmp_path / "x.slf")
    assert not (tmp_path / "x.slf").exists()  # its status: test_a_refused_element_count_is_status_1


@pytest.mark.parametrize("n", [0, 1])
def test_a_refused_element_count_is_status_1(ab, tmp_path, n):
    assert_status(ab("generate", "-n", n, "-o", tmp_path / "x.slf"), 1, "--elements")


def test_refine_3d_gives_every_plane_its_own_values(ab, data, tmp_path):
    """Prisms: each plane is refined from its own values (coordinates, elevation and every
    variable), checked independently: original nodes keep their values, and each new node is
    the mean of the two ends of its edge, plane by plane."""
    import numpy as np

    import slf
    src = slf.read(data / "r3d_gouttedo.slf")
    r = ab("refine", data / "r3d_gouttedo.slf", "-o", tmp_path / "r.slf")
    assert r.returncode == 0, r.stderr
    out = slf.read(tmp_path / "r.slf")
    nplan = src.iparam[6]
    assert out.iparam[6] == nplan and out.ndp == 6 and len(out.frames) == len(src.frames)
    n2, n2o = src.npoin // nplan, out.npoin // nplan
    # The refined 2D triangles: bottoms of the first layer's prisms. A corner triangle has one
    # original node and the midpoints of its two edges from it.
    tris = out.ikle[: out.nelem // (nplan - 1), :3] - 1
    ends = {}
    for t in tris:
        orig = [k for k in t if k < n2]
        if len(orig) == 1:
            for m in t:
                if m >= n2:
                    ends.setdefault(m, set()).add(orig[0])
    assert len(ends) == n2o - n2 and all(len(e) == 2 for e in ends.values())
    mids = np.array(sorted(ends))
    a = np.array([min(ends[m]) for m in mids])
    b = np.array([max(ends[m]) for m in mids])
    fields = [(src.x, out.x), (src.y, out.y)] + [(sv, ov) for (_, svs), (_, ovs) in zip(src.frames, out.frames)
                                                 for sv, ov in zip(svs, ovs)]
    for before, after in fields:
        for p in range(nplan):
            old, new = before[p * n2:(p + 1) * n2], after[p * n2o:(p + 1) * n2o]
            np.testing.assert_array_equal(new[:n2], old)
            np.testing.assert_allclose(new[mids], 0.5 * (new[a].astype(float) + new[b]), rtol=1e-6, atol=1e-6)


def test_refined_midpoints_between_a_wall_and_an_open_node_are_walls(ab, tmp_path):
    """The generated channel has two open boundaries of 15 nodes between walls: refined, each
    has its 15 nodes and the 14 midpoints between them open (29), and the two midpoints at
    its ends, between an open node and a wall, are walls."""
    assert ab("generate", "-n", 2000, "-o", tmp_path / "c.slf").returncode == 0
    assert ab("refine", tmp_path / "c.slf", "--cli", tmp_path / "c.cli", "-o", tmp_path / "r.slf").returncode == 0
    def open_nodes(cli):
        return sum(1 for line in cli.read_text().splitlines() if line.split()[0] != "2")
    assert open_nodes(tmp_path / "c.cli") == 30
    assert open_nodes(tmp_path / "r.cli") == 2 * 29


def test_a_failed_cli_write_leaves_no_mesh_either(ab, tmp_path):
    """generate writes a pair: when the .cli cannot be written, the mesh is removed too."""
    r = ab("generate", "-n", 2000, "-o", tmp_path / "m.slf", "--cli", tmp_path / "no" / "such" / "m.cli")
    assert_status(r, 1, "m.cli")  # the files cannot be written
    assert list(tmp_path.iterdir()) == []


def test_small_channels_partition(ab, tmp_path):
    """Every small size, and a sample of others: the channel's contour is one TELEMAC accepts
    (no liquid point alone between walls: a channel of two rows had one at each end), so its
    mesh partitions with its .cli."""
    import random
    sizes = list(range(2, 61)) + random.Random(62).sample(range(61, 4000), 12)
    for n in sizes:
        r = ab("generate", "-n", n, "-o", tmp_path / "m.slf")
        assert_status(r, 0)
        r = ab("partition", tmp_path / "m.slf", "--cli", tmp_path / "m.cli", "-n", 2, "-o", tmp_path / "p")
        assert_status(r, 0)
