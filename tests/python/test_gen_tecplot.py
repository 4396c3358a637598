"""Tecplot .plt files drawn at random, checked by two independent readers (the pure-Python
`tecio-python` and `tecio` from PyPI, each in its own environment: tecplot_dump.py) and
read back by anabranch on another rank count:

- multi-block grids written by every rank from random pieces (1 to 3 ranks, emulated nodes,
  every strategy, single or double precision, 0 to 3 frames, the header's room for fewer,
  as many or more frames than written, the grid written or the index space): one ORDERED
  zone a block and a frame, X, Y, Z shared from the first frame, every value, time, strand
  and min/max as numpy has them;
- mesh results converted from SERAFIN (built with numpy) under mpiexec: triangles, quads,
  TELEMAC-3D prisms as FEBRICK with repeated nodes, a zone a frame sharing X, Y and the
  connectivity; converted back, the values and the header as they were;
- other writers' files: built with `tecio`'s own record definitions (its construct
  structures), ordered and finite-element zones, float and double, shared variables and
  connectivity, auxiliary data; version 191 headers;
- damaged files (cut anywhere, a wrong marker, sizes past the end, zone types not read)
  refused in one line naming the file, the zone and the byte.

`tecio` 2.0.6 cannot read a zone whose connectivity is shared (its own check reads the
connectivity it did not read): it checks the files whose zones hold their own."""
import json
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen
import slf
from test_gen_blocks import SCRIPT, split, value

pytestmark = [pytest.mark.mpi, pytest.mark.generated]
HERE = pathlib.Path(__file__).parent
READERS = {}
for _name in ("tecio-python", "tecio"):
    _base = os.environ.get("AB_TECPLOT_READERS") or str(pathlib.Path(sys.executable).parents[2])
    READERS[_name] = pathlib.Path(_base) / f"venv-{_name}" / "bin" / "python"


def read_with(reader, path, tmp):
    """What `reader` finds in the file: (meta, arrays) (tecplot_dump.py)."""
    if not READERS[reader].exists():
        pytest.skip(f"the {reader} reader's environment {READERS[reader].parents[1]} is missing: run scripts/setup.sh --test")
    out = tmp / f"dump-{reader}.npz"
    p = subprocess.run([str(READERS[reader]), str(HERE / "tecplot_dump.py"), reader, str(path), str(out)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"{reader} cannot read {path}:\n{p.stderr[-3000:]}"
    with np.load(out) as z:
        return json.loads(str(z["meta"])), {k: z[k] for k in z.files if k != "meta"}


def ijk(d):
    k, j, i = np.meshgrid(np.arange(d[2]), np.arange(d[1]), np.arange(d[0]), indexing="ij")
    return i.ravel(), j.ravel(), k.ravel()


@gen.cases(12)
@given(seed=st.integers(0, 2**32 - 1), nblocks=st.integers(1, 4), ranks=st.integers(1, 3), nodes=st.integers(1, 2),
       real=st.sampled_from(["f4", "f8"]), strategy=st.sampled_from(["independent", "collective", "aggregated", "aggregated-async"]),
       nvar=st.integers(0, 3), frames=st.integers(0, 3), reserve=st.sampled_from([None, 1, 2, 3, 5]), grid=st.booleans(),
       reread=st.integers(1, 3))
def test_block_plt_from_random_pieces(seed, nblocks, ranks, nodes, real, strategy, nvar, frames, reserve, grid, reread):
    rng = np.random.default_rng(seed)
    dims = [[int(x) for x in rng.integers(1, 7, 3)] for _ in range(nblocks)]
    variables = [f"q{v}" for v in range(nvar)]
    frames = frames if nvar else 0
    times = sorted(float(t) for t in rng.uniform(0, 5, frames))
    opts = [f"strategy={strategy}", f"precision={real[1]}"] + ([f"frames={reserve}"] if reserve else [])
    halo = [int(x) for x in rng.integers(0, 2, 3)]
    spec = dict(mode="write", dims=dims, pieces=split(rng, dims, ranks), halo=halo, variables=variables, times=times,
                options=" ".join(opts), grid=grid, real=real, **{"async": strategy == "aggregated-async"})
    with gen.scratch() as tmp:
        out = tmp / "out.plt"
        (tmp / "spec.py").write_text(repr(spec))
        (tmp / "run.py").write_text(SCRIPT)
        conftest.assert_status(conftest.mpirun(ranks, sys.executable, tmp / "run.py", tmp / "spec.py", out, env=gen.nodes(min(nodes, ranks))), 0)
        zones = nblocks * max(frames, 1)
        first = np.cumsum([0] + [int(np.prod(d)) for d in dims])
        for reader in ("tecio-python", "tecio"):
            meta, arrays = read_with(reader, out, tmp)
            assert meta["variables"] == ["X", "Y", "Z"] + variables, reader
            assert len(meta["zones"]) == zones, reader
            for z, zone in enumerate(meta["zones"]):
                f, b = divmod(z, nblocks)
                where = f"{reader}: zone {z + 1}"
                assert zone["name"] == f"block {b + 1}" and zone["type"] == "ORDERED", where
                assert zone["strand"] == b and zone["time"] == (times[f] if frames else 0.0), where
                assert zone["shared"] == [b if f else None] * 3 + [None] * nvar, where
                i, j, k = ijk(dims[b])
                want = [value(b, c + 100, 0, i, j, k) for c in range(3)] if grid else [i + first[b], j, k]
                want += [value(b, v, f, i, j, k) if frames else np.zeros(i.size) for v in range(nvar)]
                for v, w in enumerate(want):
                    w = np.asarray(w, real).astype(float)
                    np.testing.assert_array_equal(arrays[f"z{z}_v{v}"].astype(float), w, err_msg=f"{where}, variable {v}")
                    if "minmax" in zone and str(v) in zone["minmax"]:
                        assert zone["minmax"][str(v)] == [w.min(), w.max()], f"{where}: min/max of variable {v}"
        if frames:  # read back: another rank count, other pieces and halos, any read strategy
            rspec = dict(spec, mode="read", pieces=split(rng, dims, reread), halo=[int(x) for x in rng.integers(0, 2, 3)],
                         options=f"strategy={rng.choice(['independent', 'collective', 'aggregated'])}")
            (tmp / "spec.py").write_text(repr(rspec))
            conftest.assert_status(conftest.mpirun(reread, sys.executable, tmp / "run.py", tmp / "spec.py", out), 0)
        r = gen.ab("info", out, "--check")
        conftest.assert_status(r, 0)
        assert "blocks-tecplot" in r.stdout and f"{nblocks} block" in r.stdout, r.stdout


def prisms(ikle2, npoin2, nplan):
    """TELEMAC-3D's prisms over a 2D mesh: ikle (nelem2 x (nplan - 1), 6), 1-based."""
    return np.array([[*(ikle2[e] + p * npoin2), *(ikle2[e] + (p + 1) * npoin2)] for p in range(nplan - 1) for e in range(len(ikle2))])


def quads(nx, ny):
    node = lambda a, b: b * nx + a + 1  # noqa: E731
    return np.array([(node(a, b), node(a + 1, b), node(a + 1, b + 1), node(a, b + 1)) for b in range(ny - 1) for a in range(nx - 1)])


@gen.cases(10)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from(["triangles", "quads", "prisms"]), ranks=st.integers(1, 3),
       real=st.sampled_from(["f4", "f8"]), order=st.sampled_from([">", "<"]), frames=st.integers(0, 3), nvar=st.integers(1, 3),
       back=st.integers(1, 3))
def test_mesh_plt_from_serafin(seed, shape, ranks, real, order, frames, nvar, back):
    rng = np.random.default_rng(seed)
    nx, ny = int(rng.integers(2, 7)), int(rng.integers(2, 6))
    ikle, x, y, ipobo = gen.triangles(nx, ny, rng)
    iparam = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    if shape == "quads":
        ikle, ipobo = quads(nx, ny), np.zeros(nx * ny, int)
    if shape == "prisms":
        nplan = int(rng.integers(2, 4))
        ikle, x, y = prisms(ikle, nx * ny, nplan), np.tile(x, nplan), np.tile(y, nplan)
        ipobo = np.zeros(x.size, int)
        iparam[6] = nplan
    npoin = x.size
    names = [(f"VAR {v}", "M/S") for v in range(nvar)]
    if shape == "prisms":
        names[0] = ("ELEVATION Z", "M")
    values = [(60.0 * f + 0.5, [rng.uniform(-100, 100, npoin) for _ in range(nvar)]) for f in range(frames)]
    date = [2026, 12, 7, 10, 20, 30] if rng.random() < 0.5 else None
    with gen.scratch() as tmp:
        src, out, back_slf = tmp / "m.slf", tmp / "m.plt", tmp / "back.slf"
        src.write_bytes(gen.serafin("a mesh of " + shape, names, ikle, ipobo, x, y, values, order=order, real=real, date=date, iparam=iparam))
        conftest.assert_status(conftest.mpirun(ranks, conftest.EXE, "convert", src, out), 0)
        s = slf.read(src)
        ndp = ikle.shape[1]
        for reader in ("tecio-python",) + (("tecio",) if frames <= 1 else ()):
            meta, arrays = read_with(reader, out, tmp)
            assert meta["variables"] == ["X", "Y"] + [n for n, _ in names], reader
            assert len(meta["zones"]) == max(frames, 1), reader
            for f, zone in enumerate(meta["zones"]):
                where = f"{reader}: zone {f + 1}"
                assert zone["type"] == {"triangles": "FETRIANGLE", "quads": "FEQUADRILATERAL", "prisms": "FEBRICK"}[shape], where
                assert zone["time"] == (float(np.asarray(values[f][0], real)) if frames else 0.0), where
                assert zone["shared"] == ([0, 0] if f else [None, None]) + [None] * nvar, where
                np.testing.assert_array_equal(arrays[f"z{f}_v0"].astype(float), s.x.astype(float), err_msg=where)
                np.testing.assert_array_equal(arrays[f"z{f}_v1"].astype(float), s.y.astype(float), err_msg=where)
                for v, axis in enumerate((s.x, s.y)):  # the first zone's own X and Y: their ranges from every rank's nodes
                    if "minmax" in zone and str(v) in zone["minmax"]:
                        assert zone["minmax"][str(v)] == [float(axis.min()), float(axis.max())], f"{where}: min/max of {'XY'[v]}"
                for v in range(nvar):
                    want = s.frames[f][1][v].astype(float) if frames else np.zeros(npoin)
                    np.testing.assert_array_equal(arrays[f"z{f}_v{v + 2}"].astype(float), want, err_msg=f"{where}, variable {v}")
                    if "minmax" in zone and str(v + 2) in zone["minmax"]:
                        assert zone["minmax"][str(v + 2)] == [want.min(), want.max()], where
                if f"z{f}_c" in arrays:
                    want = s.ikle - 1 if ndp != 6 else (s.ikle - 1)[:, [0, 1, 2, 2, 3, 4, 5, 5]]
                    np.testing.assert_array_equal(arrays[f"z{f}_c"], want, err_msg=f"{where}: connectivity")
        # back to SERAFIN, alone or under mpiexec on another count: the same header (IPOBO
        # aside: Tecplot has none) and values
        if back == 1:
            conftest.assert_status(gen.ab("convert", out, back_slf), 0)
        else:
            conftest.assert_status(conftest.mpirun(back, conftest.EXE, "convert", out, back_slf), 0)
        b = slf.read(back_slf)
        assert (b.title, b.vars, b.iparam, b.date, b.order, b.rs) == (s.title, s.vars, s.iparam, s.date, s.order, s.rs)
        np.testing.assert_array_equal(b.ikle, s.ikle)
        np.testing.assert_array_equal(b.x, s.x)
        np.testing.assert_array_equal(b.y, s.y)
        assert not b.ipobo.any()
        assert len(b.frames) == frames
        for (t1, v1), (t2, v2) in zip(b.frames, s.frames):
            assert t1 == t2
            for p, q in zip(v1, v2):
                np.testing.assert_array_equal(p, q)
        r = gen.ab("info", out)
        conftest.assert_status(r, 0)
        assert "Tecplot binary" in r.stdout and f"NPOIN {npoin:,}" in r.stdout, r.stdout


BUILDER = r'''
import json, sys
import construct, numpy as np
from tecio.tecio import TecHeader, TecDatasetAux, gen_zone_struct, gen_data_struct, ZoneType, VarType
spec = json.load(open(sys.argv[1]))
arrays = np.load(sys.argv[2])
nvar = len(spec["variables"])
with open(sys.argv[3], "wb") as f:
    f.write(TecHeader.build(dict(title=spec["title"], variables=spec["variables"])))
    for name, value in spec["aux"]:
        f.write(TecDatasetAux.build(dict(name=name, value=value)))
    zones = []
    for z in spec["zones"]:
        d = dict(title=z["name"], time_strand=z["strand"], solution_time=z["time"], zone_type=ZoneType[z["type"]],
                 has_var_loc=bool(z.get("var_loc")), var_loc=z.get("var_loc") or None, aux_vars=[])
        if z["type"] == "ORDERED":
            d.update(ijk=z["ijk"], num_pts=None, num_elems=None)
        else:
            d.update(ijk=None, num_pts=z["nodes"], num_elems=z["elements"], cell_dim=[0, 0, 0])
        zones.append(d)
        f.write(gen_zone_struct(nvar).build(d))
    f.write(construct.Float32l.build(357.0))
    for zi, z in enumerate(spec["zones"]):
        shared = z["shared"]
        own = [v for v in range(nvar) if shared[v] < 0]
        data = []
        for v in own:
            a = arrays[f"z{zi}_v{v}"].astype("f8" if z["types"][v] == "Double" else "f4")
            data.append(a.reshape(z["ijk"], order="F") if z["type"] == "ORDERED" else a)
        dd = dict(data_type=[VarType[t] for t in z["types"]], has_passive_var=False, passive_var=None,
                  has_shared_var=any(s >= 0 for s in shared), shared_var=shared if any(s >= 0 for s in shared) else None,
                  shared_connectivity=-1, min_max=[[float(a.min()), float(a.max())] for a in data], data=data,
                  connect=arrays[f"z{zi}_c"].tolist() if f"z{zi}_c" in arrays.files else None)
        f.write(gen_data_struct(spec["variables"], zones[zi]).build(dd))
'''


def build_with_tecio(spec, arrays, out, tmp):
    """A .plt made by `tecio`'s own record definitions (another writer's bytes)."""
    if not READERS["tecio"].exists():
        pytest.skip("the tecio environment is missing: run scripts/setup.sh --test")
    (tmp / "build.py").write_text(BUILDER)
    (tmp / "spec.json").write_text(json.dumps(spec))
    np.savez(tmp / "arrays.npz", **arrays)
    p = subprocess.run([str(READERS["tecio"]), str(tmp / "build.py"), str(tmp / "spec.json"), str(tmp / "arrays.npz"), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


@gen.cases(8)
@given(seed=st.integers(0, 2**32 - 1), nblocks=st.integers(1, 3), frames=st.integers(1, 3), nvar=st.integers(1, 2),
       share=st.booleans(), strands=st.booleans(), double=st.booleans(), ranks=st.integers(1, 3))
def test_other_writers_ordered_zones_read_as_blocks(seed, nblocks, frames, nvar, share, strands, double, ranks):
    """Ordered zones from another writer: the later frames' zones sharing the grid or
    repeating it, strands or static zones (frames told by their times), read on 1 to 3
    ranks into an HDF5 block file whose every value h5py compares."""
    h5py = pytest.importorskip("h5py")
    rng = np.random.default_rng(seed)
    dims = [[int(x) for x in rng.integers(1, 6, 3)] for _ in range(nblocks)]
    variables = ["x", "y", "z"] + [f"Q{v}" for v in range(nvar)]
    times = [0.25 * f + 1 for f in range(frames)]
    spec, arrays = {"title": "from tecio", "variables": variables, "aux": [["Common.Time", "1"]], "zones": []}, {}
    for f in range(frames):
        for b, d in enumerate(dims):
            z = len(spec["zones"])
            shared = [b if (f and share) else -1] * 3 + [-1] * nvar
            types = ["Double" if double else "Float"] * len(variables)
            if f and not share and rng.random() < 0.5:  # a later frame's own grid is not read (the grid is the first frame's)
                types[:3] = ["Float" if double else "Double"] * 3
            spec["zones"].append({"name": f"Zone {z}", "type": "ORDERED", "ijk": d, "time": times[f], "strand": b if strands else -1,
                                  "shared": shared, "types": types,
                                  "var_loc": [0] * len(variables) if rng.random() < 0.5 else None})  # every variable said nodal
            for v in range(len(variables)):
                arrays[f"z{z}_v{v}"] = rng.uniform(-5, 5, int(np.prod(d))) if v >= 3 or f == 0 else arrays[f"z{b}_v{v}"]
    with gen.scratch() as tmp:
        src, out = tmp / "other.plt", tmp / "out.h5"
        build_with_tecio(spec, arrays, src, tmp)
        conftest.assert_status(conftest.mpirun(ranks, conftest.EXE, "convert", src, out), 0)
        real = "f8" if double else "f4"
        with h5py.File(out) as h:
            off = h["blocks/offsets"][:]
            assert [list(x) for x in h["blocks/dims"][:]] == dims
            frames_h5 = sorted(h["frames"])
            assert len(frames_h5) == frames
            for f, fr in enumerate(frames_h5):
                assert h["frames"][fr].attrs["time"] == times[f]
                for b in range(nblocks):
                    for v in range(nvar):
                        want = arrays[f"z{f * nblocks + b}_v{v + 3}"].astype(real)
                        np.testing.assert_array_equal(h[f"frames/{fr}/Q{v}"][off[b]:off[b + 1]], want, err_msg=f"frame {f} block {b}")
            for b in range(nblocks):
                for c, axis in enumerate("xyz"):
                    np.testing.assert_array_equal(h[f"grid/{axis}"][off[b]:off[b + 1]], arrays[f"z{b}_v{c}"].astype(real))


@gen.cases(8)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from(["FETRIANGLE", "FEQUADRILATERAL"]), frames=st.integers(1, 3),
       nvar=st.integers(1, 3), mixed=st.booleans(), ranks=st.integers(1, 3))
def test_other_writers_fe_zones_read_as_a_mesh_result(seed, shape, frames, nvar, mixed, ranks):
    """Finite-element zones from another writer, each holding the connectivity, X and Y in
    double and the variables in float or double: a SERAFIN file (under mpiexec, 1 to 3 ranks)
    whose mesh, times and values slf.py compares."""
    rng = np.random.default_rng(seed)
    nx, ny = int(rng.integers(2, 6)), int(rng.integers(2, 6))
    ikle, x, y, _ = gen.triangles(nx, ny, rng)
    if shape == "FEQUADRILATERAL":
        ikle = quads(nx, ny)
    variables = ["X", "Y"] + [f"V{v}" for v in range(nvar)]
    types = ["Double", "Double"] + [("Float" if mixed else "Double")] * nvar
    spec, arrays = {"title": "fe from tecio", "variables": variables, "aux": [], "zones": []}, {}
    for f in range(frames):
        spec["zones"].append({"name": f"t{f}", "type": shape, "nodes": x.size, "elements": len(ikle), "time": 10.0 * f, "strand": 0,
                              "shared": [0 if f else -1] * 2 + [-1] * nvar, "types": types})
        arrays[f"z{f}_c"] = np.asarray(ikle - 1)
        arrays[f"z{f}_v0"], arrays[f"z{f}_v1"] = x, y
        for v in range(nvar):
            arrays[f"z{f}_v{v + 2}"] = rng.uniform(-9, 9, x.size)
    with gen.scratch() as tmp:
        src, out = tmp / "other.plt", tmp / "out.slf"
        build_with_tecio(spec, arrays, src, tmp)
        conftest.assert_status(conftest.mpirun(ranks, conftest.EXE, "convert", src, out), 0)
        s = slf.read(out)
        assert [v[:16].strip() for v in s.vars] == variables[2:]
        np.testing.assert_array_equal(s.ikle, ikle)
        real = "f8" if not mixed else "f4"
        np.testing.assert_array_equal(s.x.astype(float), x.astype(real).astype(float))
        assert [t for t, _ in s.frames] == [10.0 * f for f in range(frames)]
        for f in range(frames):
            for v in range(nvar):
                np.testing.assert_array_equal(s.frames[f][1][v].astype(float), arrays[f"z{f}_v{v + 2}"].astype("f4" if mixed else "f8").astype(float))


def test_a_connectivity_naming_a_missing_node_is_refused_at_its_byte(ab, tmp_path):
    """A finite-element zone whose second element names a node the zone does not have:
    convert under mpiexec refuses it in one line naming the zone, the element's byte and the
    node; nothing is written."""
    a, good = tmp_path / "m.slf", tmp_path / "good.plt"
    a.write_bytes(gen.serafin("t", [("U", "M/S")], *quads_mesh(), frames=[(1.0, [np.arange(12.0)])]))
    conftest.assert_status(ab("convert", a, good), 0)
    data = bytearray(good.read_bytes())
    at = bytes(data).find(np.asarray(slf.read(a).ikle - 1, "<i4").tobytes())
    assert at > 0
    data[at + 16:at + 20] = struct.pack("<i", 99)  # element 2's first node (4 nodes an element)
    bad, out = tmp_path / "bad.plt", tmp_path / "out.slf"
    bad.write_bytes(bytes(data))
    r = conftest.mpirun(2, conftest.EXE, "convert", bad, out)
    assert r.returncode == 1, r.stderr[-2000:]
    lines = conftest.error_lines(r.stderr)
    assert len(set(lines)) == 1, lines
    for w in ("bad.plt", "zone 1", f"byte {at + 16}", "element 2", "node 99 of 12"):
        assert w in lines[0], (w, lines[0])
    assert not out.exists()


def test_serafin_facts_naming_other_variables_are_refused(tmp_path):
    """A file whose anabranch.serafin record names another variable count than the file holds
    (another writer copying the record): refused in one line saying both counts."""
    ikle, _, x, y = quads_mesh()
    spec = {"title": "t", "variables": ["X", "Y", "U", "V"], "zones": [],
            "aux": [["anabranch.serafin", json.dumps({"variables": [["55", "4d"]]})]]}
    spec["zones"].append({"name": "frame 000000", "type": "FEQUADRILATERAL", "nodes": 12, "elements": len(ikle), "time": 0.0,
                          "strand": 0, "shared": [-1] * 4, "types": ["Float"] * 4})
    arrays = {"z0_c": np.asarray(ikle - 1), "z0_v0": x, "z0_v1": y, "z0_v2": np.arange(12.0), "z0_v3": np.ones(12)}
    src, out = tmp_path / "other.plt", tmp_path / "out.slf"
    build_with_tecio(spec, arrays, src, tmp_path)
    r = gen.ab("convert", src, out)
    assert r.returncode == 1, r.stderr[-2000:]
    lines = conftest.error_lines(r.stderr)
    assert len(set(lines)) == 1 and "names 1 variables, the file has 2 after X and Y" in lines[0], lines
    assert not out.exists()


def header_places(data):
    """A little-endian .plt header walked (the test's own reading of the format guide): each
    zone header's start and the offsets of its type and first size word; the end-of-header
    marker's offset."""
    at = 16

    def text():
        nonlocal at
        while struct.unpack_from("<i", data, at)[0] != 0:
            at += 4
        at += 4
    text()
    nvar = struct.unpack_from("<i", data, at)[0]
    at += 4
    for _ in range(nvar):
        text()
    zones = []
    while True:
        marker = struct.unpack_from("<f", data, at)[0]
        at += 4
        if marker == 357.0:
            return zones, at - 4
        if marker == 799.0:
            text()
            at += 4
            text()
            continue
        assert marker == 299.0, marker
        start = at - 4
        text()
        type_at = at + 4 + 4 + 8 + 4
        ztype = struct.unpack_from("<i", data, type_at)[0]
        at = type_at + 4 + 4 + 4 + 4
        zones.append({"start": start, "type_at": type_at, "sizes_at": at})
        at += 12 if ztype == 0 else 4 + 4 + 12
        at += 4


def test_version_191_headers_read_as_version_112(ab, tmp_path):
    """A version 191 header differs for classic zones only in its magic number and zone
    markers (298): both readers and anabranch find the same blocks and mesh in it."""
    a = tmp_path / "m.slf"
    a.write_bytes(gen.serafin("t", [("U", "M/S"), ("V", "M/S")], *quads_mesh(), frames=[(1.0, [np.arange(12.0), -np.arange(12.0)]),
                                                                                        (2.0, [np.ones(12), np.zeros(12)])]))
    plt, v191 = tmp_path / "m.plt", tmp_path / "m191.plt"
    conftest.assert_status(ab("convert", a, plt), 0)
    data = bytearray(plt.read_bytes())
    zones, _ = header_places(data)
    data[0:8] = b"#!TDV191"
    for z in zones:
        data[z["start"]:z["start"] + 4] = struct.pack("<f", 298.0)
    v191.write_bytes(bytes(data))
    one, _ = read_with("tecio-python", plt, tmp_path)
    two, arrays = read_with("tecio-python", v191, tmp_path)
    assert one["zones"] == two["zones"]
    back = tmp_path / "back.slf"
    conftest.assert_status(ab("convert", v191, back), 0)
    assert ab("diff", a, back, "--values-only").returncode == 0
    r = ab("info", v191)
    assert "#!TDV191" in r.stdout, r.stdout


def quads_mesh():
    ikle = quads(4, 3)
    i, j = np.meshgrid(np.arange(4.0), np.arange(3.0))
    return ikle, np.zeros(12, int), i.ravel(), j.ravel()


def damaged_cases(data, mesh):
    """(name, bytes, the words the one-line error must hold)."""
    zones, eoh = header_places(data)
    out = []
    for cut in sorted({17, eoh - 2, eoh + 2, eoh + 40, len(data) // 2, len(data) - 3}):
        out.append((f"cut at {cut}", data[:cut], ["the file ends"]))
    first = eoh + 4  # the first zone's data marker
    bad = bytearray(data)
    bad[first:first + 4] = struct.pack("<f", 300.0)
    out.append(("wrong data marker", bytes(bad), ["zone 1", f"byte {first}", "marker"]))
    big = bytearray(data)
    big[zones[0]["sizes_at"]:zones[0]["sizes_at"] + 4] = struct.pack("<i", 10**6)  # IMax or the node count: past the end
    out.append(("sizes past the end", bytes(big), ["zone 1", "the file ends"]))
    if mesh:  # the first zone made polygonal: its header's four face counts after the node count
        poly = bytearray(data)
        poly[zones[0]["type_at"]:zones[0]["type_at"] + 4] = struct.pack("<i", 6)
        poly[zones[0]["sizes_at"] + 4:zones[0]["sizes_at"] + 4] = struct.pack("<4i", 4, 8, 0, 0)
        out.append(("polygonal", bytes(poly), ["zone 1", "FEPOLYGON", "not read"]))
    fmt0 = bytearray(data)
    fmt0[first + 4:first + 8] = struct.pack("<i", 0)  # the first variable's value format
    out.append(("value format 0", bytes(fmt0), ["zone 1", f"byte {first + 4}", "value format 0"]))
    text = bytearray(data)
    text[eoh:eoh] = struct.pack("<f", 499.0) + bytes(40)  # a text record before the end of the header
    out.append(("text record", bytes(text), [f"byte {eoh}", "a text record"]))
    wrong = bytearray(data)
    wrong[zones[0]["type_at"]:zones[0]["type_at"] + 4] = struct.pack("<i", 11)
    out.append(("zone type 11", bytes(wrong), ["zone 1", f"byte {zones[0]['type_at']}", "zone type 11"]))
    geom = bytearray(data)
    geom[eoh:eoh] = struct.pack("<f", 399.0) + bytes(40)  # a geometry record before the end of the header
    out.append(("geometry record", bytes(geom), [f"byte {eoh}", "geometry"]))
    out.append(("szplt", b"#!SZPLT\x00" + bytes(64), ["byte 0", ".szplt", "not read"]))
    out.append(("ascii", b'TITLE = "t"\nVARIABLES = "X" "Y"\nZONE I=2\n0 0\n1 1\n', ["byte 0", "not a Tecplot binary file", "ASCII"]))
    return out


@pytest.mark.parametrize("kind", ["blocks", "mesh"])
def test_damaged_files_are_refused_in_one_line(ab, tmp_path, kind):
    """A .plt cut anywhere, with a wrong marker, sizes past its end, a zone type anabranch does
    not read or a geometry record: info, and convert under mpiexec on 2 ranks, refuse it in one
    line naming the file (and where there is one, the zone and the byte); nothing is written."""
    good = tmp_path / "good.plt"
    if kind == "mesh":
        a = tmp_path / "m.slf"
        a.write_bytes(gen.serafin("t", [("U", "M/S")], *quads_mesh(), frames=[(1.0, [np.arange(12.0)]), (2.0, [np.ones(12)])]))
        conftest.assert_status(ab("convert", a, good), 0)
    else:
        spec = dict(mode="write", dims=[[3, 2, 2], [2, 2, 1]], pieces=[[(0, (0, 3), (0, 2), (0, 2)), (1, (0, 2), (0, 2), (0, 1))]],
                    halo=[0, 0, 0], variables=["p"], times=[0.0, 1.0], options="", grid=True, real="f8", **{"async": False})
        (tmp_path / "spec.py").write_text(repr(spec))
        (tmp_path / "run.py").write_text(SCRIPT)
        conftest.assert_status(conftest.mpirun(1, sys.executable, tmp_path / "run.py", tmp_path / "spec.py", good), 0)
    for name, data, words in damaged_cases(good.read_bytes(), kind == "mesh"):
        bad = tmp_path / "bad.plt"
        bad.write_bytes(data)
        for how, r in (("info", ab("info", bad)),
                       ("convert", conftest.mpirun(2, conftest.EXE, "convert", bad, tmp_path / ("out.h5" if kind == "blocks" else "out.slf")))):
            assert r.returncode == 1, (name, how, r.returncode, r.stderr[-2000:])
            lines = conftest.error_lines(r.stderr)
            assert len(set(lines)) == 1, (name, how, lines)
            for w in ["bad.plt"] + words:
                assert w in lines[0], (name, how, w, lines[0])
            assert not (tmp_path / "out.h5").exists() and not (tmp_path / "out.slf").exists(), (name, how)
