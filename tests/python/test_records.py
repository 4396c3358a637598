"""Fortran sequential unformatted files written by many ranks at once (the records layout):
byte for byte the file gfortran writes (its default form, small subrecords, 8-byte markers,
big-endian), from 1, 2 and 3 ranks through every write strategy, read back by gfortran itself
and by anabranch on another rank count; the fault rules (a short or foreign file named by its
record and byte, a record written twice or not at all, a file-size limit, an older and longer
file)."""
import os
import pathlib
import sys

import numpy as np
import pytest

import conftest

STANDIN = os.environ.get("AB_RECORDS_STANDIN")
# gfortran's forms: program suffix, anabranch's marker bytes and subrecord size.
FORMS = {"default": ("", 4, 0), "sub": ("_sub", 4, 100), "m8": ("_m8", 8, 0)}
SIZES = [32, 8000, 0, 1332, 200, 316]  # the stand-in's records


def standin(form):
    if not STANDIN:
        pytest.skip("the Fortran stand-in is not built (no Fortran)")
    return pathlib.Path(STANDIN) / f"ab_records_standin{FORMS.get(form, ('_' + form,))[0]}"


def reference(tmp_path, form):
    ref = tmp_path / f"ref-{form}.bin"
    conftest.assert_status(conftest.run([standin(form), "serial", ref], capture_output=True, text=True, timeout=60), 0)
    return ref


def payloads(order="="):
    """The stand-in's records as numpy builds them (byte order `order`)."""
    head = b"anabranch-record" + np.array([7, -3], order + "i4").tobytes() + np.array([1.25], order + "f8").tobytes()
    i = np.arange(1, 1001)
    return {0: np.frombuffer(head, np.uint8), 1: (i * 0.25).astype(order + "f8"), 2: b"",
            3: (np.arange(1, 334) ** 2 - 50).astype(order + "i4"), 4: (np.arange(1, 51) / 8).astype(order + "f4"),
            5: np.frombuffer((np.arange(1, 38) * 1.5 - 7).astype(order + "f8").tobytes() + (-np.arange(1, 6)).astype(order + "i4").tobytes(),
                             np.uint8)}


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 3])
@pytest.mark.parametrize("strategy", ["independent", "collective", "aggregated", "aggregated-async"])
def test_fortran_bytes_from_every_rank(tmp_path, ranks, strategy):
    """Every rank writes its records (the Fortran module); the file is gfortran's, and gfortran
    reads it back."""
    ref = reference(tmp_path, "default")
    out = tmp_path / "out.bin"
    out.write_bytes(b"\xff" * 50000)  # an older, longer file: made anew
    conftest.assert_status(conftest.mpirun(ranks, standin("default"), "ab", out, f"strategy={strategy}", 4, 0), 0)
    assert out.read_bytes() == ref.read_bytes()
    conftest.assert_status(conftest.run([standin("default"), "check", out], capture_output=True, text=True, timeout=60), 0)


@pytest.mark.mpi
@pytest.mark.parametrize("form", ["sub", "m8"])
def test_gfortran_forms(tmp_path, form):
    """Records split in 100-byte subrecords (-fmax-subrecord-length=100: the negative markers
    of a record over 2 GiB), and 8-byte markers (-frecord-marker=8), at 3 ranks; read back at 2
    and 3 (collective, independent, aggregated in rounds of 4 KiB)."""
    _, marker, sub = FORMS[form]
    ref = reference(tmp_path, form)
    out = tmp_path / "out.bin"
    conftest.assert_status(conftest.mpirun(3, standin(form), "ab", out, "strategy=aggregated", marker, sub), 0)
    assert out.read_bytes() == ref.read_bytes()
    conftest.assert_status(conftest.mpirun(2, standin(form), "abread", ref, "strategy=collective", marker, sub), 0)
    conftest.assert_status(conftest.mpirun(3, standin(form), "abread", ref, "strategy=independent", marker, sub), 0)
    conftest.assert_status(conftest.mpirun(3, standin(form), "abread", ref, "strategy=aggregated buffer_bytes=4096", marker, sub), 0)


@pytest.mark.mpi
def test_read_any_assignment(tmp_path):
    """The reader, on another rank count than the writer, each rank its own records."""
    ref = reference(tmp_path, "default")
    for n in (1, 3):
        conftest.assert_status(conftest.mpirun(n, standin("default"), "abread", ref, "", 4, 0), 0)


def test_python_big_endian(tmp_path):
    """The Python package: numpy's big-endian payloads in big-endian markers, gfortran's
    -fconvert=big-endian file to the byte; read back and viewed as their types."""
    import anabranch
    ref = reference(tmp_path, "big")
    layout = anabranch.Records(SIZES, byte_order="big")
    out = tmp_path / "py.bin"
    anabranch.write_records(out, layout, payloads(">"))
    assert out.read_bytes() == ref.read_bytes()
    got = anabranch.read_records(ref, layout, [1, 4, 2])
    assert np.array_equal(got[1].view(">f8"), np.arange(1, 1001) * 0.25)
    assert np.array_equal(got[4].view(">f4"), (np.arange(1, 51) / 8).astype("f4"))
    assert got[2].size == 0
    assert layout.extent() == (0, len(ref.read_bytes()))
    assert layout.extent(1) == (40, 40 + 8 + 8000)


def test_keep_writes_into_an_existing_file(tmp_path):
    """keep=1 and an offset: records placed after bytes written by other means, every other
    byte of the file left as it was (a code's own header, another writer's records)."""
    import anabranch
    out = tmp_path / "k.bin"
    before = bytes(range(256)) * 200
    out.write_bytes(before)
    layout = anabranch.Records([8, 16], offset=1000)
    anabranch.write_records(out, layout, {1: np.arange(2, dtype="<f8")}, options="keep=1")
    after = out.read_bytes()
    first, end = layout.extent(1)
    assert (first, end) == (1016, 1040)
    assert after[:first] == before[:first] and after[end:] == before[end:]
    assert after[first:end] == (np.array([16], "<i4").tobytes() + np.arange(2, dtype="<f8").tobytes() + np.array([16], "<i4").tobytes())
    # An empty layout made anew: the empty file that writers with keep=1 start from.
    anabranch.write_records(out, anabranch.Records([]), {})
    assert out.exists() and out.stat().st_size == 0


def test_refusals(tmp_path):
    """A short file: the record past its end and the byte; another layout: the record, the
    marker's byte and both lengths; a record not written: an error, and no file left."""
    import anabranch
    from conftest import raises_exactly
    ref = reference(tmp_path, "default")
    layout = anabranch.Records(SIZES)
    short = tmp_path / "short.bin"
    short.write_bytes(ref.read_bytes()[:8700])
    with raises_exactly(anabranch.FormatError, match=r"short.bin: record 3 ends at byte 9396 but the file ends at byte 8700"):
        anabranch.read_records(short, layout, [0])
    other = anabranch.Records([32, 8000, 8, 1324, 200, 316])  # the same total, other records
    with raises_exactly(anabranch.FormatError, match=r"record 2, its leading marker at byte 8048 says 0, the layout 8"):
        anabranch.read_records(ref, other, [2])
    with raises_exactly(anabranch.FormatError, match=r"record 0, its leading marker at byte 0 says 536870912, the layout 32 \(the file is little-endian\)"):
        anabranch.read_records(ref, anabranch.Records(SIZES, byte_order="big"), [0, 1])
    missing = tmp_path / "missing.bin"
    with raises_exactly(anabranch.UsageError, match=r"missing.bin: record 2 \(at byte 8048\) was not written"):
        anabranch.write_records(missing, layout, {k: v for k, v in payloads().items() if k != 2})
    assert not missing.exists()
    with raises_exactly(anabranch.UsageError, match=r"record 5 holds 316 bytes; its payload has 8"):
        anabranch.write_records(missing, layout, {5: np.zeros(1)})
    with raises_exactly(anabranch.UsageError, match=r"record 6 is not one of the layout's 6"):
        anabranch.read_records(ref, layout, [6])
    with raises_exactly(anabranch.UsageError, match=r"record markers are 4 or 8 bytes \(0: none\), not 2"):
        anabranch.Records(SIZES, marker_bytes=2)
    # Boundaries: the largest 4-byte subrecord is allowed, one more is not.
    anabranch.Records(SIZES, max_subrecord=2**31 - 1)
    with raises_exactly(anabranch.UsageError, match=r"a subrecord holds 1 to 2147483647 bytes"):
        anabranch.Records(SIZES, max_subrecord=2**31)


@pytest.mark.mpi
def test_record_written_by_two_ranks(tmp_path):
    """Two ranks giving the same record: exit 1 on every rank, the record and its byte named."""
    script = tmp_path / "twice.py"
    script.write_text(
        "import sys, numpy as np, anabranch\n"
        "l = anabranch.Records([8, 8])\n"
        "try:\n"
        "    anabranch.write_records(sys.argv[1], l, {0: np.zeros(1), 1: np.ones(1)} if anabranch._core.comm_rank_size(anabranch._comm(None))[0] == 0 else {1: np.ones(1)})\n"
        "except anabranch.UsageError as e:\n"
        "    print(e, file=sys.stderr); sys.exit(1)\n")
    out = tmp_path / "twice.bin"
    proc = conftest.mpirun(2, sys.executable, script, out)
    conftest.assert_status(proc, 1, "twice.bin: record 1 (at byte 16) was written 2 times")
    assert not out.exists()


@pytest.mark.faults
def test_file_size_limit(tmp_path):
    """A write past the file-size limit (a full disk's stand-in): IoError naming the file, a
    clean exit 1, no file left (it was made anew)."""
    script = tmp_path / "limit.py"
    script.write_text(
        "import resource, sys, numpy as np, anabranch\n"
        "anabranch._comm(None)  # MPI started first: its launcher's own files are not limited\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "try:\n"
        "    anabranch.write_records(sys.argv[1], anabranch.Records([8000]), {0: np.zeros(1000)})\n"
        "except anabranch.IoError as e:\n"
        "    print(e, file=sys.stderr); sys.exit(1)\n")
    out = tmp_path / "big.bin"
    proc = conftest.run([sys.executable, script, out], capture_output=True, text=True, timeout=60)
    conftest.assert_status(proc, 1, "cannot write", "big.bin", "File too large")
    assert not out.exists()


def _cgns_like(path, rng):
    """An HDF5 file laid out as CGNS's library lays one out (groups, each array a contiguous
    " data" dataset, attributes between them), its arrays' values zero: random counts, shapes,
    float32 and float64. Returns {dataset path: values the ranks then write}."""
    h5py = pytest.importorskip("h5py")
    want = {}
    with h5py.File(path, "w", track_order=True) as f:
        for z in range(int(rng.integers(1, 4))):
            zone = f.create_group(f"Base/Zone {z + 1:3d}", track_order=True)
            zone.attrs["label"] = np.bytes_("Zone_t")
            for a in range(int(rng.integers(1, 6))):
                node = zone.create_group(f"Array{a}", track_order=True)
                node.attrs["label"] = np.bytes_("DataArray_t")
                shape = tuple(int(x) for x in rng.integers(1, 9, size=int(rng.integers(1, 4))))
                dtype = rng.choice(["<f4", "<f8"])
                node.create_dataset(" data", data=np.zeros(shape, dtype))  # allocated, contiguous
                want[f"/Base/Zone {z + 1:3d}/Array{a}/ data"] = rng.standard_normal(shape).astype(dtype)
    return want


@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_arrays_written_where_hdf5_keeps_them(tmp_path, ranks):
    """A CGNS file another library made (CFL3D's, through CGNS's): h5_extents finds where its
    arrays' values are, and the ranks write them there through a raw records layout (markers 0,
    the gaps between the arrays kept), as CFL3D's block owners do. h5py reads back every value
    numpy made, and every other byte of the file is what it was."""
    rng = np.random.default_rng(6000 + ranks)
    h5 = tmp_path / "flow.cgns"
    want = _cgns_like(h5, rng)
    before = h5.read_bytes()
    import anabranch
    places = anabranch.h5_extents(h5, list(want))
    for (off, nb), v in zip(places, want.values()):
        assert nb == v.nbytes and 0 < off and off + nb <= len(before)
    np.save(tmp_path / "want.npy", np.array([want[k].tobytes() for k in want], dtype=object), allow_pickle=True)
    script = tmp_path / "owners.py"
    script.write_text(
        "import sys, numpy as np, anabranch\n"
        "rank, size = anabranch._core.comm_rank_size(anabranch._comm(None))\n"
        "path, places = sys.argv[1], [tuple(map(int, p.split(':'))) for p in sys.argv[3:]]\n"
        "values = np.load(sys.argv[2], allow_pickle=True)\n"
        "mine = sorted((places[i][0], places[i][1], values[i]) for i in range(len(places)) if i % size == rank)\n"
        "if mine:\n"
        "    sizes, recs, end = [], {}, mine[0][0]\n"
        "    for off, nb, v in mine:\n"
        "        if off > end: sizes.append(off - end)\n"
        "        recs[len(sizes)] = np.frombuffer(v, np.uint8)\n"
        "        sizes.append(nb); end = off + nb\n"
        "    layout = anabranch.Records(sizes, marker_bytes=0, offset=mine[0][0])\n"
        "    anabranch.write_records(path, layout, recs, anabranch._core.comm_self(), options='keep=1')\n")
    proc = conftest.mpirun(ranks, sys.executable, script, h5, tmp_path / "want.npy", *[f"{o}:{b}" for o, b in places])
    conftest.assert_status(proc, 0)
    import h5py
    after = h5.read_bytes()
    with h5py.File(h5, "r") as f:
        for k, v in want.items():
            got = f[k][()]
            assert got.dtype == v.dtype and got.tobytes() == v.tobytes(), k
    covered = np.zeros(len(before), bool)
    for off, nb in places:
        covered[off:off + nb] = True
    b, a = np.frombuffer(before, np.uint8), np.frombuffer(after, np.uint8)
    assert len(after) == len(before) and np.array_equal(a[~covered], b[~covered])


def test_h5_extents_refusals(tmp_path):
    """A dataset missing, chunked, compact, or not yet allocated: FormatError naming the file
    and it."""
    h5py = pytest.importorskip("h5py")
    import anabranch
    from conftest import raises_exactly
    h5 = tmp_path / "other.h5"
    with h5py.File(h5, "w") as f:
        f.create_dataset("chunked", data=np.zeros(100), chunks=(10,))
        f.create_dataset("empty", shape=(100,), dtype="<f8")
        f.create_dataset("fine", data=np.zeros(7, "<f4"))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F64LE, h5py.h5s.create_simple((4,)), dcpl=dcpl)
    assert anabranch.h5_extents(h5, ["fine"])[0][1] == 28
    assert "h5_extents" in anabranch.__all__  # the package's public names
    with raises_exactly(anabranch.FormatError, match=r'other.h5: dataset "chunked" is not contiguous'):
        anabranch.h5_extents(h5, ["fine", "chunked"])
    with raises_exactly(anabranch.FormatError, match=r'other.h5: dataset "compact" is not contiguous'):
        anabranch.h5_extents(h5, ["compact"])
    with raises_exactly(anabranch.FormatError, match=r'other.h5: dataset "empty" has no storage allocated'):
        anabranch.h5_extents(h5, ["empty"])
    with raises_exactly(anabranch.FormatError, match=r'other.h5: dataset "/Base/Zone/x/ data" not found'):
        anabranch.h5_extents(h5, ["/Base/Zone/x/ data"])
