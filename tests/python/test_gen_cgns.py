"""CGNS files drawn at random, both ways, against numpy. Written: block files of random
blocks (flat ones, one point thick, among them), variables and frames converted to CGNS,
every coordinate and solution value read back with h5py from the file's own HDF5 tree (a
CGNS file is an HDF5 file), the times in BaseIterativeData. Read: files the CGNS library
itself writes (a C program over libcgns), zones of cell dimension 2 or 3 in 2 or 3 physical
dimensions, vertex or cell-centred solutions with rind planes or none, several solutions
with their times; converted to a block file and compared with numpy's reading of what was
written (a cell-centred file's blocks are its cells, at the mean of their corners)."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import conftest
import gen
import slf

pytestmark = [pytest.mark.formats, pytest.mark.generated]
h5py = pytest.importorskip("h5py")
anabranch = pytest.importorskip("anabranch")


def cgns_available():
    r = gen.ab("convert", "--help")
    return "cgns" in r.stdout


def zones_of(f):
    """{zone name: h5py group} over every base of a CGNS/HDF5 file."""
    out = {}
    for base in f.values():
        if isinstance(base, h5py.Group) and base.attrs.get("label", b"") in (b"CGNSBase_t", "CGNSBase_t"):
            for name, z in base.items():
                if isinstance(z, h5py.Group) and z.attrs.get("label", b"") in (b"Zone_t", "Zone_t"):
                    out[name] = z
    return out


def data(node):
    return node[" data"][()]


def labelled(group, label):
    return [(n, g) for n, g in group.items() if isinstance(g, h5py.Group) and g.attrs.get("label", b"") in (label.encode(), label)]


# SIDS's exponents of mass, length, time, temperature and angle (SIDS, "Data-Array Structure
# Definitions": the identifiers' units).
SIDS_EXPONENTS = {"Density": [1, -3, 0, 0, 0], "VelocityX": [0, 1, -1, 0, 0], "VelocityY": [0, 1, -1, 0, 0], "VelocityZ": [0, 1, -1, 0, 0],
                  "Pressure": [1, -1, -2, 0, 0], "MomentumX": [1, -2, -1, 0, 0], "MomentumY": [1, -2, -1, 0, 0],
                  "MomentumZ": [1, -2, -1, 0, 0], "Temperature": [0, 0, 0, 1, 0], "EnergyStagnationDensity": [1, -1, -2, 0, 0],
                  "Entropy": [1, 2, -2, -1, 0], "Enthalpy": [0, 2, -2, 0, 0], "ViscosityEddyKinematic": [0, 2, -1, 0, 0],
                  "ViscosityEddy": [1, -1, -1, 0, 0], "TurbulentEnergyKinetic": [0, 2, -2, 0, 0],
                  "TurbulentDissipation": [0, 2, -3, 0, 0], "TurbulentDissipationRate": [0, 0, -1, 0, 0],
                  "TurbulentSANuTilde": [0, 2, -1, 0, 0]}


@gen.cases(15)
@given(seed=st.integers(0, 2**32 - 1), nblocks=st.integers(1, 4), nvar=st.integers(1, 3), frames=st.integers(1, 3),
       names=st.sampled_from([["rho", "u", "p"], ["Density", "MomentumX", "myvar"], ["a", "b", "c"],
                              ["water depth above the bed, metres", "water depth above the bed, metres (2)", "VELOCITY U"],
                              ["pressure", "density", "temperature"], ["omega", "k", "nutilde"], ["epsilon", "nut", "mut"],
                              ["T", "rhoE", "entropy"], ["enthalpy", "rhow", "mach"]]), grid=st.booleans(), direct=st.booleans())
@example(seed=7, nblocks=1, nvar=3, frames=1, names=["omega", "k", "nutilde"], grid=True, direct=False)
@example(seed=8, nblocks=1, nvar=3, frames=1, names=["epsilon", "nut", "mut"], grid=False, direct=True)
@example(seed=9, nblocks=1, nvar=3, frames=1, names=["T", "rhoE", "entropy"], grid=True, direct=True)
@example(seed=10, nblocks=1, nvar=3, frames=1, names=["enthalpy", "rhow", "mach"], grid=False, direct=False)
@example(seed=3, nblocks=2, nvar=3, frames=1, names=["rho", "u", "p"], grid=True, direct=False)
@example(seed=4, nblocks=1, nvar=3, frames=1, names=["pressure", "density", "temperature"], grid=True, direct=False)
@example(seed=5, nblocks=2, nvar=2, frames=2, names=["rho", "u", "p"], grid=False, direct=True)
@example(seed=6, nblocks=1, nvar=2, frames=1, names=["a", "b", "c"], grid=False, direct=False)
def test_block_files_to_cgns_and_back(seed, nblocks, nvar, frames, names, grid, direct):
    """A block file converted to CGNS, or CGNS written by the block writer itself (direct),
    with its grid or without (CGNS then gets the index space, the blocks one after another
    along x, written at close after the frames)."""
    rng = np.random.default_rng(seed)
    layout = anabranch.BlockLayout()
    dims = []
    for b in range(nblocks):
        d = [int(x) for x in rng.integers(2, 6, 3)]
        if rng.random() < 0.4:
            d[2] = 1  # flat: a 2D zone
        dims.append(d)
        layout.add_block(b + 1, *d)
        layout.add_piece(b + 1)
    names = names[:nvar]
    xyz = [[rng.uniform(-5, 5, int(np.prod(d))) for _ in range(3)] for d in dims]
    for b, d in enumerate(dims):
        if d[2] == 1:
            xyz[b][2][:] = 0.0 if rng.random() < 0.5 else rng.uniform(-1, 1)  # a flat block's z: one value
    vals = [[[rng.uniform(-1, 1, int(np.prod(d))) * 10.0 ** rng.integers(-3, 4) for _ in range(nvar)] for d in dims]
            for _ in range(frames)]
    times = sorted(float(t) for t in rng.uniform(0, 10, frames))
    if not grid:  # the index space, the blocks one after another along x (from each block's first point)
        first = np.cumsum([0] + [int(np.prod(d)) for d in dims])  # x from each block's first point
        for b, d in enumerate(dims):
            k, j, i = np.meshgrid(np.arange(d[2]), np.arange(d[1]), np.arange(d[0]), indexing="ij")
            xyz[b] = [(i + first[b]).ravel().astype(float), j.ravel().astype(float), k.ravel().astype(float)]
    with gen.scratch() as tmp:
        for out in (["in.h5", "out.cgns"] if direct else ["in.h5"]):
            with anabranch.BlockWriter(None, tmp / out, layout, names) as w:
                if grid:
                    w.write_grid(xyz)
                for t, v in zip(times, vals):
                    w.write_frame(t, v)
        if not direct:
            r = gen.ab("convert", tmp / "in.h5", tmp / "out.cgns")
            conftest.assert_status(r, 0)
        with h5py.File(tmp / "out.cgns") as f:
            zones = zones_of(f)
            assert sorted(zones) == sorted(f"block_{b + 1}" for b in range(nblocks))
            for b, d in enumerate(dims):
                z = zones[f"block_{b + 1}"]
                shape = tuple(reversed(d)) if d[2] > 1 else (d[1], d[0])
                for c, axis in enumerate("XYZ"):
                    np.testing.assert_array_equal(data(z["GridCoordinates"][f"Coordinate{axis}"]["DimensionalExponents"]), [0, 1, 0, 0, 0])
                    got = data(z["GridCoordinates"][f"Coordinate{axis}"])
                    assert got.shape == shape, (b, got.shape, shape)
                    np.testing.assert_array_equal(got.ravel(), xyz[b][c], err_msg=f"block {b + 1} {axis}")
                sols = sorted(n for n, _ in labelled(z, "FlowSolution_t"))
                assert len(sols) == frames
                for k, s in enumerate(sols):
                    fields = [n for n, _ in labelled(z[s], "DataArray_t")]
                    assert len(fields) == nvar
                    assert all(len(n) <= 32 for n in fields) and len(set(fields)) == nvar, fields  # SIDS's 32 characters
                    for v in range(nvar):  # a quantity SIDS names, under SIDS's name
                        if names[v] in ("pressure", "density", "temperature"):
                            assert names[v].capitalize() in fields, (names[v], fields)
                    for n in fields:  # SIDS's quantities carry their units' exponents
                        if n in SIDS_EXPONENTS:
                            np.testing.assert_array_equal(data(z[s][n]["DimensionalExponents"]), SIDS_EXPONENTS[n], err_msg=n)
                    loc = z[s].get("GridLocation")
                    assert loc is None or bytes(data(loc)).rstrip(b"\0") == b"Vertex"
                    got = {n: data(z[s][n]).ravel() for n in fields}
                    # the writer's names or SIDS's for them: the values, in the writer's variable order
                    assert len(got) == nvar
                    for v in range(nvar):
                        match = [n for n in fields if np.array_equal(got[n], vals[k][b][v])]
                        assert match, f"frame {k} block {b + 1}: no field holds variable {names[v]}"
            if frames:
                base_times = []
                for base in f.values():
                    if isinstance(base, h5py.Group) and "BaseIterativeData" in base:
                        base_times.append(list(data(base["BaseIterativeData"]["TimeValues"])))
                assert base_times and all(t == times for t in base_times), base_times
        r = gen.ab("convert", tmp / "out.cgns", tmp / "back.h5")
        conftest.assert_status(r, 0)
        d = gen.ab("diff", tmp / "back.h5", tmp / "in.h5", "--json")
        conftest.assert_status(d, 0)
        assert d.json()["identical"], d.stdout
        check = shutil.which("cgnscheck")
        if check:
            out = subprocess.run([check, tmp / "out.cgns"], capture_output=True, text=True, timeout=120).stdout
            assert not [line for line in out.splitlines() if line.startswith("ERROR")], out[-2000:]


def test_files_as_cgns_4_and_pcgns_write_them(tmp_path):
    """CGNS 4's library (pcgns among its builds) writes every name, label and type as a
    33-byte C string whose bytes after its end are left as they were, and a 64-bit build
    writes zone sizes as I8: such a file is read by the engine, every value as written."""
    layout = anabranch.BlockLayout()
    dims = [(4, 3, 2), (3, 3, 1)]
    for b, d in enumerate(dims):
        layout.add_block(b + 1, *d)
        layout.add_piece(b + 1)
    rng = np.random.default_rng(5)
    with anabranch.BlockWriter(None, tmp_path / "in.h5", layout, ["rho", "p"]) as w:
        w.write_grid([[rng.random(int(np.prod(d))) for _ in range(3)] for d in dims])
        for t in range(2):
            w.write_frame(0.5 * t, [[rng.random(int(np.prod(d))) for _ in range(2)] for d in dims])
    conftest.assert_status(gen.ab("convert", tmp_path / "in.h5", tmp_path / "out.cgns"), 0)
    with h5py.File(tmp_path / "out.cgns", "r+") as f:
        del f[" anabranch"]  # anabranch's index gone: the tree is walked

        def redo(name, node):
            for key in ("name", "label", "type"):
                if key in node.attrs:
                    text = bytes(node.attrs[key]).rstrip(b"\0")
                    del node.attrs[key]
                    node.attrs.create(key, np.array(text + b"\0" + b"junk after the end"[:32 - len(text)], dtype="S33"))
            if isinstance(node, h5py.Group) and node.attrs.get("label", b"").startswith(b"Zone_t\0"):
                sizes = node[" data"][()].astype("<i8")
                del node[" data"]
                node.create_dataset(" data", data=sizes)
                node.attrs["type"] = np.array(b"I8", dtype="S33")
        f.visititems(redo)
    info = gen.ab("info", tmp_path / "out.cgns")
    conftest.assert_status(info, 0)
    assert "read by anabranch's engine" in info.stdout, info.stdout
    conftest.assert_status(gen.ab("convert", tmp_path / "out.cgns", tmp_path / "back.h5"), 0)
    d = gen.ab("diff", tmp_path / "back.h5", tmp_path / "in.h5", "--json")
    conftest.assert_status(d, 0)
    assert d.json()["identical"], d.stdout


WRITER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cgnslib.h>
/* A CGNS file as a spec describes it (stdin: cell_dim phys_dim nzones nsol nvar location;
   per zone its points and the solution's rind (2 per cell dimension); the times), every
   value read from a file of doubles in the order written here; as ADF when asked
   (w FILE VALUES adf); the coordinates and the solutions in single precision when asked
   (w FILE VALUES hdf5 4 8: coordinates float32, solutions float64). w --link FILE OTHER
   makes FILE's first zone's coordinates a link. */
int main(int argc, char** argv) {
  int cd, pd, nz, ns, nv, loc, fn, B, Z, S, F, C;
  if (argc == 4 && !strcmp(argv[1], "--link")) {  /* FILE's first zone's coordinates: a link to the same node in OTHER */
    if (cg_open(argv[2], CG_MODE_MODIFY, &fn) || cg_goto(fn, 1, "Zone_t", 1, "end") || cg_delete_node("GridCoordinates") ||
        cg_link_write("GridCoordinates", argv[3], "/Base/zone_1/GridCoordinates"))
      return 1;
    return cg_close(fn);
  }
  if (scanf("%d %d %d %d %d %d", &cd, &pd, &nz, &ns, &nv, &loc) != 6) return 2;
  FILE* in = fopen(argv[2], "rb");
  const int csingle = argc > 4 && !strcmp(argv[4], "4"), ssingle = argc > 5 && !strcmp(argv[5], "4");
  if (argc > 3 && !strcmp(argv[3], "adf") && cg_set_file_type(CG_FILE_ADF)) return 1;
  if (!in || cg_open(argv[1], CG_MODE_WRITE, &fn) || cg_base_write(fn, "Base", cd, pd, &B)) return 1;
  const char* coord[3] = {"CoordinateX", "CoordinateY", "CoordinateZ"};
  for (int z = 0; z < nz; ++z) {
    long p[3] = {1, 1, 1};
    int rind[6] = {0, 0, 0, 0, 0, 0};
    for (int a = 0; a < cd; ++a) scanf("%ld", &p[a]);
    for (int a = 0; a < 2 * cd; ++a) scanf("%d", &rind[a]);
    cgsize_t size[9];
    for (int a = 0; a < cd; ++a) {
      size[a] = p[a];
      size[cd + a] = p[a] - 1;
      size[2 * cd + a] = 0;
    }
    char name[33];
    const char* ids = getenv("AB_ZONE_IDS");  /* zone z named <letter>_<the z-th id> */
    if (ids) {
      char* end = NULL;
      long id = 0;
      for (int k = 0; k <= z; ++k, ids = end) id = strtol(ids, &end, 10);
      snprintf(name, sizeof name, "%c_%ld", 'a' + z, id);
    } else {
      snprintf(name, sizeof name, "zone_%d", z + 1);
    }
    if (cg_zone_write(fn, B, name, size, CGNS_ENUMV(Structured), &Z)) return 1;
    long n = p[0] * p[1] * p[2];
    double* v = malloc(sizeof(double) * 4096 * 8);
    float* f4 = malloc(sizeof(float) * 4096 * 8);
    for (int c = 0; c < pd; ++c) {
      if (fread(v, sizeof(double), n, in) != (size_t)n) return 3;
      for (long i = 0; i < n; ++i) f4[i] = (float)v[i];
      if (cg_coord_write(fn, B, Z, csingle ? CGNS_ENUMV(RealSingle) : CGNS_ENUMV(RealDouble), coord[c], csingle ? (void*)f4 : (void*)v, &C))
        return 1;
    }
    long m = 1;
    for (int a = 0; a < cd; ++a) m *= (loc ? p[a] - 1 : p[a]) + rind[2 * a] + rind[2 * a + 1];
    for (int s = 0; s < ns; ++s) {
      char sname[33];
      snprintf(sname, sizeof sname, "Solution%d", s + 1);
      if (cg_sol_write(fn, B, Z, sname, loc ? CGNS_ENUMV(CellCenter) : CGNS_ENUMV(Vertex), &S)) return 1;
      if (cg_goto(fn, B, "Zone_t", Z, "FlowSolution_t", S, "end") || cg_rind_write(rind)) return 1;
      for (int f = 0; f < nv; ++f) {
        char fname[33];
        snprintf(fname, sizeof fname, "Var%d", f + 1);
        if (fread(v, sizeof(double), m, in) != (size_t)m) return 3;
        for (long i = 0; i < m; ++i) f4[i] = (float)v[i];
        if (cg_field_write(fn, B, Z, S, ssingle ? CGNS_ENUMV(RealSingle) : CGNS_ENUMV(RealDouble), fname, ssingle ? (void*)f4 : (void*)v,
                           &F))
          return 1;
      }
    }
    free(v);
    free(f4);
  }
  double t[64];
  for (int s = 0; s < ns; ++s) scanf("%lf", &t[s]);
  cgsize_t count = ns;
  if (ns && (cg_biter_write(fn, B, "TimeIterValues", ns) || cg_goto(fn, B, "BaseIterativeData_t", 1, "end") ||
             cg_array_write("TimeValues", CGNS_ENUMV(RealDouble), 1, &count, t)))
    return 1;
  return cg_close(fn);
}
"""

_program = []


def cgns_writer():
    if not _program:
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            pytest.skip("no C compiler")
        folder = pathlib.Path(tempfile.mkdtemp(prefix="ab-cgns-writer-"))
        (folder / "w.c").write_text(WRITER)
        r = subprocess.run([cc, "w.c", "-o", "w", "-lcgns"], cwd=folder, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"CGNS's library is not installed: {r.stderr[-300:]}")
        _program.append(folder / "w")
    return _program[0]


@gen.cases(20)
@given(seed=st.integers(0, 2**32 - 1), cell_dim=st.sampled_from([2, 3]), phys_dim=st.sampled_from([2, 3]), nzones=st.integers(1, 3),
       nsol=st.integers(0, 3), nvar=st.integers(1, 3), cells=st.booleans(), rind=st.booleans(),
       kind=st.sampled_from(["hdf5", "adf", "link"]), precisions=st.sampled_from(["88", "84", "48", "44"]))
@example(seed=1, cell_dim=3, phys_dim=3, nzones=2, nsol=0, nvar=1, cells=False, rind=False, kind="hdf5", precisions="88")  # a grid alone
@example(seed=2, cell_dim=3, phys_dim=3, nzones=2, nsol=2, nvar=2, cells=False, rind=False, kind="hdf5", precisions="84")  # CFD codes' files
@example(seed=2, cell_dim=3, phys_dim=3, nzones=2, nsol=1, nvar=1, cells=False, rind=False, kind="hdf5", precisions="88")  # ids 3, 0
@example(seed=3, cell_dim=3, phys_dim=3, nzones=3, nsol=1, nvar=2, cells=False, rind=False, kind="hdf5", precisions="44")  # 5, 1, 5
def test_files_the_cgns_library_writes_are_read(seed, cell_dim, phys_dim, nzones, nsol, nvar, cells, rind, kind, precisions):
    """precisions: the coordinates' and the solutions' (float64 coordinates and float32
    solutions are common in CFD codes' files): the values are the file's, whatever its
    arrays' precisions."""
    rng = np.random.default_rng(seed)
    as_written = {p: (lambda a, p=p: np.asarray(a).astype("f4").astype("f8")) if p == "4" else (lambda a: a) for p in "48"}
    coord_w, sol_w = as_written[precisions[0]], as_written[precisions[1]]
    if nsol == 0:  # a grid alone: its points are the blocks
        cells = rind = False
    phys_dim = max(phys_dim, cell_dim)
    spec = [f"{cell_dim} {phys_dim} {nzones} {nsol} {nvar} {int(cells)}"]
    doubles = []
    want_grid, want_vals, want_dims = [], [[] for _ in range(nsol)], []
    has_rind = False
    for z in range(nzones):
        p = [int(x) for x in rng.integers(2, 6, cell_dim)]
        r = [int(x) for x in rng.integers(0, 2, 2 * cell_dim)] if rind else [0] * (2 * cell_dim)
        has_rind = has_rind or any(r)
        spec.append(" ".join(map(str, p + r)))
        full = p + [1] * (3 - cell_dim)
        n = int(np.prod(full))
        xyz = [coord_w(rng.uniform(-3, 3, n)) for _ in range(phys_dim)] + [np.zeros(n)] * (3 - phys_dim)
        doubles += xyz[:phys_dim]
        shape = tuple(reversed(full))  # k, j, i
        if cells:
            d = [x - 1 if x > 1 else 1 for x in full]
            grid = []
            for c in range(3):
                a = xyz[c].reshape(shape)
                sl = [slice(0, -1) if x > 1 else slice(None) for x in reversed(full)]
                acc, k = np.zeros(tuple(reversed(d))), 0
                for dk in ((0, 1) if full[2] > 1 else (0,)):
                    for dj in ((0, 1) if full[1] > 1 else (0,)):
                        for di in ((0, 1) if full[0] > 1 else (0,)):
                            acc = acc + a[dk:dk + d[2], dj:dj + d[1], di:di + d[0]]
                            k += 1
                grid.append((acc / k).ravel())
        else:
            d = full
            grid = xyz
        want_dims.append(tuple(d))
        want_grid.append(grid)
        core = [x - 1 if cells and x > 1 else x for x in p]
        padded = [core[a] + r[2 * a] + r[2 * a + 1] for a in range(cell_dim)]
        for s in range(nsol):
            per = []
            for v in range(nvar):
                a = sol_w(rng.uniform(-1, 1, tuple(reversed(padded))) * 10.0 ** rng.integers(-2, 3))
                doubles.append(a.ravel())
                sel = tuple(slice(r[2 * ax], r[2 * ax] + core[ax]) for ax in reversed(range(cell_dim)))
                per.append(a[sel].ravel())
            want_vals[s].append(per)
    times = sorted(float(t) for t in rng.uniform(0, 10, nsol))
    spec.append(" ".join(repr(t) for t in times))
    with gen.scratch() as tmp:
        np.concatenate(doubles).astype("<f8").tofile(tmp / "values.bin")
        # the zones' names end in numbers, drawn with repeats and zeros where no link needs zone_1: the blocks' ids
        # when they are unique and above 0, else 1, 2, ... (a block reader's layout names them)
        pattern = seed % 4 if kind != "link" else 0  # 1, 2, ...; reversed; a 0 last; an id repeated apart
        ids = [[z + 1 for z in range(nzones)], [nzones - z for z in range(nzones)], [2 * z + 3 for z in range(nzones - 1)] + [0],
               [5 if z % 2 == 0 else z for z in range(nzones)]][pattern]
        want_ids = ids if min(ids) >= 1 and len(set(ids)) == nzones else list(range(1, nzones + 1))
        env = dict(os.environ, AB_ZONE_IDS=" ".join(map(str, ids))) if kind != "link" else None
        r = subprocess.run([cgns_writer(), tmp / "in.cgns", tmp / "values.bin", "adf" if kind == "adf" else "hdf5", *precisions],
                           input="\n".join(spec) + "\n", text=True, capture_output=True, timeout=60, env=env)
        assert r.returncode == 0, (r.returncode, r.stderr)
        if kind == "link":  # zone 1's coordinates in another file, linked (the same values)
            shutil.copy(tmp / "in.cgns", tmp / "other.cgns")
            r = subprocess.run([cgns_writer(), "--link", tmp / "in.cgns", "other.cgns"], capture_output=True, text=True, timeout=60, cwd=tmp)
            assert r.returncode == 0, (r.returncode, r.stderr)
        text = gen.ab("info", tmp / "in.cgns")
        conftest.assert_status(text, 0)
        if kind != "hdf5":  # CGNS's library reads these, and info says why
            assert ("not an HDF5 file (ADF)" if kind == "adf" else "zone_1/GridCoordinates is a link") in text.stdout, text.stdout
        elif not cells and not has_rind and phys_dim == 3 and precisions[0] == precisions[1]:  # in place: vertex values, no
            # rind planes, every coordinate, one precision
            assert "read by anabranch's engine" in text.stdout, text.stdout
            if nsol:  # a block reader whose layout names the blocks by their ids: the first solution's values
                anabranch = pytest.importorskip("anabranch")
                layout = anabranch.BlockLayout()
                for b in range(nzones):
                    layout.add_block(want_ids[b], *want_dims[b])
                    layout.add_piece(want_ids[b])
                with anabranch.BlockReader(None, tmp / "in.cgns", layout) as reader:
                    got = reader.read_frame(0)
                for b in range(nzones):
                    for v in range(nvar):
                        np.testing.assert_array_equal(np.asarray(got[b][v]).ravel(), want_vals[0][b][v], err_msg=f"zone {b + 1} Var{v + 1}")
        info = gen.ab("info", tmp / "in.cgns", "--json")
        conftest.assert_status(info, 0)
        j = info.json()[0]
        assert j["location"] == ("CellCenter" if cells else "Vertex")
        assert [tuple(b["dims"]) for b in j["blocks"]] == want_dims
        assert j["times"] == pytest.approx(times)
        conftest.assert_status(gen.ab("convert", tmp / "in.cgns", tmp / "out.h5"), 0)
        with h5py.File(tmp / "out.h5") as f:
            off = f["blocks/offsets"][:]
            assert [tuple(int(x) for x in d) for d in f["blocks/dims"][:]] == want_dims
            for b in range(nzones):
                for c, axis in enumerate("xyz"):
                    np.testing.assert_allclose(f[f"grid/{axis}"][off[b]:off[b + 1]], want_grid[b][c], rtol=0, atol=1e-12,
                                               err_msg=f"zone {b + 1} {axis}")
            frames = sorted(f["frames"]) if "frames" in f else []
            assert len(frames) == nsol
            for s, fr in enumerate(frames):
                assert f["frames"][fr].attrs["time"] == pytest.approx(times[s])
                for v in range(nvar):
                    for b in range(nzones):
                        np.testing.assert_array_equal(f[f"frames/{fr}/Var{v + 1}"][off[b]:off[b + 1]], want_vals[s][b][v],
                                                      err_msg=f"solution {s + 1} zone {b + 1} Var{v + 1}")


@pytest.mark.parametrize("drop, named", [("Base/zone_2/GridCoordinates", "Base/zone_2 has no GridCoordinates"),
                                         ("Base/zone_1/GridCoordinates/CoordinateY", "Base/zone_1/GridCoordinates has no CoordinateY"),
                                         ("other.cgns", "in.cgns")])
def test_a_missing_node_is_refused_in_one_line_naming_it(tmp_path, drop, named):
    """A node the file needs and lacks (or a link's file gone): info and convert exit 1 with one
    line naming it, and leave nothing under the output's name."""
    spec = "3 3 2 1 1 0\n2 2 2 0 0 0 0 0 0\n3 2 2 0 0 0 0 0 0\n0.5\n"
    np.arange(3 * 8 + 8 + 3 * 12 + 12, dtype="<f8").tofile(tmp_path / "values.bin")
    r = subprocess.run([cgns_writer(), tmp_path / "in.cgns", tmp_path / "values.bin"], input=spec, text=True, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    if drop == "other.cgns":
        shutil.copy(tmp_path / "in.cgns", tmp_path / "other.cgns")
        r = subprocess.run([cgns_writer(), "--link", tmp_path / "in.cgns", "other.cgns"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        (tmp_path / "other.cgns").unlink()
    else:
        with h5py.File(tmp_path / "in.cgns", "r+") as f:
            del f[drop]
    for args in (["info", tmp_path / "in.cgns"], ["convert", tmp_path / "in.cgns", tmp_path / "out.h5"]):
        r = gen.ab(*args)
        conftest.assert_status(r, 1, named)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out.h5").exists()


MESH_READER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <cgnslib.h>
/* What CGNS's library reads in a file's first zone, as text: the zone, its first section's
   elements, its coordinates, its solutions' fields in their order, and the base's times. */
int main(int argc, char** argv) {
  int fn, cd, pd, ns, nsol, nf, nc;
  char name[33], bname[33];
  cgsize_t size[3];
  if (cg_open(argv[1], CG_MODE_READ, &fn) || cg_base_read(fn, 1, bname, &cd, &pd) || cg_zone_read(fn, 1, 1, name, size)) return 1;
  CGNS_ENUMT(ZoneType_t) zt;
  if (cg_zone_type(fn, 1, 1, &zt)) return 1;
  CGNS_ENUMT(SimulationType_t) st = CGNS_ENUMV(SimulationTypeNull);
  cg_simulation_type_read(fn, 1, &st);
  printf("zone %d %ld %ld %d %d\n", (int)zt, (long)size[0], (long)size[1], pd, (int)st);
  if (cg_nsections(fn, 1, 1, &ns) || ns < 1) return 1;
  CGNS_ENUMT(ElementType_t) et;
  cgsize_t s0, s1;
  int nb, pf;
  if (cg_section_read(fn, 1, 1, 1, name, &et, &s0, &s1, &nb, &pf)) return 1;
  cgsize_t n;
  if (cg_ElementDataSize(fn, 1, 1, 1, &n)) return 1;
  cgsize_t* conn = malloc(sizeof(cgsize_t) * (n + 1));
  if (cg_elements_read(fn, 1, 1, 1, conn, NULL)) return 1;
  printf("section %d %ld %ld\nconn", (int)et, (long)s0, (long)s1);
  for (cgsize_t i = 0; i < n; ++i) printf(" %ld", (long)conn[i]);
  printf("\n");
  double* v = malloc(sizeof(double) * (size[0] + 1));
  cgsize_t one = 1, np = size[0];
  if (cg_ncoords(fn, 1, 1, &nc)) return 1;
  for (int c = 1; c <= nc; ++c) {
    CGNS_ENUMT(DataType_t) t;
    if (cg_coord_info(fn, 1, 1, c, &t, name) || cg_coord_read(fn, 1, 1, name, CGNS_ENUMV(RealDouble), &one, &np, v)) return 1;
    printf("coord %s", name);
    for (cgsize_t i = 0; i < np; ++i) printf(" %.17g", v[i]);
    printf("\n");
  }
  if (cg_nsols(fn, 1, 1, &nsol)) return 1;
  for (int S = 1; S <= nsol; ++S) {
    CGNS_ENUMT(GridLocation_t) loc;
    if (cg_sol_info(fn, 1, 1, S, name, &loc) || cg_nfields(fn, 1, 1, S, &nf)) return 1;
    printf("sol %s %d\n", name, (int)loc);
    for (int F = 1; F <= nf; ++F) {
      CGNS_ENUMT(DataType_t) t;
      if (cg_field_info(fn, 1, 1, S, F, &t, name) || cg_field_read(fn, 1, 1, S, name, CGNS_ENUMV(RealDouble), &one, &np, v)) return 1;
      printf("field");
      for (cgsize_t i = 0; i < np; ++i) printf(" %.17g", v[i]);
      printf("\n");
    }
  }
  int steps = 0;
  if (nsol && cg_biter_read(fn, 1, name, &steps) == CG_OK && steps > 0) {
    double* t = malloc(sizeof(double) * steps);
    if (cg_goto(fn, 1, "BaseIterativeData_t", 1, "end") || cg_array_read_as(1, CGNS_ENUMV(RealDouble), t)) return 1;
    printf("times");
    for (int i = 0; i < steps; ++i) printf(" %.17g", t[i]);
    printf("\n");
  }
  return cg_close(fn);
}
"""

_mesh_reader = []


def mesh_reader():
    if not _mesh_reader:
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            pytest.skip("no C compiler")
        folder = pathlib.Path(tempfile.mkdtemp(prefix="ab-cgns-mesh-reader-"))
        (folder / "r.c").write_text(MESH_READER)
        r = subprocess.run([cc, "r.c", "-o", "r", "-lcgns"], cwd=folder, capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"CGNS's library is not installed: {r.stderr[-300:]}")
        _mesh_reader.append(folder / "r")
    return _mesh_reader[0]


@gen.cases(6)
@given(seed=st.integers(1, 1000), elements=st.integers(20, 400), planes=st.sampled_from([1, 1, 3]), frames=st.integers(0, 3),
       precision=st.sampled_from(["single", "double"]))
@example(seed=5, elements=60, planes=3, frames=2, precision="double")  # prisms, their z from the first frame
def test_mesh_results_as_cgns_are_what_cgns_library_reads(seed, elements, planes, frames, precision):
    """A SERAFIN result converted to CGNS, read by CGNS's own library (a C program) against the
    SERAFIN file read by numpy: one unstructured zone of TRI_3 or PENTA_6 elements with the
    mesh's connectivity, its coordinates, a vertex solution per frame holding every variable,
    the times; cgnscheck finds no error and warns of solver-named variables only."""
    with gen.scratch() as tmp:
        conftest.assert_status(gen.ab("generate", "-o", tmp / "in.slf", "-n", elements, "--planes", planes, "--frames", frames,
                                      "--seed", seed, "--precision", precision), 0)
        conftest.assert_status(gen.ab("convert", tmp / "in.slf", tmp / "out.cgns"), 0)
        want = slf.read(tmp / "in.slf")
        r = subprocess.run([mesh_reader(), tmp / "out.cgns"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        lines = [line.split() for line in r.stdout.splitlines()]
        zone = lines[0]
        assert zone[0] == "zone" and int(zone[1]) == 3 and int(zone[2]) == want.npoin and int(zone[3]) == want.nelem  # Unstructured
        assert int(zone[5]) == (2 if frames else 0), zone  # the base's SimulationType: TimeAccurate where it has frames
        section = lines[1]
        assert int(section[1]) == (5 if want.ndp == 3 else 14) and int(section[2]) == 1 and int(section[3]) == want.nelem  # TRI_3, PENTA_6
        np.testing.assert_array_equal(np.array(lines[2][1:], dtype=np.int64), want.ikle.astype(np.int64).ravel())
        coords = {line[1]: np.array(line[2:], dtype=float) for line in lines if line[0] == "coord"}
        np.testing.assert_array_equal(coords["CoordinateX"], want.x.astype(float))
        np.testing.assert_array_equal(coords["CoordinateY"], want.y.astype(float))
        sols = [i for i, line in enumerate(lines) if line[0] == "sol"]
        assert len(sols) == frames
        for f, at in enumerate(sols):
            assert int(lines[at][2]) == 2  # Vertex
            fields = [np.array(line[1:], dtype=float) for line in lines[at + 1:at + 1 + len(want.vars)]]
            assert all(line[0] == "field" for line in lines[at + 1:at + 1 + len(want.vars)])
            for v in range(len(want.vars)):
                np.testing.assert_array_equal(fields[v], want.frames[f][1][v].astype(float), err_msg=f"frame {f} variable {v}")
        if want.nplan > 1 and frames:  # a 3D mesh's z: the first variable of the first frame (TELEMAC's elevation)
            np.testing.assert_array_equal(coords["CoordinateZ"], want.frames[0][1][0].astype(float))
        info = gen.ab("info", tmp / "out.cgns", "--json")  # read back as the result file it is
        conftest.assert_status(info, 0)
        j = info.json()[0]
        assert (j["format"], j["npoin"], j["nelem"], j["ndp"], j["frames"]) == ("cgns", want.npoin, want.nelem, want.ndp, frames), j
        assert j["times"] == pytest.approx([float(t) for t, _ in want.frames])
        if frames:
            times = [line for line in lines if line[0] == "times"]
            np.testing.assert_array_equal(np.array(times[0][1:], dtype=float), [float(t) for t, _ in want.frames])
        check = shutil.which("cgnscheck")
        if check:
            out = subprocess.run([check, tmp / "out.cgns"], capture_output=True, text=True, timeout=120).stdout
            assert not [line for line in out.splitlines() if line.startswith("ERROR")], out[-2000:]
            assert {line for line in out.splitlines() if line.startswith("WARNING")} <= {"WARNING:not a CGNS data-name identifier"}, out[-2000:]


PARAVIEW = r"""
import json, sys
from paraview import simple, servermanager as sm
r = simple.CGNSSeriesReader(FileNames=[sys.argv[1]])
r.UpdatePipelineInformation()
r.Bases = list(r.GetProperty("BaseInfo")[::2])
r.PointArrayStatus = list(r.GetProperty("PointArrayInfo")[::2])
times = list(r.TimestepValues)
r.UpdatePipeline(times[-1])
d = sm.Fetch(r)
zones = []
it = d.NewIterator()
it.InitTraversal()
while not it.IsDoneWithTraversal():
    b = it.GetCurrentDataObject()
    pd = b.GetPointData()
    zones.append({"type": b.GetClassName(), "points": b.GetNumberOfPoints(), "cells": b.GetNumberOfCells(),
                  "arrays": sorted(pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays())),
                  "first": [pd.GetArray(i).GetTuple(0)[0] for i in range(pd.GetNumberOfArrays())]})
    it.GoToNextItem()
print(json.dumps({"times": times, "zones": zones}))
"""


def test_paraview_opens_every_zone_and_time_step(tmp_path):
    """ParaView's own CGNS reader, on a multi-block file the ranks wrote (2D and 3D zones) and
    on a TELEMAC result: every zone, every point and cell, the solution arrays, the times."""
    from test_hdf5 import paraview_python
    py = paraview_python()
    if not py:
        pytest.skip("ParaView's Python module is not installed (Debian: python3-paraview)")
    dims = [(5, 4, 3), (3, 6, 1), (4, 4, 2)]
    layout = anabranch.BlockLayout()
    for b, d in enumerate(dims):
        layout.add_block(b + 1, *d)
        layout.add_piece(b + 1)
    with anabranch.BlockWriter(None, tmp_path / "b.cgns", layout, ["rho", "p"]) as w:
        w.write_grid([[np.arange(float(np.prod(d))) * (c + 1) for c in range(3)] for d in dims])
        for t in (0.5, 1.5):
            w.write_frame(t, [[np.full(int(np.prod(d)), 10.0 * b + t + v) for v in range(2)] for b, d in enumerate(dims)])
    (tmp_path / "pv.py").write_text(PARAVIEW)
    r = subprocess.run([py, tmp_path / "pv.py", tmp_path / "b.cgns"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    j = json.loads(r.stdout.strip().splitlines()[-1])
    assert j["times"] == [0.5, 1.5]
    got = sorted((z["points"], z["cells"], tuple(z["arrays"]), tuple(z["first"])) for z in j["zones"])
    want = sorted((int(np.prod(d)), int(np.prod([x - 1 for x in d if x > 1])), ("Density", "Pressure"), (10.0 * b + 1.5, 10.0 * b + 2.5))
                  for b, d in enumerate(dims))
    assert got == want, j["zones"]
    data = conftest.DATA / "r2d_gouttedo.slf"
    if not data.exists():
        pytest.skip(f"TELEMAC fixtures absent: {conftest.DATA}")
    conftest.assert_status(gen.ab("convert", data, tmp_path / "g.cgns"), 0)
    r = subprocess.run([py, tmp_path / "pv.py", tmp_path / "g.cgns"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    j = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(j["times"]) == 21 and len(j["zones"]) == 1
    z = j["zones"][0]
    assert (z["type"], z["points"], z["cells"]) == ("vtkUnstructuredGrid", 4624, 8978)
    assert set(z["arrays"]) == {"Velocity", "WATER DEPTH"}


def test_a_frame_past_the_file_size_limit_is_refused_before_it_is_written(tmp_path):
    """A block file of 3 variables and 2 frames converted to CGNS under a file-size limit one
    byte short of the last frame's end: refused before that frame is written, naming it and
    the limit; nothing left under the final name."""
    h5py = pytest.importorskip("h5py")
    anabranch = pytest.importorskip("anabranch")
    layout = anabranch.BlockLayout()
    layout.add_block(1, 5, 4, 3)
    layout.add_piece(1)
    src, whole = tmp_path / "in.h5", tmp_path / "whole.cgns"
    with anabranch.BlockWriter(None, src, layout, ["a", "b", "c"], "precision=8") as w:
        for f in range(2):
            w.write_frame(float(f), [[np.arange(60.0) + 100 * f + 10 * v for v in range(3)]])
    conftest.assert_status(gen.ab("convert", src, whole), 0)
    offsets = []
    with h5py.File(whole) as h:
        h.visititems(lambda name, obj: offsets.append(obj.id.get_offset()) if name.endswith(" data") and obj.size == 60 else None)
    limit = max(offsets) + 60 * 8 - 1  # the second frame's last array one byte short
    out = tmp_path / "out.cgns"
    r = subprocess.run(["prlimit", f"--fsize={limit}", conftest.EXE, "convert", src, out], capture_output=True, text=True,
                       env=conftest.MPI_ENV, timeout=120)
    conftest.assert_status(r, 1, f"frame 1 would take it past the file-size limit (ulimit -f, {limit} bytes)")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.h5", "in.h5.xmf", "whole.cgns"]
