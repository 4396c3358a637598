"""Variable names drawn at random, round-tripped through every format that stores names:
names SIDS defines (CGNS writes `rho` as `Density`), names it does not (kept beside the
SIDS ones), both mixed in any order, long names (past CGNS's 32 characters), names with `/`
(which HDF5 and CGNS node names cannot hold), blanks, near-duplicates. Every format must
give back the names as written, in the order written, each with its own values. Multi-block
files: CGNS, HDF5, raw (through the block writer, read back by convert); mesh results:
SERAFIN's 16-character names through HDF5 (VTKHDF) and CGNS and back, byte for byte."""
import json

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import conftest
import gen

pytestmark = [pytest.mark.formats, pytest.mark.generated]
anabranch = pytest.importorskip("anabranch")
h5py = pytest.importorskip("h5py")

SIDS = ["rho", "density", "u", "v", "w", "p", "T", "rhou", "rhov", "rhow", "rhoe", "pressure", "temperature", "mach"]
SIDS_OWN = ["Density", "MomentumX", "Pressure", "VelocityX", "EnergyStagnationDensity"]
KEPT = ["myvar", "q_1", "zeta", "Var 2", "nut", "omega_sst"]
SLASHED = ["a/b", "u/v/w", "/lead", "trail/", "x/"]
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ "


@st.composite
def names(draw):
    pool = st.one_of(st.sampled_from(SIDS), st.sampled_from(SIDS_OWN), st.sampled_from(KEPT), st.sampled_from(SLASHED),
                     st.text(LETTERS, min_size=33, max_size=60).map(str.strip).filter(lambda s: len(s) > 32),
                     st.text(LETTERS + "/", min_size=1, max_size=12).map(str.strip).filter(bool))
    out = draw(st.lists(pool, min_size=1, max_size=5, unique=True))
    return out


def rebuild(src, dst):
    """src's groups, datasets and attributes made anew under dst (h5py's defaults: no
    creation order kept, so HDF5 lists a group's children by name)."""
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    for name in src:
        item = src[name]
        if isinstance(item, h5py.Dataset):
            d = dst.create_dataset(name, data=item[()])
            for k, v in item.attrs.items():
                d.attrs[k] = v
        else:
            rebuild(item, dst.create_group(name, track_order=False))


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), variables=names(), fmt=st.sampled_from(["cgns", "h5", "dat"]))
@example(seed=1, variables=["rho", "myvar"], fmt="cgns")  # the first renamed (Density), the last kept
@example(seed=2, variables=["myvar", "rho"], fmt="cgns")
@example(seed=3, variables=["rho", "myvar", "p"], fmt="cgns")
@example(seed=4, variables=["a/b", "a_b", "c"], fmt="h5")
@example(seed=5, variables=["x" * 40, "x" * 41], fmt="cgns")
def test_block_file_names_come_back_as_written(seed, variables, fmt):
    rng = np.random.default_rng(seed)
    layout = anabranch.BlockLayout()
    dims = [(int(rng.integers(2, 5)), int(rng.integers(2, 4)), int(rng.integers(1, 3))) for _ in range(int(rng.integers(1, 3)))]
    for b, d in enumerate(dims):
        layout.add_block(b + 1, *d)
        layout.add_piece(b + 1)
    vals = [[np.full(int(np.prod(d)), 10.0 * (v + 1) + b) for v in range(len(variables))] for b, d in enumerate(dims)]
    with gen.scratch() as tmp:
        with anabranch.BlockWriter(None, tmp / f"n.{fmt}", layout, variables) as w:
            w.write_frame(0.5, vals)
        info = gen.ab("info", tmp / f"n.{fmt}", "--json")
        conftest.assert_status(info, 0)
        assert info.json()[0]["variables"] == variables
        copies = [f"n.{fmt}"]
        if fmt in ("cgns", "h5"):  # and copies by another program: its objects, not what anabranch keeps beside them
            with h5py.File(tmp / f"n.{fmt}") as f, h5py.File(tmp / f"copy.{fmt}", "w") as g:
                for k, v in f.attrs.items():
                    g.attrs[k] = v
                for k in f:
                    f.copy(k, g)
            copies.append(f"copy.{fmt}")
            with h5py.File(tmp / f"n.{fmt}") as f, h5py.File(tmp / f"rebuilt.{fmt}", "w", track_order=False) as g:
                rebuild(f, g)  # every node made anew: a group's children listed by name, not as written
            copies.append(f"rebuilt.{fmt}")
        want = np.concatenate([vals[b][v] for b in range(len(dims)) for v in range(len(variables))])
        for name in copies:
            conftest.assert_status(gen.ab("convert", tmp / name, tmp / "back.dat"), 0)
            j = json.loads((tmp / "back.dat.json").read_text())
            assert j["variables"] == variables, (name, j["variables"])
            got = np.fromfile(tmp / "back.dat", dtype="<f8")
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: each name's own values")


@st.composite
def serafin_names(draw):
    pool = st.one_of(st.sampled_from(["VELOCITY U", "VELOCITY V", "WATER DEPTH", "FREE SURFACE", "BOTTOM", "DENSITY", "U/V",
                                      "RHO", "pressure", "TEMPERATURE", "a/b/c", "/", "VELOCITY U/V MAX"]),
                     st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ /_-.", min_size=1, max_size=16).filter(lambda s: s.strip()))
    return draw(st.lists(pool, min_size=1, max_size=5, unique_by=lambda s: s.strip()))


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), variables=serafin_names(), fmt=st.sampled_from(["h5", "cgns"]))
@example(seed=1, variables=["RHO", "MYVAR"], fmt="cgns")
@example(seed=2, variables=["U/V", "U_V", "/"], fmt="h5")
def test_serafin_names_come_back_byte_for_byte(seed, variables, fmt):
    """A SERAFIN result through HDF5 (VTKHDF) or CGNS and back: the same file, every name (16
    characters, blanks kept) in its place."""
    rng = np.random.default_rng(seed)
    ikle, x, y, ipobo = gen.triangles(int(rng.integers(2, 6)), int(rng.integers(2, 5)), rng)
    frames = [(float(t), [rng.uniform(-1, 1, len(x)).astype("f4") for _ in variables]) for t in range(2)]
    src = gen.serafin("names", [(v, "M") for v in variables], ikle, ipobo, x, y, frames)
    with gen.scratch() as tmp:
        (tmp / "in.slf").write_bytes(src)
        conftest.assert_status(gen.ab("convert", tmp / "in.slf", tmp / f"x.{fmt}"), 0)
        conftest.assert_status(gen.ab("convert", tmp / f"x.{fmt}", tmp / "back.slf"), 0)
        assert (tmp / "back.slf").read_bytes() == src, (fmt, variables)
