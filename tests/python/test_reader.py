"""The parallel reader (anabranch.Reader over ab_reader_*) under mpiexec at 1, 2 and 3 ranks:
every strategy gives each rank exactly its nodes' values, for any decomposition (nodes
repeated across ranks and within one), SERAFIN single and double precision in either byte
order and HDF5, in many rounds or one; bad calls and damaged files are errors on every
rank, never a hang."""
import sys

import numpy as np
import pytest

from conftest import mpirun, said

pytestmark = pytest.mark.mpi  # launched by mpiexec: also run on MPICH and on emulated nodes

pytest.importorskip("mpi4py")
anabranch = pytest.importorskip("anabranch", reason="the Python package is not built (PYTHONPATH=<build>/python)")

CHECK = """
import sys, numpy as np, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
path, strategy, options = sys.argv[1], sys.argv[2], sys.argv[3]
full = anabranch.read(path)
n = full.npoin
rng = np.random.default_rng(17 + comm.rank)
# Any decomposition: a random share with repeats, plus the first and last nodes, in any
# order ("dense": a part's nodes, placed through a bitmap of their span), increasing with
# repeats as some KNOLG come ("sorted": one pass), a few nodes spread over the whole
# numbering ("sparse": sorted by radix), increasing without repeats as a part's KNOLG
# ("part": values decoded straight into the caller's arrays), the same shuffled
# ("shuffled": as many distinct nodes as local ones, placed after), or nothing at all.
kind = {1: ["dense"], 2: ["part", "sparse"], 3: ["sorted", "shuffled", "empty"]}[comm.size][comm.rank]
ids = np.concatenate([rng.integers(1, n + 1, size=n // comm.size + 5), [1, n, n]]).astype(np.int32)
if kind == "part":
    ids = np.unique(ids).astype(np.int32)
elif kind == "shuffled":
    ids = rng.permutation(np.unique(ids)).astype(np.int32)
elif kind == "sorted":
    ids = np.sort(ids)
elif kind == "sparse":
    ids = np.concatenate([rng.integers(1, n + 1, size=8), [n, 1, n]]).astype(np.int32)
elif kind == "empty":
    ids = np.zeros(0, dtype=np.int32)
else:  # dense: runs of consecutive numbers too, as most of a part's nodes come, one with a repeat inside
    start = int(rng.integers(1, n - 60))
    ids = np.concatenate([ids, np.arange(start, start + 40), [start + 3], np.arange(start + 20, start + 50)]).astype(np.int32)
# A wrong value on one rank ends the job at once (the others would wait in the next read).
sys.excepthook = lambda *e: (sys.__excepthook__(*e), sys.stderr.flush(), comm.Abort(1))
with anabranch.Reader(comm, path, ids, strategy=strategy, options=options) as r:
    assert (r.npoin, r.nelem, r.frames, r.variables) == (n, full.nelem, len(full.frames), full.names), r.variables
    assert r.times == [f.time for f in full.frames]
    for k in range(r.frames):
        t, values = r.read_frame(k)
        assert t == full.frames[k].time
        for name in r.variables:
            assert np.array_equal(values[name], full.frames[k][name][ids - 1]), (name, k)
    last = r.variables[-1]
    assert np.array_equal(r.read_variable(-1, last), full.frames[-1][last][ids - 1])
print("checked", comm.rank)
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("reader")
    mesh = {"ikle": np.array([[1, 2, 3], [2, 4, 3], [3, 4, 5]] * 400, dtype=np.int32), "x": np.arange(1500.0),
            "y": np.arange(1500.0) ** 0.5}
    mesh["ikle"][3:, :] = (np.arange(3, 1200)[:, None] + np.array([0, 1, 2])) % 1500 + 1
    rng = np.random.default_rng(3)
    frames = [(0.5 * k, {"U": rng.normal(size=1500), "V": rng.normal(size=1500), "H": rng.random(1500)}) for k in range(4)]
    out = {}
    for name, kw in {"single.slf": {}, "double-little.slf": {"precision": "double", "big_endian": False},
                     "single.h5": {}, "double.h5": {"precision": "double"}}.items():
        anabranch.write(d / name, mesh, ["U", "V", "H"], frames, title="reader test", **kw)
        out[name] = d / name
    return out


@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("name,strategy,options", [
    ("single.slf", "aggregated", ""),
    ("single.slf", "aggregated", "buffer_bytes=1024"),  # many rounds
    ("single.slf", "aggregated", "readers_per_node=2"),
    ("single.slf", "aggregated", "readers_per_node=1 buffer_bytes=2048"),  # one reader serving every rank
    ("single.slf", "aggregated", "shared_memory=0"),  # every value by MPI, as from readers on other nodes
    ("double-little.slf", "aggregated", "shared_memory=0 buffer_bytes=4096"),
    ("double-little.slf", "aggregated", "buffer_bytes=4096"),
    ("single.slf", "independent", ""),
    ("double-little.slf", "independent", ""),
    ("single.slf", "collective", ""),
    ("double-little.slf", "collective", "buffer_bytes=1024"),  # many rounds
    ("single.h5", "aggregated", "buffer_bytes=2048"),
    ("single.h5", "hdf5", ""),
    ("double.h5", "hdf5", ""),
    ("double.h5", "independent", ""),
])
def test_every_rank_reads_its_own_values(files, tmp_path, ranks, name, strategy, options):
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    proc = mpirun(ranks, sys.executable, script, files[name], strategy, options)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("checked") == ranks


ERRORS = """
import sys, numpy as np, anabranch
from mpi4py import MPI

comm = MPI.COMM_WORLD
path, case, out = sys.argv[1], sys.argv[2], sys.argv[3]
ids = np.arange(1, 11, dtype=np.int32)
try:
    if case == "outside":
        ids[3] = 1501 if comm.rank == comm.size - 1 else 4
        anabranch.Reader(comm, path, ids)
    elif case == "strategy":
        anabranch.Reader(comm, path, ids, strategy="bogus")
    elif case == "hdf5-on-serafin":
        anabranch.Reader(comm, path, ids, strategy="hdf5")
    elif case == "collective-on-hdf5":
        anabranch.Reader(comm, path.replace(".slf", ".h5"), ids, strategy="collective")
    elif case == "option":
        anabranch.Reader(comm, path, ids, options="buffer_bytes=12")
    elif case == "frame":
        with anabranch.Reader(comm, path, ids) as r:
            r._r.read_frame(7)
    elif case == "missing":
        anabranch.Reader(comm, path + ".nothing", ids)
    elif case.startswith("damaged"):  # damaged or damaged-STRATEGY
        strategy = case.partition("-")[2] or "aggregated"
        with anabranch.Reader(comm, path, ids, strategy=strategy, options="buffer_bytes=1024") as r:
            for k in range(r.frames):
                r.read_frame(k)
    said = f"no error {comm.rank}"
except anabranch.Error as e:
    said = f"error {comm.rank} {type(e).__name__} {e}"
with open(f"{out}.{comm.rank}", "w") as f:
    f.write(said)
"""


@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("case,kind,words", [
    ("outside", "UsageError", "global number 1501, outside"),
    ("strategy", "UsageError", "unknown read strategy 'bogus'"),
    ("hdf5-on-serafin", "UsageError", "the hdf5 read strategy reads HDF5 files"),
    ("collective-on-hdf5", "UsageError", "the collective read strategy reads SERAFIN files"),
    ("option", "UsageError", "buffer_bytes=12: at least 1024"),
    ("frame", "UsageError", "frame 8 of"),
    ("missing", "IoError", "single.slf.nothing"),
])
def test_mistakes_are_errors_on_every_rank(files, tmp_path, ranks, case, kind, words):
    script = tmp_path / "errors.py"
    script.write_text(ERRORS)
    proc = mpirun(ranks, sys.executable, script, files["single.slf"], case, tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    lines = said(tmp_path, ranks)
    assert all(l.startswith(f"error {r} {kind}") and words in l for r, l in enumerate(lines)), lines


@pytest.mark.parametrize("ranks,strategy", [(1, "aggregated"), (2, "aggregated"), (3, "aggregated"), (2, "independent"),
                                            (3, "collective")])
def test_a_damaged_frame_is_an_error_naming_the_file_and_byte(files, tmp_path, ranks, strategy):
    """A length marker overwritten in the last frame: every rank stops with the reader's
    error (file, record, byte) instead of handing out wrong values."""
    from slf import read
    damaged = tmp_path / "damaged.slf"
    raw = bytearray(files["single.slf"].read_bytes())
    s = read(files["single.slf"])
    at = len(raw) - (4 + s.npoin * 4 + 4)  # the last variable's opening marker
    raw[at:at + 4] = b"\\x00\\x00\\x00\\x07"
    damaged.write_bytes(bytes(raw))
    script = tmp_path / "errors.py"
    script.write_text(ERRORS)
    proc = mpirun(ranks, sys.executable, script, damaged, "damaged-" + strategy, tmp_path / "said")
    assert proc.returncode == 0, proc.stderr
    lines = said(tmp_path, ranks)
    assert all(" FormatError " in l and "damaged.slf" in l and str(at) in l for l in lines), lines


FPP = """
import sys, numpy as np, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
full = anabranch.read(sys.argv[1])
parts = sys.argv[2]
knolg = anabranch.read_part(parts, comm).knolg
rng = np.random.default_rng(5 + comm.rank)
ids = rng.permutation(np.concatenate([knolg, knolg[:3]])).astype(np.int32)  # the part's nodes shuffled, some twice
sys.excepthook = lambda *e: (sys.__excepthook__(*e), sys.stderr.flush(), comm.Abort(1))
with anabranch.Reader(comm, parts, ids, strategy="file-per-process") as r:
    for k in range(r.frames):
        t, values = r.read_frame(k)
        for name in r.variables:
            assert np.array_equal(values[name], full.frames[k][name][ids - 1]), (name, k)
print("checked", comm.rank)
"""


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_file_per_process_gives_the_nodes_asked_in_their_order(ab, tmp_path, ranks):
    """The file-per-process reader (each rank its own part file) returns the values of the
    nodes asked, in the order asked, not the part file's own order."""
    assert ab("generate", "-n", 3000, "--frames", 3, "-o", tmp_path / "m.slf").returncode == 0
    assert ab("partition", tmp_path / "m.slf", "-n", ranks, "--method", "sfc", "-o", tmp_path / "parts").returncode == 0
    script = tmp_path / "fpp.py"
    script.write_text(FPP)
    proc = mpirun(ranks, sys.executable, script, tmp_path / "m.slf", tmp_path / "parts" / "m.slf")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("checked") == ranks
