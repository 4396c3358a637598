"""anabranch: scalable I/O for parallel mesh-based simulations (SERAFIN/TELEMAC, MPI-IO, HDF5).

    import anabranch
    ds = anabranch.read("result.slf")            # or "result.h5": header, mesh, lazy frames
    ds.frames[-1]["VELOCITY U"]                   # numpy array, read on access
    anabranch.info("result.slf")                  # the same dict as `anabranch info --json`
    anabranch.partition("geo.slf", 16, cli="geo.cli", output="run")   # partel; the CLI's report
    anabranch.merge("run/T2DRES", "geo.slf", output="result.slf")     # gretel; the CLI's report
    anabranch.write("out.h5", mesh, ["DEPTH"], [(0.0, {"DEPTH": h})])

    from mpi4py import MPI                        # the parallel writer: one file from all ranks
    with anabranch.Writer(MPI.COMM_WORLD, "out.slf", header, knolg) as w:
        w.write_frame(t, {"DEPTH": h_local})

Errors raise subclasses of anabranch.Error (anabranch.errors).
"""
import atexit
import json
import os
import re

import numpy as np

from . import _core
from .errors import Error, FormatError, InternalError, IoError, MemoryError, MpiError, UsageError  # noqa: F401

__version__ = _core.version()
__all__ = ["Error", "UsageError", "FormatError", "IoError", "MpiError", "MemoryError", "InternalError",
           "info", "diff", "read", "write", "partition", "merge", "split", "convert", "generate", "bench",
           "Dataset", "Mesh", "Frame", "Writer", "Reader", "Part", "read_part", "read_part_global",
           "BlockLayout", "BlockWriter", "BlockReader", "Records", "write_records", "read_records", "h5_extents"]

atexit.register(_core.mpi_finalize_if_ours)

_HDF5_EXT = (".h5", ".hdf", ".hdf5", ".vtkhdf")


def _comm(comm):
    """The Fortran handle of a communicator: mpi4py's, an integer handle, or None (world)."""
    _core.mpi_ensure()
    if comm is None:
        return _core.comm_world()
    if isinstance(comm, int):
        return comm
    if hasattr(comm, "py2f"):
        return comm.py2f()
    raise UsageError(f"not a communicator: {comm!r} (an mpi4py communicator, a Fortran handle or None)")


def _with_strategy(strategy, options):
    """A writer's options: the strategy when given (None: by the file's name), then the rest."""
    return f"strategy={strategy} {options}" if strategy else options


def _agreed(comm, check):
    """Runs check() (a collective call's argument checks, made here before the call) on every
    rank of comm: a refusal on any rank is raised on every rank, the lowest rank's, so that no
    rank is left waiting inside the collective call the others never enter."""
    try:
        check()
        mine = ""
    except (UsageError, IndexError, KeyError) as e:
        mine = f"{type(e).__name__}\n{e.args[0] if e.args else e}"
    agreed = _core.agree(comm, mine)
    if agreed:
        kind, _, message = agreed.partition("\n")
        raise {"UsageError": UsageError, "IndexError": IndexError, "KeyError": KeyError}[kind](message)


def _command(*args, names=None):
    """Runs a command as the command line does; returns its report. names: the command
    line's options as this function's caller calls them ({"-n": "parts"}), so that a refused
    value is named as the caller wrote it."""
    try:
        report = _core.command([str(a) for a in args])
    except UsageError as e:
        message = str(e)
        for option, argument in (names or {}).items():
            message = re.sub(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", f"the argument '{argument}'", message)
        if message == str(e):
            raise
        raise UsageError(message) from None
    return json.loads(report) if report else None


# --------------------------------------------------------------------------------------
# The commands: the same code and the same reports as the command line.

def info(path, check=False, stats=False):
    """Header, sizes, variables, frames, integrity (and provenance for HDF5) of a result file:
    the dict `anabranch info --json` prints. check: read every record; stats: min/mean/max."""
    args = ["info", os.fspath(path)] + (["--check"] if check else []) + (["--stats"] if stats else [])
    report = _command(*args)[0]
    if "error" in report:
        raise FormatError(report["error"])
    return report


def partition(mesh, parts, cli=None, method=None, layout="telemac", output=".", also=(), names=None, weights=None,
              threads=None):
    """Splits a mesh into `parts` parts in TELEMAC's layout (`anabranch partition`); returns
    the partition report (imbalance, edge cut, files, time and memory per phase)."""
    args = ["partition", os.fspath(mesh), "-n", parts, "--layout", layout, "-o", os.fspath(output)]
    if cli is not None:
        args += ["--cli", os.fspath(cli)]
    if method:
        args += ["--method", method]
    for f in also:
        args += ["--also", os.fspath(f)]
    if names:
        args += ["--names", names]
    if weights is not None:
        args += ["--weights", os.fspath(weights)]
    if threads:
        args += ["--threads", threads]
    return _command(*args, names={"-n": "parts", "--parts": "parts", "--cli": "cli", "--method": "method", "--layout": "layout",
                                  "-o": "output", "--also": "also", "--names": "names", "--weights": "weights",
                                  "--threads": "threads"})


def merge(parts, geometry, output=None, nparts=None, allow_partial=False, strategy=None):
    """Merges per-rank result files (parts: their base name, RES for RES00003-00000...) or a
    RES-CONCAT container into one global file (`anabranch merge`). Under mpiexec, every rank
    calls it and the ranks share the parts; the report comes back on rank 0 (None elsewhere)."""
    _core.mpi_ensure()
    args = ["merge", os.fspath(parts), "--geo", os.fspath(geometry)]
    if output is not None:
        args += ["-o", os.fspath(output)]
    if nparts:
        args += ["-n", nparts]
    if allow_partial:
        args += ["--allow-partial"]
    if strategy:
        args += ["--strategy", strategy]
    return _command(*args, names={"--geo": "geometry", "-o": "output", "-n": "nparts", "--strategy": "strategy"})


def split(path, plan, output=".", name=None, layout="telemac"):
    """Splits a global file (SERAFIN or HDF5) along the parts of an existing partition
    (`anabranch split`): restart on another number of processes."""
    args = ["split", os.fspath(path), "--plan", os.fspath(plan), "-o", os.fspath(output), "--layout", layout]
    if name:
        args += ["--name", name]
    return _command(*args, names={"--plan": "plan", "-o": "output", "--layout": "layout", "--name": "name"})


def convert(source, target, to=None, frame=None):
    """SERAFIN <-> HDF5 (VTKHDF + XDMF) -> VTU (`anabranch convert`); collective under mpiexec."""
    _core.mpi_ensure()
    args = ["convert", os.fspath(source), os.fspath(target)]
    if to:
        args += ["--to", to]
    if frame is not None:
        args += ["--frame", frame]
    return _command(*args, names={"--to": "to", "--frame": "frame"})


def diff(a, b, atol=None, rtol=None, frames=None, values_only=False):
    """Compares two results (`anabranch diff`): files (SERAFIN, HDF5) or per-rank sets (base
    names). atol, rtol: a number for every variable, or {name: number}; a value differs when
    |a - b| > atol + rtol * max(|a|, |b|). frames: "0,2:5,-1" (0-based, ranges inclusive).
    Returns the JSON report: per variable the largest differences, where, values beyond
    tolerance, per frame; header differences; "equal", "identical", "status" (0 or 1)."""
    args = ["diff", a, b]
    for option, tol in (("--atol", atol), ("--rtol", rtol)):
        if isinstance(tol, dict):
            args += [x for name, value in tol.items() for x in (option, f"{name}={value!r}")]
        elif tol is not None:
            args += [option, repr(float(tol))]
    if frames is not None:
        args.append(f"--frames={frames}")
    if values_only:
        args.append("--values-only")
    return _command(*args, names={"--atol": "atol", "--rtol": "rtol", "--frames": "frames"})


def bench(generate=200000, mesh=None, plan=None, vars=4, frames=5, repeat=3, strategies="all", writers="auto",
          read=False, dir="."):
    """Collective over MPI_COMM_WORLD: the write strategies (and with read, the read
    strategies) measured on one decomposition, every file verified (`anabranch bench`).
    Returns the JSON report as a dict on rank 0, None on the other ranks. strategies: "all"
    or a list of names."""
    args = ["bench", "--vars", vars, "--frames", frames, "--repeat", repeat, "--writers", writers, "--dir", os.fspath(dir),
            "--strategies", strategies if isinstance(strategies, str) else ",".join(strategies)]
    args += ["--mesh", os.fspath(mesh)] if mesh is not None else ["--generate", generate]
    args += ["--plan", os.fspath(plan)] if plan is not None else []
    args += ["--read"] if read else []
    return _command(*args, names={"--generate": "generate", "--vars": "vars", "--frames": "frames", "--repeat": "repeat",
                                  "--writers": "writers", "--mesh": "mesh", "--plan": "plan", "--strategies": "strategies"})


def generate(output, elements=20000, frames=0, variables=None, planes=None):
    """A synthetic channel mesh and its .cli file (`anabranch generate`)."""
    args = ["generate", "-n", elements, "-o", os.fspath(output)]
    if frames:
        args += ["--frames", frames]
    if variables:
        args += ["--vars", variables]
    if planes:
        args += ["--planes", planes]
    return _command(*args, names={"-n": "elements", "--elements": "elements", "-o": "output", "--frames": "frames", "--vars": "variables",
                                  "--planes": "planes"})


# --------------------------------------------------------------------------------------
# Reading.

class Mesh:
    """Mesh arrays: ikle (nelem, ndp) int32 with 1-based node numbers, ipobo (npoin,), x, y."""

    def __init__(self, ikle, ipobo, x, y, nplan=1):
        self.ikle, self.ipobo, self.x, self.y, self.nplan = ikle, ipobo, x, y, nplan

    @property
    def nelem(self):
        return self.ikle.shape[0]

    @property
    def npoin(self):
        return self.x.shape[0]

    @property
    def ndp(self):
        return self.ikle.shape[1]


class Frame:
    """One frame: .time, and the variables by name (numpy arrays, read on first access)."""

    def __init__(self, dataset, index, time):
        self._ds, self.index, self.time, self._cache = dataset, index, time, {}

    def keys(self):
        return list(self._ds.names)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._ds.names)

    def __getitem__(self, name):
        if name not in self._cache:
            if name not in self._ds.names:
                raise KeyError(f"{name!r}: no such variable (the file has {', '.join(self._ds.names) or 'none'})")
            self._cache[name] = self._ds.values(self.index, self._ds.names.index(name))
        return self._cache[name]

    def items(self):
        return [(n, self[n]) for n in self.keys()]

    def __repr__(self):
        return f"<Frame {self.index} t={self.time}: {', '.join(self.keys())}>"


class _Frames:
    def __init__(self, dataset):
        self._ds = dataset

    def __len__(self):
        return len(self._ds.times)

    def __getitem__(self, k):
        n = len(self)
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(n))]
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise IndexError(f"frame {k} out of range: the file has {n} frames")
        return Frame(self._ds, i, float(self._ds.times[i]))

    def __iter__(self):
        return (self[k] for k in range(len(self)))


class Dataset:
    """A result file, SERAFIN or anabranch's HDF5, opened for reading (anabranch.read).

    Attributes: path; format ("serafin" or "hdf5"); title; header (the dict `info`
    returns); variables ([(name, unit), ...]) and names; nelem, npoin, ndp, nplan;
    precision ("single" or "double") and dtype; times (one per frame); frames (a sequence:
    frames[k] is a Frame, read on access, frames[-1] the last); mesh (a Mesh, read on first
    access)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._file = _core.File(self.path)
        self.header = info(self.path)
        nelem, npoin, ndp, nplan, nvar, frames, rs = self._file.sizes()
        self.format = self.header["format"]
        self.title = self.header["title"]
        self.variables = [(v["name"], v["unit"]) for v in self.header["variables"]]
        self.names = [v[0] for v in self.variables]
        self.nelem, self.npoin, self.ndp, self.nplan = nelem, npoin, ndp, nplan
        self.precision = "double" if rs == 8 else "single"
        self.dtype = np.dtype(np.float64 if rs == 8 else np.float32)
        self.times = self._file.times()
        self.frames = _Frames(self)
        self._mesh = None

    @property
    def mesh(self):
        """The mesh (ikle, ipobo, x, y), read on first access."""
        if self._mesh is None:
            ikle, ipobo, x, y = self._open().mesh()
            self._mesh = Mesh(ikle.reshape(self.nelem, self.ndp), ipobo, x, y, self.nplan)
        return self._mesh

    def _open(self):
        if self._file is None:
            raise UsageError(f"{self.path}: the dataset is closed")
        return self._file

    def values(self, frame, var, first=0, count=None):
        """Values of variable var (index or name) in frame, nodes [first, first + count)."""
        f = self._open()
        if isinstance(var, str):
            if var not in self.names:
                raise KeyError(f"{var!r}: no such variable (the file has {', '.join(self.names) or 'none'})")
            var = self.names.index(var)
        if frame < 0:
            frame += len(self.times)
        count = self.npoin - first if count is None else count
        read = f.read_double if self.dtype == np.float64 else f.read_float
        return read(frame, var, first, count)

    def close(self):
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<anabranch.Dataset {self.path}: {self.format}, {self.nelem} elements, {self.npoin} nodes, "
                f"{len(self.names)} variables, {len(self.times)} frames>")


def read(path):
    """Opens a SERAFIN or anabranch HDF5 result file: header, mesh and frames read lazily."""
    return Dataset(path)


class Part:
    """This rank's part of a partitioned mesh: local ikle (nelem, ndp, local 1-based),
    knolg (global 1-based node numbers), x, y."""

    def __init__(self, ikle, knolg, x, y, ndp, nplan):
        self.ikle = ikle.reshape(-1, ndp) if ndp else ikle
        self.knolg, self.x, self.y, self.ndp, self.nplan = knolg, x, y, ndp, nplan


def read_part(base, comm=None):
    """Collective: each rank's part of a mesh partitioned by `anabranch partition` (per-rank
    files base00003-00001... or base-CONCAT); the number of parts must be the rank count."""
    return Part(*_core.read_part(_comm(comm), os.fspath(base)))


def read_part_global(geometry, partition, comm=None):
    """Collective: each rank's part straight from the global geometry and an element -> part
    file (`anabranch partition --layout partition-file` writes <mesh>.epart.<P>), with no
    per-rank files; rank r takes part r."""
    return Part(*_core.read_part_global(_comm(comm), os.fspath(geometry), os.fspath(partition)))


# --------------------------------------------------------------------------------------
# Writing.

def _header(spec):
    """An _core.Header from a dict: title, variables [(name, unit)] or [name], precision
    ('single'/'double'), big_endian, date (6 ints), iparam (10 ints), and geometry (a
    SERAFIN file) or mesh (a Mesh or a dict: ikle (nelem, ndp) 1-based, x, y, ipobo, nplan)."""
    h = _core.Header()
    h.set_title(spec.get("title", ""))
    for v in spec.get("variables", []):
        name, unit = (v, "") if isinstance(v, str) else v
        h.add_variable(name, unit)
    prec = spec.get("precision", "single")
    h.set_precision(8 if prec in ("double", 8) else 4)
    h.set_big_endian(bool(spec.get("big_endian", True)))
    if spec.get("date") is not None:
        h.set_date([int(d) for d in spec["date"]])
    if spec.get("geometry"):
        h.set_geometry(os.fspath(spec["geometry"]))
    mesh = spec.get("mesh")
    if mesh is not None:
        get = (lambda k, d=None: getattr(mesh, k, d)) if isinstance(mesh, Mesh) else mesh.get
        ikle = np.ascontiguousarray(get("ikle"), dtype=np.int32)
        x = np.ascontiguousarray(get("x"), dtype=np.float64)
        y = np.ascontiguousarray(get("y"), dtype=np.float64)
        ipobo = get("ipobo")
        nplan = int(get("nplan", 1) or 1)
        h.set_sizes(ikle.shape[0], x.shape[0], ikle.shape[1], nplan)
        h.set_mesh(ikle.reshape(-1), None if ipobo is None else np.ascontiguousarray(ipobo, dtype=np.int32), x, y)
    if spec.get("iparam") is not None:
        h.set_iparam([int(i) for i in spec["iparam"]])
    return h


class Writer:
    """The parallel writer: every rank of comm gives the values of the nodes it holds
    (global_ids: 1-based, KNOLG; interface nodes may be held by several ranks); one file
    receives each global frame. Collective: construction, write_frame, close.

        with anabranch.Writer(comm, "out.slf", {"geometry": "geo.slf", "variables": [("DEPTH", "M")]},
                              knolg, strategy="aggregated") as w:
            w.write_frame(time, {"DEPTH": depth})

    strategy: aggregated, aggregated-async, collective, independent, file-per-process (needs
    local_mesh=(ikle_local (nelem, ndp), x, y)), hdf5 (VTKHDF), cgns (one unstructured zone);
    None (the default): by the file's name (.h5: hdf5, .cgns: cgns), else aggregated.
    options: more "key=value" writer options and MPI-IO hints ("file_per_step=1 cb_nodes=4").
    """

    def __init__(self, comm, path, header, global_ids, strategy=None, options="", local_mesh=None):
        self._h = _header(header)
        if local_mesh is not None:
            ikle, x, y = local_mesh
            ikle = np.ascontiguousarray(ikle, dtype=np.int32)
            self._h.set_local_mesh(ikle.reshape(-1), ikle.shape[0] if ikle.ndim == 2 else 0,
                                   np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64))
        self.names = [v if isinstance(v, str) else v[0] for v in header.get("variables", [])]
        self.single = header.get("precision", "single") in ("single", 4)
        ids = np.ascontiguousarray(global_ids, dtype=np.int32)
        self.nlocal = ids.shape[0]
        self._c = _comm(comm)
        self._w = _core.Writer(self._c, os.fspath(path), self._h, ids, len(self.names), _with_strategy(strategy, options))
        self.path = os.fspath(path)

    @classmethod
    def merged(cls, comm, part, geometry, path, boundary="", strategy=None, options=""):
        """The file `anabranch merge` (gretel) would make of the ranks' part files, written as
        they run: each rank names its own part (a SERAFIN file whose header and mesh a solver
        such as TELEMAC wrote: IPOBO holds its KNOLG; its frames are not read); the global
        header comes from rank 0's part, `geometry` and `boundary` (its .cli, for IPARAM(8)).
        write_frame then takes the values in the part's node order; a node held by several
        ranks takes the highest rank's value, as the last part wins in a merge. Collective."""
        with Dataset(part) as d:
            names, single = d.names, d.precision == "single"
        self = cls.__new__(cls)
        self._h = None
        self.names, self.single = names, single
        self._c = _comm(comm)
        self._w = _core.Writer.open_merged(self._c, os.fspath(part), os.fspath(geometry), os.fspath(boundary or ""),
                                           os.fspath(path), len(names), _with_strategy(strategy, options))
        self.nlocal = self._w.nlocal()
        self.path = os.fspath(path)
        return self

    def _stack(self, values, dtype):
        out = []
        _agreed(self._c, lambda: out.append(self._stack_here(values, dtype)))
        return out[0]

    def _stack_here(self, values, dtype):
        if isinstance(values, dict):
            missing = [n for n in self.names if n not in values]
            if missing:
                raise UsageError(f"write_frame: no values for {', '.join(missing)}")
            values = [values[n] for n in self.names]
        a = np.asarray(values, dtype=dtype)
        if a.ndim == 1 and len(self.names) == 1:
            a = a.reshape(1, -1)
        if a.shape != (len(self.names), self.nlocal):
            raise UsageError(f"write_frame: values of shape {a.shape}, expected ({len(self.names)}, {self.nlocal})")
        return np.ascontiguousarray(a)

    def write_frame(self, time, values):
        """Collective: one frame; values: {name: array}, a list of arrays in variable order,
        or an (nvar, nlocal) array. float32 arrays for a single-precision file are written
        as they are; anything else goes through float64."""
        if self.single and all(getattr(v, "dtype", None) == np.float32 for v in
                               (values.values() if isinstance(values, dict) else [values])):
            self._w.write_frame_float(float(time), self._stack(values, np.float32))
        else:
            self._w.write_frame_double(float(time), self._stack(values, np.float64), False)

    def begin_frame(self, time, values):
        """Collective: starts a frame and returns once the values are copied (with
        aggregated-async the bytes go to disk while the caller computes); end_frame() completes."""
        self._w.write_frame_double(float(time), self._stack(values, np.float64), True)

    def end_frame(self):
        self._w.end_frame()

    def close(self):
        """Collective: completes and closes the file."""
        self._w.close()

    def abandon(self):
        """Not collective: drops the writer without completing the file (an atomic
        writer's temporary file is removed)."""
        self._w.abandon()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # On an exception the writer is abandoned, not closed: closing is collective, and
        # the other ranks may not be at the same point.
        if exc_type is None:
            self.close()
        else:
            self.abandon()


class Reader:
    """The parallel reader, the writer's mirror: every rank of comm names the nodes it holds
    (global_ids: 1-based, KNOLG, any decomposition on any number of ranks; nodes may repeat)
    and reads their values from one SERAFIN or HDF5 file. Collective: construction,
    read_frame, read_variable, close.

        with anabranch.Reader(comm, "run.slf", knolg) as r:
            time, values = r.read_frame(r.frames - 1)      # {name: array of len(knolg)}

    strategy: aggregated (default: a few readers per node read large blocks once and send
    each rank its values), independent, collective (SERAFIN: one MPI-IO view and read_all
    per round), hdf5, file-per-process (path: the base name of TELEMAC's per-rank files). options: more "key=value" reader options and MPI-IO hints.
    """

    def __init__(self, comm, path, global_ids, strategy="aggregated", options=""):
        ids = np.ascontiguousarray(global_ids, dtype=np.int32)
        self.nlocal = ids.shape[0]
        self.path = os.fspath(path)
        self._c = _comm(comm)
        self._r = _core.Reader(self._c, self.path, ids, f"strategy={strategy} {options}")
        self.nelem, self.npoin, self.ndp, self.nplan, nvar, self.frames = self._r.sizes()
        self.variables = [self._r.variable(v)[0] for v in range(nvar)]
        self.units = [self._r.variable(v)[1] for v in range(nvar)]
        self.times = [self._r.time(k) for k in range(self.frames)]

    def _frame(self, k):
        out = []
        _agreed(self._c, lambda: out.append(self._frame_here(k)))
        return out[0]

    def _frame_here(self, k):
        if not isinstance(k, (int, np.integer)):
            raise UsageError(f"frame {k!r}: an integer")
        if k < 0:
            k += self.frames
        if not 0 <= k < self.frames:
            raise IndexError(f"frame {k} of {self.path}, which has {self.frames}")
        return int(k)

    def read_frame(self, k):
        """Collective: frame k (negative counts from the end) -> (time, {name: float64 array
        of nlocal values, in the order of global_ids})."""
        k = self._frame(k)
        a = self._r.read_frame(k).reshape(len(self.variables), self.nlocal)
        return self.times[k], {n: a[i] for i, n in enumerate(self.variables)}

    def read_variable(self, k, name):
        """Collective: one variable (by name or 0-based index) of frame k."""
        k = self._frame(k)

        def index():
            if isinstance(name, str) and name not in self.variables:
                raise KeyError(f"{name!r} is not a variable of {self.path} (it has {', '.join(self.variables)})")
        _agreed(self._c, index)
        return self._r.read_variable(k, self.variables.index(name) if isinstance(name, str) else int(name))

    def close(self):
        """Collective."""
        self._r.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()


class BlockLayout:
    """A multi-block grid and the pieces this rank holds (whole blocks or index ranges of
    split blocks), each held as arrays of shape (nk + 2*hk, nj + 2*hj, ni + 2*hi): numpy's
    C order over (k, j, i) is the solver's Fortran order over (i, j, k), halos around.

        layout = anabranch.BlockLayout("four.json", rank, halo=(2, 2, 1))   # balance --json
        q = layout.arrays(5)          # [piece][variable] -> zeros, halos included
    """

    def __init__(self, assignment=None, rank=0, halo=(0, 0, 0)):
        self._b = _core.Blocks()
        self._dims = {}
        self._b.set_halo(*halo)
        if assignment is not None:
            self._b.load(os.fspath(assignment), int(rank))

    def add_block(self, id, ni, nj, nk=1):
        self._b.add_block(int(id), int(ni), int(nj), int(nk))
        self._dims[int(id)] = (int(ni), int(nj), int(nk))

    def add_piece(self, id, i=None, j=None, k=None, dims=None):
        """A piece of block `id`: index ranges (begin, end) per direction (0-based, end
        excluded); a direction not given is the whole block's (dims: the block's dimensions,
        when it was not added by add_block)."""
        dims = dims or self._dims.get(int(id))
        if dims is None and None in (i, j, k):
            raise UsageError(f"block {id}: not added by add_block: give its ranges i, j, k or its dims")
        r = [*(i or (0, dims[0])), *(j or (0, dims[1])), *(k or (0, dims[2]))]
        self._b.add_piece(int(id), [int(x) for x in r])

    @property
    def pieces(self):
        """[(block id, ((i0, i1), (j0, j1), (k0, k1)), (mk, mj, mi) shape of its arrays)]"""
        return [(b, ((r[0], r[1]), (r[2], r[3]), (r[4], r[5])), (m[2], m[1], m[0])) for b, r, m in self._b.pieces()]

    def arrays(self, nvar, dtype=np.float64):
        """Zeroed arrays for every piece and variable: [piece][variable]."""
        return [[np.zeros(shape, dtype=dtype) for _ in range(nvar)] for _, _, shape in self.pieces]

    def _flat(self, arrays, per_piece, writable):
        flat = []
        for piece in arrays:
            if len(piece) != per_piece:
                raise UsageError(f"expected {per_piece} arrays per piece, got {len(piece)}")
            for a in piece:
                if writable and (not isinstance(a, np.ndarray) or a.dtype != np.float64 or not a.flags.c_contiguous):
                    raise UsageError("read into C-contiguous float64 arrays (BlockLayout.arrays makes them)")
                flat.append(a.reshape(-1) if writable else np.ascontiguousarray(a, dtype=np.float64).reshape(-1))
        return flat


class BlockWriter:
    """All ranks write one multi-block file (raw restart, or HDF5 + XDMF for .h5 names).
    Collective: construction, write_grid, write_frame, close.

        with anabranch.BlockWriter(comm, "run.h5", layout, ["rho", "u", "v", "w", "p"]) as w:
            w.write_grid(xyz)               # [piece][x, y, z], HDF5 and CGNS only
            w.write_frame(0.1, q)           # [piece][variable]

    options: "format=raw|hdf5|cgns strategy=independent|collective|aggregated|aggregated-async
    precision=4|8 records=fortran|none atomic=1 compress=SPEC ..." and MPI-IO hints; the
    format by default by the name (.h5 hdf5, .cgns CGNS, else raw). compress=lossless,
    abs=TOL or rel=TOL (then :deflate or :zstd), CGNS and HDF5: in CGNS every array chunked
    inside the ranks' pieces, each rank compressing and writing its own chunks; in HDF5
    chunked datasets through HDF5's collective filtered writes.
    """

    def __init__(self, comm, path, layout, variables, options=""):
        self.layout, self.variables, self.path = layout, list(variables), os.fspath(path)
        self._c = _comm(comm)
        self._w = _core.BlockWriter(self._c, self.path, layout._b, self.variables, options)

    def _flat(self, arrays, per_piece):
        out = []
        _agreed(self._c, lambda: out.append(self.layout._flat(arrays, per_piece, False)))
        return out[0]

    def write_grid(self, xyz):
        self._w.write_grid(self.layout._b, self._flat(xyz, 3))

    def write_frame(self, time, values):
        self._w.write_frame(self.layout._b, float(time), len(self.variables), self._flat(values, len(self.variables)))

    def begin_frame(self, time, values):
        """Collective: starts a frame and returns once the values are copied (with
        aggregated-async the bytes go to disk while the caller computes); end_frame() completes."""
        self._w.write_frame_begin(self.layout._b, float(time), len(self.variables), self._flat(values, len(self.variables)))

    def end_frame(self):
        self._w.write_frame_end()

    def close(self):
        self._w.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()


class BlockReader:
    """The block writer's mirror: each rank reads its own pieces (any assignment, any
    process count) from a raw or HDF5 block file. Collective: construction, read_frame,
    read_grid, close."""

    def __init__(self, comm, path, layout, options=""):
        self.layout, self.path = layout, os.fspath(path)
        self._c = _comm(comm)
        self._r = _core.BlockReader(self._c, self.path, layout._b, options)
        self.frames, self.nvar = self._r.frames()
        self.times = [self._r.time(k) for k in range(self.frames)]

    def read_frame(self, k, out=None):
        """Frame k into out ([piece][variable] float64 arrays; made when None, halos zero)."""
        if k < 0:
            k += self.frames
        out = out if out is not None else self.layout.arrays(self.nvar)
        flat = []
        _agreed(self._c, lambda: flat.append(self.layout._flat(out, self.nvar, True)))
        self._r.read_frame(self.layout._b, int(k), self.nvar, flat[0])
        return out

    def read_grid(self, out=None):
        out = out if out is not None else self.layout.arrays(3)
        flat = []
        _agreed(self._c, lambda: flat.append(self.layout._flat(out, 3, True)))
        self._r.read_grid(self.layout._b, flat[0])
        return out

    def close(self):
        self._r.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()


def write(path, mesh, variables, frames, title="", precision="single", big_endian=True, date=None, iparam=None,
          strategy=None):
    """Writes a whole result file from this process alone: SERAFIN, or HDF5 (VTKHDF + XDMF)
    when path ends in .h5/.hdf/.hdf5/.vtkhdf. mesh: a Mesh or a dict (ikle (nelem, ndp)
    1-based, x, y, optional ipobo, nplan); variables: [(name, unit)] or [name]; frames: an
    iterable of (time, values) with values as Writer.write_frame takes them."""
    path = os.fspath(path)
    if strategy is None:
        strategy = "hdf5" if path.lower().endswith(_HDF5_EXT) else "cgns" if path.lower().endswith(".cgns") else "aggregated"
    spec = {"title": title, "variables": variables, "precision": precision, "big_endian": big_endian, "date": date,
            "iparam": iparam, "mesh": mesh}
    npoin = (mesh.npoin if isinstance(mesh, Mesh) else len(mesh["x"]))
    ids = np.arange(1, npoin + 1, dtype=np.int32)
    _core.mpi_ensure()
    w = Writer(_core.comm_self(), path, spec, ids, strategy=strategy, options="atomic=1")
    n = 0
    with w:
        for time, values in frames:
            w.write_frame(time, values)
            n += 1
    return n


# --------------------------------------------------------------------------------------
# Fortran sequential unformatted files, written and read by many ranks at once.

class Records:
    """The records of a Fortran sequential unformatted file (a program's WRITE(unit) ...):
    every record's payload size in bytes, in file order, the same on every rank.

        layout = anabranch.Records([208, 240000, 12])          # 4-byte markers, native order
        anabranch.write_records("restart.bin", layout, {1: q}, comm)   # this rank's records
        got = anabranch.read_records("restart.bin", layout, [1], comm)  # {1: uint8 array}

    marker_bytes: 4 (gfortran's default) or 8 (-frecord-marker=8), 0 for raw byte ranges
    without markers (another format's arrays, such as h5_extents finds); byte_order: "native",
    "little" or "big"; max_subrecord: a subrecord's most payload bytes (0: gfortran's,
    2147483639 with 4-byte markers); offset: the file byte of the first record.
    """

    def __init__(self, sizes, marker_bytes=4, byte_order="native", max_subrecord=0, offset=0):
        orders = {"native": -1, "little": 0, "big": 1}
        if byte_order not in orders:
            raise UsageError(f"byte_order={byte_order!r}: expected 'native', 'little' or 'big'")
        self.sizes = [int(s) for s in sizes]
        self._r = _core.Records()
        self._r.set_form(int(marker_bytes), orders[byte_order], int(max_subrecord))
        self._r.set_offset(int(offset))
        for s in self.sizes:
            self._r.add(s)

    def __len__(self):
        return len(self.sizes)

    def extent(self, r=None):
        """(first, end): record r's bytes in the file, markers included; None: the whole layout."""
        return self._r.extent(-1 if r is None else int(r))


def _payload(x):
    return np.frombuffer(x, dtype=np.uint8) if isinstance(x, (bytes, bytearray, memoryview)) else \
        np.ascontiguousarray(x).reshape(-1).view(np.uint8)


def write_records(path, layout, records, comm=None, options=""):
    """Collective: writes this rank's records ({index: bytes or numpy array}, 0-based indices)
    into path, every record of the file by one rank, byte for byte the serial program's file.
    options: "strategy=independent|collective|aggregated|aggregated-async keep=1 ..." (keep=1:
    write into an existing file, keeping its other bytes) and MPI-IO hints."""
    items = sorted(records.items())
    data = [_payload(v) for _, v in items]

    def check():
        for (k, _), d in zip(items, data):
            if not 0 <= k < len(layout):
                raise UsageError(f"record {k} is not one of the layout's {len(layout)} (0-based)")
            if d.size != layout.sizes[k]:
                raise UsageError(f"record {k} holds {layout.sizes[k]} bytes; its payload has {d.size}")
    c = _comm(comm)
    _agreed(c, check)
    _core.write_records(c, os.fspath(path), layout._r, [k for k, _ in items], data, options)


def h5_extents(path, datasets):
    """Where an HDF5 file (a CGNS file another program's CGNS library made) keeps the values
    of contiguous datasets: [(offset, bytes)] for each dataset path, such as
    "/Base/Zone 1/FlowSolution/Density/ data". The ranks holding the values then write them
    there (Records(..., marker_bytes=0) with offset, the bytes between them kept: keep=1).
    A dataset missing, chunked, compact or not yet allocated: FormatError naming it."""
    return _core.h5_extents(os.fspath(path), [str(d) for d in datasets])


def read_records(path, layout, records, comm=None, options=""):
    """Collective: this rank's records (0-based indices) from path: {index: uint8 array}
    (view one as its type: got[k].view(np.float64)). Every marker read is checked.
    options: "strategy=independent|collective|aggregated buffer_bytes=N readers_per_node=N" and
    MPI-IO hints."""
    records = [int(k) for k in records]

    def check():
        for k in records:
            if not 0 <= k < len(layout):
                raise UsageError(f"record {k} is not one of the layout's {len(layout)} (0-based)")
    c = _comm(comm)
    _agreed(c, check)
    out = [np.empty(layout.sizes[k], dtype=np.uint8) for k in records]
    _core.read_records(c, os.fspath(path), layout._r, records, out, options)
    return dict(zip(records, out))
