"""The parallel writer and reader on cases drawn at random, against files numpy builds and
reads itself (tests/python/gen.py, slf.py): a mesh of any size (odd sizes: shares and
buffers cut values anywhere), 1 to 5 ranks over 1 to 3 emulated nodes, each rank a random
set of nodes in a random order (interface nodes held by several ranks, a rank holding
none), every strategy, small buffers and writers per node drawn too, the result's precision
and byte order independent of its geometry's (the header's mesh converted as it is copied in
shares). The result must be numpy's file byte for byte (SERAFIN) or hold numpy's values
(HDF5); read back on another rank count, any nodes (repeats too), it gives numpy's reading."""
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import example, given, strategies as st

import conftest
import gen
import slf

pytestmark = [pytest.mark.mpi, pytest.mark.generated]
h5py = pytest.importorskip("h5py")

TESTS = pathlib.Path(__file__).parent

SCRIPT = """
import sys, numpy as np, anabranch
from mpi4py import MPI
sys.path.insert(0, sys.argv[3])
import slf
comm = MPI.COMM_WORLD
spec = eval(open(sys.argv[1]).read())
out = sys.argv[2]

def value(g, v, f, rank):
    base = ((g * 7919 + v * 104729 + f * 1299709) % 1000003) * 1e-3 - 500.0 + (g % 7) * 1e-7
    return base + (rank * 0.25 if spec["rank_values"] else 0.0)

try:
    if spec["mode"] == "write":
        ids = np.array(spec["ids"][comm.rank], dtype=np.int32)
        for k, (precision, big_endian) in enumerate(spec["forms"]):  # one file per form of the result
            header = dict(spec["header"], precision=precision, big_endian=big_endian)
            dtype = np.float32 if precision == "single" else np.float64
            with anabranch.Writer(comm, f"{out}.{k}", header, ids, strategy=spec["strategy"], options=spec["options"]) as w:
                for f, t in enumerate(spec["times"]):
                    vals = [np.array([value(g - 1, v, f, comm.rank) for g in ids], dtype=np.float64).astype(dtype)
                            for v in range(len(header["variables"]))]
                    if spec["strategy"] == "aggregated-async":
                        w.begin_frame(t, vals)
                        w.end_frame()
                    else:
                        w.write_frame(t, vals)
    else:
        ids = np.array(spec["ids"][comm.rank], dtype=np.int32)
        with anabranch.Reader(comm, out, ids, strategy=spec["strategy"], options=spec["options"]) as r:
            want = spec["want"]
            assert r.frames == len(want["times"]), (r.frames, len(want["times"]))
            data = np.load(want["values"])
            for f in spec["frames"]:
                if spec["whole"]:
                    t, got = r.read_frame(f)
                    assert t == want["times"][f]
                    got = [got[n] for n in r.variables]
                else:
                    got = {v: r.read_variable(f, v) for v in spec["variables"]}
                    got = [got.get(v) for v in range(len(r.variables))]
                for v, g in enumerate(got):
                    if g is None:
                        continue
                    exp = data[f, v, ids - 1]
                    if not np.array_equal(g, exp.astype(np.float64)):
                        bad = int(np.flatnonzero(g != exp)[0])
                        raise AssertionError(f"rank {comm.rank}: frame {f} variable {v}: node {ids[bad]} read {g[bad]!r}, "
                                             f"the file holds {exp[bad]!r}")
except anabranch.Error as e:
    print(f"rank {comm.rank}: {e}", file=sys.stderr)
    sys.exit(1)
"""


def value(g, v, f, rank, rank_values):
    base = ((g * 7919 + v * 104729 + f * 1299709) % 1000003) * 1e-3 - 500.0 + (g % 7) * 1e-7
    return base + (rank * 0.25 if rank_values else 0.0)


def ownership(rng, npoin, ranks):
    """Each rank's nodes (1-based, in a random order): every node held by one rank or more,
    some ranks possibly none; returns (ids per rank, the ranks holding each node)."""
    kind = rng.integers(0, 3)
    if kind == 0:  # contiguous slices (a partitioner's parts), with shared borders
        cuts = np.sort(rng.integers(0, npoin + 1, ranks - 1))
        owner = np.searchsorted(cuts, np.arange(npoin), side="right")
    elif kind == 1:  # scattered
        owner = rng.integers(0, ranks, npoin)
    else:  # one or two ranks hold everything
        owner = rng.integers(0, min(2, ranks), npoin)
    holders = [{int(o)} for o in owner]
    extra = np.flatnonzero(rng.random(npoin) < rng.choice([0.0, 0.05, 0.3]))
    for g in extra:
        holders[g].add(int(rng.integers(0, ranks)))
    ids = [[g + 1 for g in range(npoin) if r in holders[g]] for r in range(ranks)]
    for i in ids:
        rng.shuffle(i)
    return ids, holders


@gen.cases(30)
@given(seed=st.integers(0, 2**32 - 1), nx=st.integers(2, 40), ny=st.integers(2, 30), ranks=st.integers(1, 5),
       nodes=st.integers(1, 3), strategy=st.sampled_from(["aggregated", "aggregated-async", "collective", "independent", "hdf5", "cgns"]),
       geo_real=st.sampled_from(["f4", "f8"]), geo_order=st.sampled_from("<>"), nvar=st.integers(1, 3), frames=st.integers(1, 3),
       from_geometry=st.booleans(), owner=st.sampled_from(["", "lowest", "highest"]), reread=st.integers(1, 5))
@example(seed=7, nx=9, ny=5, ranks=3, nodes=1, strategy="cgns", geo_real="f4", geo_order=">", nvar=2, frames=2, from_geometry=False,
         owner="", reread=2)  # the mesh given by rank 0, written by rank 0 alone
@example(seed=8, nx=9, ny=5, ranks=3, nodes=2, strategy="hdf5", geo_real="f8", geo_order="<", nvar=2, frames=2, from_geometry=False,
         owner="", reread=2)
def test_writer_and_reader_on_random_cases(seed, nx, ny, ranks, nodes, strategy, geo_real, geo_order, nvar, frames, from_geometry,
                                           owner, reread):
    """A case: a mesh, the ranks' nodes, a strategy; a result written in every form (both
    precisions, both byte orders: HDF5's and CGNS's are native), each against numpy; one of
    them read back on another rank count (HDF5 and CGNS in place, as SERAFIN is)."""
    rng = np.random.default_rng(seed)
    nodes = min(nodes, ranks)
    ikle, x, y, ipobo = gen.triangles(nx, ny, rng)
    x = x * 10.0 ** rng.integers(-2, 4) + rng.uniform(-1e3, 1e3)
    y = y * 10.0 ** rng.integers(-2, 4)
    npoin = len(x)
    iparam = [1, 0, int(rng.integers(0, 1000)), int(rng.integers(0, 1000)), 0, 0, 0, int((ipobo > 0).sum()), 0, 0]
    geo_bytes = gen.serafin("geometry", [("BOTTOM", "M")], ikle, ipobo, x, y, [], order=geo_order, real=geo_real, iparam=iparam)
    geo = slf.Slf(geo_bytes)  # the coordinates as the geometry holds them
    names = [(f"VAR {v}", "M/S") for v in range(nvar)]
    date = [int(d) for d in rng.integers(1, 28, 6)]
    header = {"title": f"case {seed % 1000}", "variables": names, "date": date}
    forms = [("single", False), ("double", True)] if strategy in ("hdf5", "cgns") else \
        [(p, b) for p in ("single", "double") for b in (False, True)]
    ids, holders = ownership(rng, npoin, ranks)
    options = []
    if strategy != "hdf5" and rng.random() < 0.5:
        options.append(f"buffer_bytes={int(rng.choice([1024, 1500, 4096, 10000]))}")
    if strategy.startswith("aggregated") and rng.random() < 0.5:
        options.append(f"writers_per_node={int(rng.integers(1, 4))}")
    if owner:
        options.append(f"owner={owner}")
    rank_values = bool(owner)
    times = sorted(float(t) for t in rng.uniform(0, 100, frames))
    # numpy's frames: each node's value from the rank the owner rule picks
    pick = [(max if owner == "highest" else min)(h) for h in holders]
    exact = np.array([[[value(g, v, f, pick[g], rank_values) for g in range(npoin)] for v in range(nvar)] for f in range(frames)])
    with gen.scratch() as tmp:
        geo_path = tmp / "geo.slf"
        geo_path.write_bytes(geo_bytes)
        if from_geometry:
            header["geometry"] = str(geo_path)
        else:
            header["mesh"] = {"ikle": ikle, "x": geo.x.astype(float), "y": geo.y.astype(float), "ipobo": ipobo}
            iparam = None
        out = tmp / {"hdf5": "out.h5", "cgns": "out.cgns"}.get(strategy, "out.slf")
        spec = dict(mode="write", ids=[[int(g) for g in i] for i in ids], header=header, strategy=strategy,
                    options=" ".join(options), times=times, rank_values=rank_values, forms=forms)
        (tmp / "spec.py").write_text(repr({k: (v if k != "header" else {**v, "mesh": {a: b.tolist() for a, b in v["mesh"].items()}}
                                               if "mesh" in v else v) for k, v in spec.items()}))
        (tmp / "run.py").write_text(SCRIPT)
        env = gen.nodes(nodes)
        proc = conftest.mpirun(ranks, sys.executable, tmp / "run.py", tmp / "spec.py", out, TESTS, env=env)
        conftest.assert_status(proc, 0)
        for k, (precision, big_endian) in enumerate(forms):
            real, order = ("f4" if precision == "single" else "f8"), (">" if big_endian else "<")
            data = exact.astype(real)
            path = pathlib.Path(f"{out}.{k}")
            if strategy == "hdf5":
                with h5py.File(path) as f:
                    v = f["VTKHDF"]
                    np.testing.assert_array_equal(v["Points"][:, 0], geo.x.astype(real))
                    np.testing.assert_array_equal(v["Points"][:, 1], geo.y.astype(real))
                    np.testing.assert_array_equal(v["Connectivity"][:], (ikle - 1).ravel())
                    assert list(v["Steps/Values"][:]) == times  # the times as given (float64), whatever the values' precision
                    for j in range(nvar):
                        got = v[f"PointData/VAR {j}"][:].reshape(frames, npoin)
                        np.testing.assert_array_equal(got, data[:, j, :], err_msg=f"{precision}: variable {j}")
                continue
            if strategy == "cgns":  # CGNS's tree, read with h5py: one unstructured zone
                with h5py.File(path) as f:
                    z = f["Base/mesh"]
                    assert list(z[" data"][()].ravel()) == [npoin, len(ikle), 0]
                    np.testing.assert_array_equal(z["GridCoordinates/CoordinateX/ data"][()], geo.x.astype(real))
                    np.testing.assert_array_equal(z["GridCoordinates/CoordinateY/ data"][()], geo.y.astype(real))
                    np.testing.assert_array_equal(z["Elements/ElementConnectivity/ data"][()], ikle.ravel())
                    assert list(f["Base/BaseIterativeData/TimeValues/ data"][()]) == times
                    for fr in range(frames):
                        for j in range(nvar):
                            np.testing.assert_array_equal(z[f"FlowSolution{fr:06d}/VAR {j}/ data"][()], data[fr, j, :],
                                                          err_msg=f"{precision}: frame {fr} variable {j}")
                continue
            want = gen.serafin(f"case {seed % 1000}".ljust(72) + ("SERAFIND" if precision == "double" else "SERAFIN "), names, ikle,
                               ipobo, geo.x, geo.y, [(t, list(data[f])) for f, t in enumerate(times)], order=order, real=real,
                               date=date, iparam=iparam)
            got = path.read_bytes()
            if got != want:
                a, b = slf.Slf(got, "anabranch"), slf.Slf(want, "numpy")
                assert a.title == b.title and a.iparam == b.iparam and a.date == b.date, (precision, big_endian)
                np.testing.assert_array_equal(a.x, b.x, err_msg=f"{precision} {order}: X")
                np.testing.assert_array_equal(a.y, b.y, err_msg=f"{precision} {order}: Y")
                for f in range(frames):
                    for j in range(nvar):
                        np.testing.assert_array_equal(a.frames[f][1][j], b.frames[f][1][j], err_msg=f"frame {f} variable {j}")
                assert got == want, (precision, big_endian)
        # one of them read back
        k = int(rng.integers(0, len(forms)))
        precision = forms[k][0]
        real = "f4" if precision == "single" else "f8"
        data = exact.astype(real)
        out = pathlib.Path(f"{out}.{k}")
        # read back: another rank count, any nodes (repeats too), whole frames or some variables
        np.save(tmp / "values.npy", data)
        rids = [[int(g) for g in rng.integers(1, npoin + 1, int(rng.integers(0, npoin + 1)))] for _ in range(reread)]
        if rng.random() < 0.5:  # a partition of the nodes, each rank's sorted (a partitioner's KNOLG)
            cut = np.sort(rng.integers(0, npoin + 1, reread - 1))
            rids = [list(range(a + 1, b + 1)) for a, b in zip(np.r_[0, cut], np.r_[cut, npoin])]
        rstrategy = str(rng.choice(["hdf5", "aggregated", "independent"] if strategy == "hdf5" else ["aggregated", "independent"]
                                   if strategy == "cgns" else ["aggregated", "independent", "collective"]))
        ropts = []
        if rng.random() < 0.5:
            ropts.append(f"buffer_bytes={int(rng.choice([1024, 1030, 4096, 9999]))}")
        if rstrategy == "aggregated" and rng.random() < 0.5:
            ropts.append(f"shared_memory={int(rng.integers(0, 2))}")
        if rstrategy == "aggregated" and rng.random() < 0.5:
            ropts.append(f"readers_per_node={int(rng.integers(1, 4))}")
        spec = dict(mode="read", ids=rids, strategy=rstrategy, options=" ".join(ropts),
                    frames=sorted({int(f) for f in rng.integers(0, frames, 2)}), whole=bool(rng.integers(0, 2)),
                    variables=sorted({int(k) for k in rng.integers(0, nvar, 2)}),
                    want={"times": times if strategy in ("hdf5", "cgns") else [float(np.array(t, real)) for t in times],
                          "values": str(tmp / "values.npy")}, rank_values=False)
        (tmp / "spec.py").write_text(repr(spec))
        env = dict(gen.nodes(min(reread, int(rng.integers(1, 4)))),  # and collective_reads_safe's two answers:
                   OMPI_MCA_fbtl_posix_read_datasieving=str(int(rng.integers(0, 2))))
        proc = conftest.mpirun(reread, sys.executable, tmp / "run.py", tmp / "spec.py", out, TESTS, env=env)
        conftest.assert_status(proc, 0)
