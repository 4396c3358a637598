"""Fortran sequential records drawn at random, against the files gfortran itself writes: any
record sizes (empty records, records longer than a subrecord), any subrecord size
(-fmax-subrecord-length), 4- and 8-byte markers (-frecord-marker), either byte order
(GFORTRAN_CONVERT_UNIT). anabranch writes the same records from 1 to 5 ranks, each rank a
random share, with a strategy and buffer drawn too, and must give gfortran's bytes; reads them
back on another rank count; with keep=1 writes into an older file, longer or shorter, leaving
every other byte as it was, also when the write fails."""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import given, strategies as st

import conftest
import gen

FC = shutil.which("gfortran")
pytestmark = [pytest.mark.skipif(not FC, reason="gfortran absent: it is the oracle"), pytest.mark.mpi, pytest.mark.generated]

ORACLE = """
! Writes the records a spec lists (a count, then each record's size in bytes), their bytes
! taken from a payload file back to back: gfortran's own WRITE(unit) of each record.
program records_oracle
  implicit none
  character(len=4096) :: spec, payloads, out
  integer :: n, k, s, p, w
  integer(8), allocatable :: sizes(:)
  integer(1), allocatable :: buf(:)
  call get_command_argument(1, spec)
  call get_command_argument(2, payloads)
  call get_command_argument(3, out)
  open(newunit=s, file=trim(spec), status='old', action='read')
  read(s, *) n
  allocate(sizes(n))
  if (n > 0) read(s, *) sizes
  close(s)
  open(newunit=p, file=trim(payloads), access='stream', form='unformatted', status='old', action='read')
  open(newunit=w, file=trim(out), form='unformatted', access='sequential', status='replace', action='write')
  do k = 1, n
    allocate(buf(sizes(k)))
    if (sizes(k) > 0) read(p) buf
    write(w) buf
    deallocate(buf)
  end do
  close(w)
  close(p)
end program records_oracle
"""

WRITER = """
import sys, numpy as np, anabranch
from mpi4py import MPI
comm = MPI.COMM_WORLD
spec = eval(open(sys.argv[1]).read())
payloads = open(sys.argv[2], "rb").read()
starts = np.concatenate([[0], np.cumsum(spec["sizes"])]).astype(int)
layout = anabranch.Records(spec["sizes"], marker_bytes=spec["marker"], byte_order=spec["order"],
                           max_subrecord=spec["sub"], offset=spec.get("offset", 0))
mine = {k: payloads[starts[k]:starts[k + 1]] for k in spec["owners"][comm.rank]}
if spec.get("bad") == comm.rank:  # one rank names a record the layout does not have, or gives a payload too short or long
    if spec.get("short") and mine:
        k = min(mine)
        mine[k] = mine[k][:-1] if mine[k] and not spec.get("longer") else mine[k] + b"x"
    else:
        mine[len(spec["sizes"]) + 3] = b""
if spec.get("twice") is not None and comm.rank == comm.size - 1:  # a record the first rank gives too
    k = spec["twice"]
    mine[k] = payloads[starts[k]:starts[k + 1]]
try:
    if spec["mode"] == "write":
        anabranch.write_records(sys.argv[3], layout, mine, comm, spec["options"])
    else:
        for options in spec["options"]:  # each read strategy in turn
            got = anabranch.read_records(sys.argv[3], layout, spec["owners"][comm.rank], comm, options)
            for k, v in got.items():
                assert v.tobytes() == payloads[starts[k]:starts[k + 1]], f"rank {comm.rank}: record {k} differs ({options})"
except anabranch.Error as e:
    open(sys.argv[1] + f".said.{comm.rank}", "w").write(str(e))  # one file per rank: lines on a shared stderr interleave
    print(f"rank {comm.rank}: {e}", file=sys.stderr)
    sys.exit(1)
"""

_built = {}


def oracle(marker, sub):
    """gfortran's program for a marker size and subrecord length (compiled once each)."""
    key = (marker, sub)
    if key not in _built:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="ab-records-oracle-"))
        (folder / "oracle.f90").write_text(ORACLE)
        flags = [f"-frecord-marker={marker}"] + ([f"-fmax-subrecord-length={sub}"] if sub else [])
        subprocess.run([FC, *flags, "oracle.f90", "-o", "oracle"], cwd=folder, check=True, capture_output=True)
        _built[key] = folder / "oracle"
    return _built[key]


def gfortran_file(tmp, sizes, payloads, marker, sub, order):
    spec = tmp / "spec.txt"
    spec.write_text(f"{len(sizes)}\n" + " ".join(map(str, sizes)) + "\n")
    (tmp / "payloads.bin").write_bytes(payloads)
    out = tmp / "gfortran.bin"
    env = dict(os.environ, GFORTRAN_CONVERT_UNIT="big_endian" if order == "big" else "little_endian")
    subprocess.run([oracle(marker, sub), spec, tmp / "payloads.bin", out], check=True, capture_output=True, env=env, timeout=60)
    return out.read_bytes()


def run_ranks(tmp, ranks, spec, path, env=None):
    (tmp / "spec.py").write_text(repr(spec))
    (tmp / "writer.py").write_text(WRITER)
    return conftest.mpirun(ranks, sys.executable, tmp / "writer.py", tmp / "spec.py", tmp / "payloads.bin", path, timeout=120, env=env)


def sieving(rng):
    """Open MPI's read data sieving on or off (the collective reads' two paths: collective_reads_safe)."""
    return {"OMPI_MCA_fbtl_posix_read_datasieving": str(int(rng.integers(0, 2)))}


sizes_st = st.lists(st.one_of(st.integers(0, 40), st.integers(0, 3000)), min_size=1, max_size=12)
forms = st.fixed_dictionaries({"marker": st.sampled_from([4, 8]), "order": st.sampled_from(["little", "big"]),
                               "sub": st.one_of(st.just(0), st.integers(1, 700))})
write_strategies = st.sampled_from(["independent", "collective", "aggregated", "aggregated-async"])


def owners_of(rng, n, ranks):
    """Each record's rank, at random (some ranks may hold none); per rank its records, in a
    random order."""
    who = rng.integers(0, ranks, n)
    out = [[int(k) for k in np.flatnonzero(who == r)] for r in range(ranks)]
    for o in out:
        rng.shuffle(o)
    return out


@gen.cases(25)
@given(sizes=sizes_st, form=forms, ranks=st.integers(1, 5), strategy=write_strategies, seed=st.integers(0, 2**32 - 1),
       buffer=st.sampled_from([0, 4096, 5000]), reread=st.integers(1, 5))
def test_records_are_gfortrans_bytes_and_read_back(sizes, form, ranks, strategy, seed, buffer, reread):
    """The records from 1 to 5 ranks, each a random share of them: gfortran's file, byte for
    byte; read back on 1 to 5 ranks, each any records (nested in another rank's, repeated),
    by every read strategy in turn."""
    if form["marker"] == 8:
        form = dict(form, sub=0)  # gfortran splits records into subrecords with 4-byte markers only
    rng = np.random.default_rng(seed)
    payloads = rng.integers(0, 256, sum(sizes), dtype=np.uint8).tobytes()
    with gen.scratch() as tmp:
        want = gfortran_file(tmp, sizes, payloads, form["marker"], form["sub"], form["order"])
        out = tmp / "ab.bin"
        out.write_bytes(b"\xee" * int(rng.integers(0, 2 * len(want) + 10)))  # an older file, made anew
        opts = f"strategy={strategy}" + (f" buffer_bytes={buffer}" if buffer else "")
        spec = dict(form, sizes=sizes, owners=owners_of(rng, len(sizes), ranks), options=opts, mode="write")
        conftest.assert_status(run_ranks(tmp, ranks, spec, out, env=gen.nodes(int(rng.integers(1, ranks + 1)))), 0)
        assert out.read_bytes() == want
        # read back on another rank count, each rank any records (a record may be read by
        # several, a rank's records nested in another's), by every strategy; Open MPI's read
        # data sieving left on (what collective_reads_safe guards against) or off
        owners = []
        for _ in range(reread):
            if rng.random() < 0.5:  # a run of consecutive records
                a = int(rng.integers(0, len(sizes)))
                owners.append(list(range(a, int(rng.integers(a, len(sizes))) + 1)))
            else:
                owners.append(sorted({int(k) for k in rng.choice(len(sizes), int(rng.integers(0, len(sizes) + 1)))}))
        opts = [f"strategy={s}" + (f" buffer_bytes={buffer}" if buffer else "") for s in ("collective", "independent", "aggregated")]
        spec = dict(form, sizes=sizes, owners=owners, options=opts, mode="read")
        env = dict(sieving(rng), **gen.nodes(int(rng.integers(1, reread + 1))))
        conftest.assert_status(run_ranks(tmp, reread, spec, tmp / "gfortran.bin", env=env), 0)


@gen.cases(20)
@given(sizes=sizes_st, form=forms, ranks=st.integers(1, 5), strategy=write_strategies, seed=st.integers(0, 2**32 - 1),
       older=st.floats(0, 2), fail=st.sampled_from(["", "", "refused", "twice"]))
def test_keep_writes_some_records_into_an_older_file(sizes, form, ranks, strategy, seed, older, fail):
    """keep=1: some records written into a file that is there, longer or shorter than the
    layout, at an offset; every byte outside them is the older file's (a shorter file grows
    to the records' end). When one rank's records are refused (one the layout lacks), every
    rank reports it and the file is the older one, byte for byte; when two ranks give the
    same record (found at close), every rank reports it and the file is still there, every
    byte outside the records the older file's."""
    if form["marker"] == 8:
        form = dict(form, sub=0)
    rng = np.random.default_rng(seed)
    payloads = rng.integers(0, 256, sum(sizes), dtype=np.uint8).tobytes()
    with gen.scratch() as tmp:
        records = gfortran_file(tmp, sizes, payloads, form["marker"], form["sub"], form["order"])
        offset = int(rng.integers(0, 64))
        before = rng.integers(0, 256, int((offset + len(records)) * older), dtype=np.uint8).tobytes()
        out = tmp / "kept.bin"
        out.write_bytes(before)
        written = sorted(int(k) for k in rng.choice(len(sizes), int(rng.integers(1, len(sizes) + 1)), replace=False))
        owners = [[k for k in written if k % ranks == r] for r in range(ranks)]
        spec = dict(form, sizes=sizes, owners=owners, options=f"strategy={strategy} keep=1", mode="write", offset=offset)
        if fail == "refused":
            spec["bad"] = int(rng.integers(0, ranks))
            spec["short"] = bool(spec["owners"][spec["bad"]]) and bool(rng.integers(0, 2))
            spec["longer"] = bool(rng.integers(0, 2))
        if fail == "twice":
            if ranks == 1:
                ranks = 2
                spec["owners"] = [written, []]
            spec["twice"] = spec["owners"][0][0] if spec["owners"][0] else written[0]
            if spec["twice"] not in spec["owners"][0]:  # rank 0's alone, then the last rank's too
                spec["owners"] = [[k for k in o if k != spec["twice"]] for o in spec["owners"]]
                spec["owners"][0].append(spec["twice"])
        proc = run_ranks(tmp, ranks, spec, out)
        if fail:
            conftest.assert_status(proc, 1)
            # the same error on every rank (those where it did not arise name the rank it came from)
            said = [re.sub(r"^rank \d+: ", "", (tmp / f"spec.py.said.{r}").read_text()) for r in range(ranks)]
            assert len(set(said)) == 1, said
            if fail == "refused":
                why = "bytes; its payload has" if spec["short"] else "is not one of the layout's"
                assert why in said[0] and out.read_bytes() == before, said
                return
            assert "was written 2 times" in said[0], said
            assert out.exists(), "a kept file removed after a failure"
        else:
            conftest.assert_status(proc, 0)
        # where each record lies in the gfortran file: its markers around its payload (and subrecords)
        want = bytearray(before)
        pos = 0
        bounds = []
        for s in sizes:
            sub = form["sub"] or (2147483639 if form["marker"] == 4 else 1 << 62)
            parts = max(1, -(-s // sub))
            n = s + 2 * form["marker"] * parts
            bounds.append((pos, pos + n))
            pos += n
        assert pos == len(records)
        end = max(offset + bounds[k][1] for k in written)
        if len(want) < end:
            want += b"\0" * (end - len(want))
        for k in written:
            a, b = bounds[k]
            want[offset + a:offset + b] = records[a:b]
        assert out.read_bytes() == bytes(want)
