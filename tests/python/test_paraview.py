"""Every XDMF sidecar anabranch writes, opened with each of ParaView's three XDMF readers
(Xdmf3ReaderS, ParaView's default for .xmf, Xdmf3ReaderT and the legacy XDMFReader) at every
time step: every variable of every frame (and of every block) must be there with the
values h5py and the SERAFIN reader of the tests (slf.py) give. The sidecars: a TELEMAC-2D and
a TELEMAC-3D result converted from SERAFIN, a double-precision one, two compressed ones
(deflate, which ParaView's HDF5 decodes; zstd, through hdf5plugin's filter on
HDF5_PLUGIN_PATH, as `info` and `convert` tell), a solver's result from 3 ranks, one file per
step, and multi-block files with and without a grid. ParaView runs once (its start is seconds), every
case and reader in one process; its arrays come back in an .npz file."""
import json
import os
import subprocess

import numpy as np
import pytest

import conftest
import gen
from slf import read
from test_hdf5 import paraview_python

h5py = pytest.importorskip("h5py")
SOLVER = os.environ.get("AB_MINI_SOLVER")
BLOCKS = os.environ.get("AB_BLOCKS_SOLVER")
READERS = ("Xdmf3ReaderS", "Xdmf3ReaderT", "XDMFReader")

# Runs under ParaView's Python: argv[1] a JSON list of sidecars, argv[2] the .npz to write.
# For each sidecar, reader and time step: each leaf's points and every point array, keyed
# "case|reader|step|leaf|name" (name "points" for the coordinates); the times under
# "case|reader|times".
OPEN_ALL = r"""
import json, sys
import numpy as np
from paraview import simple, servermanager as sm
from paraview.vtk.util.numpy_support import vtk_to_numpy
cases, out = json.loads(open(sys.argv[1]).read()), {}
for case in cases:
    for reader in ("Xdmf3ReaderS", "Xdmf3ReaderT", "XDMFReader"):
        if reader == "XDMFReader":
            r = simple.XDMFReader(FileNames=[case])
            r.UpdatePipelineInformation()
            r.PointArrayStatus = r.GetProperty("PointArrayInfo")[::2]
        else:
            r = getattr(simple, reader)(FileName=[case])
        r.UpdatePipelineInformation()
        times = list(r.TimestepValues) if r.TimestepValues else [0.0]
        out[f"{case}|{reader}|times"] = np.array(times)
        for step, t in enumerate(times):
            r.UpdatePipeline(t)
            d = sm.Fetch(r)
            leaves = []
            if d.IsA("vtkCompositeDataSet"):
                it = d.NewIterator()
                it.InitTraversal()
                while not it.IsDoneWithTraversal():
                    leaves.append(it.GetCurrentDataObject())
                    it.GoToNextItem()
            else:
                leaves.append(d)
            for n, leaf in enumerate(leaves):
                key = f"{case}|{reader}|{step}|{n}|"
                out[key + "points"] = np.array([leaf.GetPoint(p) for p in range(leaf.GetNumberOfPoints())]).reshape(-1, 3)
                pd = leaf.GetPointData()
                for a in range(pd.GetNumberOfArrays()):
                    out[key + pd.GetArrayName(a)] = vtk_to_numpy(pd.GetArray(a)).copy()
        simple.Delete(r)
np.savez(sys.argv[2], **out)
"""


def ab(*args):
    return gen.ab(*args)


def ab_ok(*args):
    r = ab(*args)
    conftest.assert_status(r, 0)
    return r


def mesh_expectation(h5, xmf_steps=None):
    """{var: [frame values]}, times, points of a VTKHDF result read with h5py; xmf_steps: a
    one-file-per-step run's step files, in order."""
    files = xmf_steps or [h5]
    frames, times = {}, []
    for path in files:
        with h5py.File(path, "r") as f:
            n = int(f["VTKHDF/NumberOfPoints"][0])
            pts = f["VTKHDF/Points"][:]
            nsteps = int(f["VTKHDF/Steps"].attrs["NSteps"])
            times += list(f["VTKHDF/Steps/Values"][:nsteps])
            for name, ds in f["VTKHDF/PointData"].items():
                frames.setdefault(name, []).extend(ds[k * n:(k + 1) * n] for k in range(nsteps))
    return frames, np.array(times), pts


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    py = paraview_python()
    if not py:
        pytest.skip("ParaView's Python module is not installed (Debian: python3-paraview)")
    data = conftest.DATA
    if not (data / "r3d_gouttedo.slf").exists():
        pytest.skip(f"TELEMAC fixtures absent: {data}")
    work = tmp_path_factory.mktemp("paraview")
    cases = {}
    # Results converted from TELEMAC's own files: 2D (5 variables), 3D prisms, double precision.
    for name, src in (("r2d", "r2d_gouttedo.slf"), ("mal", "f2d_malpasset-small.slf"), ("r3d", "r3d_gouttedo.slf"),
                      ("dbl", "r2d_bowl_vf_gb_DoublePrecision_LittleEndian.slf")):
        ab_ok("convert", data / src, work / f"{name}.hdf")
        cases[name] = ("mesh", work / f"{name}.hdf.xmf", [work / f"{name}.hdf"], data / src)
    ab_ok("convert", data / "r2d_gouttedo.slf", work / "defl.hdf", "--compress", "rel=1e-4")
    cases["defl"] = ("mesh", work / "defl.hdf.xmf", [work / "defl.hdf"], None)
    # zstd: ParaView reads it with hdf5plugin's filters on HDF5_PLUGIN_PATH, as info says.
    said = ab_ok("convert", data / "r2d_gouttedo.slf", work / "zstd.hdf", "--compress", "rel=1e-4:zstd").stdout
    assert "HDF5_PLUGIN_PATH" in said and "HDF5_PLUGIN_PATH" in ab_ok("info", work / "zstd.hdf").stdout
    cases["zstd"] = ("mesh", work / "zstd.hdf.xmf", [work / "zstd.hdf"], None)
    if SOLVER:
        ab_ok("generate", "-n", "3000", "-o", work / "mesh.slf")
        ab_ok("partition", work / "mesh.slf", "--cli", work / "mesh.cli", "-n", "3", "-o", work / "p3")
        conftest.assert_status(conftest.mpirun(3, SOLVER, work / "p3/mesh.slf", work / "mesh.slf", work / "run.h5", "hdf5", 3), 0)
        cases["solver"] = ("mesh", work / "run.h5.xmf", [work / "run.h5"], None)
        conftest.assert_status(conftest.mpirun(3, SOLVER, work / "p3/mesh.slf", work / "mesh.slf", work / "st.h5",
                                               "hdf5 file_per_step=1", 3), 0)
        cases["steps"] = ("mesh", work / "st.h5.xmf", [work / f"st_{k:06d}.h5" for k in range(3)], None)
    if BLOCKS:
        (work / "blocks.txt").write_text("# id ni nj nk\n1 9 5 4\n2 3 7 2\n3 6 6 1\n4 5 4 3\n")
        ab_ok("balance", work / "blocks.txt", "-n", "2", "--json")
        (work / "a2.json").write_text(ab("balance", work / "blocks.txt", "-n", "2", "--json").stdout)
        conftest.assert_status(conftest.mpirun(2, BLOCKS, work / "a2.json", work / "b.h5", 3), 0)
        cases["blocks"] = ("blocks", work / "b.h5.xmf", [work / "b.h5"], None)
        conftest.assert_status(conftest.mpirun(2, BLOCKS, work / "a2.json", work / "b.dat", 2), 0)
        ab_ok("convert", work / "b.dat", work / "nogrid.h5")  # a raw file has no grid
        cases["nogrid"] = ("blocks", work / "nogrid.h5.xmf", [work / "nogrid.h5"], None)
        # one block (split between the ranks): its slices are whole datasets, reshaped
        (work / "one.txt").write_text("# id ni nj nk\n1 6 5 4\n")
        (work / "o2.json").write_text(ab("balance", work / "one.txt", "-n", "2", "--json").stdout)
        conftest.assert_status(conftest.mpirun(2, BLOCKS, work / "o2.json", work / "one.h5", 2), 0)
        cases["one"] = ("blocks", work / "one.h5.xmf", [work / "one.h5"], None)
    # times that need every digit (1/3, 10/3: the sidecar writes 17 significant digits)
    anabranch = pytest.importorskip("anabranch")
    lay = anabranch.BlockLayout()
    for b, d in enumerate([(4, 3, 2), (2, 5, 3)]):
        lay.add_block(b + 1, *d)
        lay.add_piece(b + 1)
    rng = np.random.default_rng(7)
    with anabranch.BlockWriter(None, work / "py.h5", lay, ["rho", "myvar"]) as w:
        w.write_grid([[rng.uniform(-1, 1, int(np.prod(d))) for _ in range(3)] for d in [(4, 3, 2), (2, 5, 3)]])
        for t in (1 / 3, 10 / 3):
            w.write_frame(t, [[rng.uniform(-1, 1, int(np.prod(d))) for _ in range(2)] for d in [(4, 3, 2), (2, 5, 3)]])
    cases["py"] = ("blocks", work / "py.h5.xmf", [work / "py.h5"], None)
    (work / "cases.json").write_text(json.dumps([str(c[1]) for c in cases.values()]))
    import hdf5plugin
    env = dict(os.environ, HDF5_PLUGIN_PATH=hdf5plugin.PLUGIN_PATH)
    proc = subprocess.run([py, "-c", OPEN_ALL, work / "cases.json", work / "got.npz"], capture_output=True, text=True, timeout=600,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Skipping unrecognized array type" not in proc.stdout + proc.stderr
    got = dict(np.load(work / "got.npz"))
    return cases, got


def leaf_arrays(got, xmf, reader, step, leaf):
    prefix = f"{xmf}|{reader}|{step}|{leaf}|"
    return {k[len(prefix):]: v for k, v in got.items() if k.startswith(prefix)}


MESH_CASES = ["r2d", "mal", "r3d", "dbl", "defl", "zstd", "solver", "steps"]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", MESH_CASES)
def test_every_variable_of_every_frame_of_a_mesh_result(opened, case, reader):
    cases, got = opened
    if case not in cases:
        pytest.skip("the example solver is not built")
    _, xmf, files, serafin = cases[case]
    if case == "zstd":
        import hdf5plugin  # noqa: F401  (h5py reads zstd with it)
    frames, times, pts = mesh_expectation(files[0], files if case == "steps" else None)
    np.testing.assert_array_equal(got[f"{xmf}|{reader}|times"], times)
    src = read(serafin) if serafin else None
    for step in range(len(times)):
        arrays = leaf_arrays(got, xmf, reader, step, 0)
        assert sorted(k for k in arrays if k != "points") == sorted(frames), (case, reader, step)
        np.testing.assert_array_equal(arrays["points"], pts)
        for v, (name, values) in enumerate(frames.items()):
            np.testing.assert_array_equal(arrays[name], values[step], err_msg=f"{case} {reader} step {step} {name}")
        if src is not None:  # and what TELEMAC wrote, read without anabranch
            assert times[step] == pytest.approx(float(src.frames[step][0]))
            for v, var in enumerate(src.vars):
                name = var[:16].strip().replace("/", "_")
                np.testing.assert_array_equal(arrays[name], src.frames[step][1][v].astype(arrays[name].dtype))


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", ["blocks", "nogrid", "one", "py"])
def test_every_block_of_every_frame(opened, case, reader):
    """Each block a curvilinear grid (its points from the grid), or without a grid a
    rectilinear one of unit spacing, the blocks one after another."""
    cases, got = opened
    if case not in cases:
        pytest.skip("blocks_solver is not built")
    _, xmf, (h5,), _ = cases[case]
    with h5py.File(h5, "r") as f:
        off, dims = f["blocks/offsets"][:], f["blocks/dims"][:]
        names = f.attrs["variables"]
        names = (names.decode() if isinstance(names, bytes) else names).split("\n")
        names = [n for n in names if n]
        frames = sorted(f["frames"])
        np.testing.assert_array_equal(got[f"{xmf}|{reader}|times"], [float(np.ravel(f["frames"][fr].attrs["time"])[0]) for fr in frames])
        for step, fr in enumerate(frames):
            for b in range(len(dims)):
                arrays = leaf_arrays(got, xmf, reader, step, b)
                assert sorted(k for k in arrays if k != "points") == sorted(names), (reader, step, b)
                if case != "nogrid":
                    xyz = np.stack([f[f"grid/{c}"][off[b]:off[b + 1]] for c in "xyz"], axis=1)
                    np.testing.assert_array_equal(arrays["points"], xyz.astype(arrays["points"].dtype))
                else:
                    ni, nj, nk = dims[b]
                    k, j, i = np.meshgrid(np.arange(nk), np.arange(nj), np.arange(ni), indexing="ij")
                    xyz = np.stack([i.ravel() + off[b], j.ravel(), k.ravel()], axis=1)
                    np.testing.assert_array_equal(arrays["points"], xyz, err_msg=f"{reader} {b}")
                for name in names:
                    np.testing.assert_array_equal(arrays[name], f[f"frames/{fr}/{name}"][off[b]:off[b + 1]], err_msg=f"{reader} {step} {b}")
