"""`anabranch partition`: TELEMAC's partitioned layout, checked field by field by
reassembling the global mesh from the parts, and the concatenated layout byte by byte."""
import collections
import pathlib

import pytest

np = pytest.importorskip("numpy")
from conftest import assert_status  # noqa: E402
from slf import read  # noqa: E402


def suffix(p, i):
    return f"{p - 1:05d}-{i:05d}"


def read_par(path):
    lines = pathlib.Path(path).read_text().splitlines()
    i = 0
    nptfr = int(lines[i]); i += 1
    bnd = [lines[i + k].split() for k in range(nptfr)]; i += nptfr
    nptir = int(lines[i]); i += 1
    iface = [list(map(int, lines[i + k].split())) for k in range(nptir)]; i += nptir
    nhalo = int(lines[i]); i += 1
    halo = [list(map(int, lines[i + k].split())) for k in range(nhalo)]; i += nhalo
    assert i == len(lines)
    return bnd, iface, halo, lines


def check_parts(outdir, geo, cli, nparts, gname, cname):
    """Reassembles the global mesh from the parts and checks every field the spec names."""
    g = read(geo)
    nplan = g.nplan
    n2 = g.npoin // nplan
    e2 = g.nelem // (nplan - 1) if nplan > 1 else g.nelem
    base = g.ikle[:e2, :3] if nplan > 1 else g.ikle
    glines = pathlib.Path(cli).read_text().splitlines() if cli else []
    gnodes = [int(l.split()[11]) for l in glines]
    elem_of = {tuple(sorted(r)): e for e, r in enumerate(base.tolist())}
    seen = np.zeros(e2, dtype=int)
    parts_of_node = collections.defaultdict(set)
    parts = []
    for p in range(nparts):
        s = read(outdir / (gname + suffix(nparts, p)))
        np_p = s.npoin // nplan
        knolg = s.ipobo[:np_p]
        ne_p = s.nelem // (nplan - 1) if nplan > 1 else s.nelem
        lbase = s.ikle[:ne_p, :3] if nplan > 1 else s.ikle
        # Local elements: global elements in increasing order, vertex order kept.
        gl = knolg[lbase - 1]
        gids = [elem_of[tuple(sorted(r))] for r in gl.tolist()]
        assert gids == sorted(gids)
        for e, r in zip(gids, gl.tolist()):
            assert r == base[e].tolist()
        seen[gids] += 1
        # Local nodes numbered by first appearance.
        order = list(dict.fromkeys((lbase.ravel() - 1).tolist()))
        assert order == list(range(np_p))
        # Prism layers above the base, KNOLG per plane, coordinates and every frame.
        if nplan > 1:
            for layer in range(nplan - 1):
                blk = s.ikle[layer * ne_p:(layer + 1) * ne_p]
                assert (blk[:, :3] == lbase + layer * np_p).all() and (blk[:, 3:] == lbase + (layer + 1) * np_p).all()
        gidx = (knolg[None, :] - 1 + n2 * np.arange(nplan)[:, None]).ravel()
        assert (s.ipobo == gidx + 1).all()
        assert (s.x == g.x[gidx]).all() and (s.y == g.y[gidx]).all()
        assert len(s.frames) == len(g.frames)
        for (t, vals), (gt, gvals) in zip(s.frames, g.frames):
            assert t == gt
            for v, gv in zip(vals, gvals):
                assert (v == gv[gidx]).all()
        # partel v8 writes the format word of the file's precision into the title's last 8 bytes.
        assert s.title == g.title[:72] + (b"SERAFIND" if g.rs == 8 else b"SERAFIN ")
        assert s.vars == g.vars and s.date == g.date and s.rs == g.rs
        for n in knolg.tolist():
            parts_of_node[n].add(p)
        parts.append((s, knolg, gids))
    assert (seen == 1).all(), "every element exactly once"
    ranks_of_elem = {}
    for p, (s, knolg, gids) in enumerate(parts):
        for j, e in enumerate(gids):
            ranks_of_elem[e] = (p, j + 1)
    for p, (s, knolg, gids) in enumerate(parts):
        nptir = sum(1 for n in knolg.tolist() if len(parts_of_node[n]) > 1)
        nptfr = sum(1 for n in gnodes if p in parts_of_node[n])
        assert s.iparam == [1, 0, g.iparam[2], g.iparam[3], 0, 0, g.iparam[6], nptfr if cli else s.iparam[7], nptir,
                            1 if g.date else 0]
        if not cli:
            continue
        # .cli: the global lines of the part's boundary nodes, column 12 local, 13 global.
        lines = (outdir / (cname + suffix(nparts, p))).read_text().splitlines()
        mine = [(k, l) for k, l in enumerate(glines) if p in parts_of_node[int(l.split()[11])]]
        assert len(lines) == len(mine)
        local_of = {n: i + 1 for i, n in enumerate(knolg.tolist())}
        for line, (k, gl) in zip(lines, mine):
            a, b = line.split(), gl.split()
            assert len(line) == 207
            assert list(map(int, a[:3])) == list(map(int, b[:3])) and int(a[7]) == int(b[7])
            assert [float(v) for v in a[3:7] + a[8:11]] == pytest.approx([float(v) for v in b[3:7] + b[8:11]])
            assert int(a[11]) == local_of[int(b[11])] and int(a[12]) == int(b[12])
        # PAR: boundary section (K, NBOR_L, ISEG, XSEG, YSEG, NUMLIQ).
        bnd, iface, halo, _ = read_par(outdir / (gname[:3] + "PAR" + suffix(nparts, p)))
        assert [int(b[0]) for b in bnd] == [k + 1 for k, _ in mine]
        assert [int(b[1]) for b in bnd] == [int(l.split()[11]) for l in lines]
        for b in bnd:
            iseg = int(b[2])
            if iseg not in (0, -9999):
                n = abs(iseg)
                assert n in gnodes and p not in parts_of_node[n] or len(parts_of_node[n]) > 1
                # partel writes the neighbour's X in single precision, 9 significant digits.
                assert np.float32(float(b[3])) == np.float32(g.x[n - 1])
        # Interface: sorted by global node, other parts ascending, padded with -1.
        assert len(iface) == nptir
        gnums = [int(knolg[r[0] - 1]) for r in iface]
        assert gnums == sorted(gnums)
        for r, n in zip(iface, gnums):
            others = sorted(parts_of_node[n] - {p})
            assert r[1:] == others + [-1] * (9 - len(others))
        # Halo: every listed neighbour shares the edge; boundary edges have no neighbour.
        ndp = base.shape[1]
        assert [h[0] for h in halo] == sorted(h[0] for h in halo)
        for h in halo:
            e = gids[h[0] - 1]
            verts = base[e].tolist()
            crossing = False
            for k in range(ndp):
                edge = {verts[k], verts[(k + 1) % ndp]}
                rank, loc = h[1 + k], h[1 + ndp + k]
                if loc > 0:
                    q_s, q_knolg, q_gids = parts[rank]
                    f = q_gids[loc - 1]
                    assert edge <= set(base[f].tolist()) and f != e
                    crossing |= rank != p
                else:
                    assert rank == loc and loc in (0, -1)
                    others = [f for f in range(e2) if f != e and edge <= set(base[f].tolist())]
                    assert others == []
            assert crossing
    return parts_of_node


@pytest.mark.parametrize("nparts", [1, 2, 3, 7, 300])
def test_telemac_layout_reassembles(ab, data, tmp_path, nparts):
    r = ab("partition", data / "geo_gouttedo.slf", "--cli", data / "geo_gouttedo.cli", "-n", nparts, "-o", tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    rep = r.json()
    assert rep["files"] == 3 * nparts
    check_parts(tmp_path, data / "geo_gouttedo.slf", data / "geo_gouttedo.cli", nparts, "geo_gouttedo.slf", "geo_gouttedo.cli")


@pytest.mark.parametrize("method", ["metis", "sfc"])
def test_malpasset_results_and_also_files(ab, data, tmp_path, method):
    r = ab("partition", data / "geo_malpasset-small.slf", "--cli", data / "geo_malpasset-small.cli", "-n", 5, "--method", method,
           "--also", data / "f2d_malpasset-small.slf", "-o", tmp_path, "--names", "T2DGEO,T2DCLI", "--json")
    assert r.returncode == 0, r.stderr
    rep = r.json()
    assert rep["files"] == 4 * 5 and rep["imbalance"] < 1.1
    check_parts(tmp_path, data / "geo_malpasset-small.slf", data / "geo_malpasset-small.cli", 5, "T2DGEO", "T2DCLI")
    # The result file is split with the same KNOLG as the geometry.
    for p in range(5):
        a, b = read(tmp_path / ("T2DGEO" + suffix(5, p))), read(tmp_path / ("f2d_malpasset-small.slf" + suffix(5, p)))
        assert (a.ipobo == b.ipobo).all() and (a.ikle == b.ikle).all()
        assert len(b.frames) == 2


def test_prisms_are_partitioned_by_columns(ab, data, tmp_path):
    r = ab("partition", data / "r3d_gouttedo.slf", "-n", 3, "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    check_parts(tmp_path, data / "r3d_gouttedo.slf", None, 3, "r3d_gouttedo.slf", None)


def test_concat_layout_is_the_per_rank_bytes(ab, data, tmp_path):
    args = [data / "geo_malpasset-small.slf", "--cli", data / "geo_malpasset-small.cli", "-n", 4, "--names", "T2DGEO,T2DCLI"]
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    assert ab("partition", *args, "-o", tmp_path / "a").returncode == 0
    r = ab("partition", *args, "-o", tmp_path / "b", "--layout", "concat", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(
        n + s for n in ("T2DGEO", "T2DCLI", "T2DPAR") for s in ("-CONCAT", "-INDEX"))
    b = tmp_path / "b"
    geo = (b / "T2DGEO-CONCAT").read_bytes()
    idx = np.frombuffer((b / "T2DGEO-INDEX").read_bytes(), dtype=">i8").reshape(-1, 2)
    assert idx[0, 0] == 1 and idx[-1, 1] == len(geo) + 1 and (idx[1:, 0] == idx[:-1, 1]).all()
    for p, (begin, end) in enumerate(idx):
        assert geo[begin - 1:end - 1] == (tmp_path / "a" / ("T2DGEO" + suffix(4, p))).read_bytes()
    cli = (b / "T2DCLI-CONCAT").read_text().splitlines(keepends=True)
    cidx = np.frombuffer((b / "T2DCLI-INDEX").read_bytes(), dtype=">i4").reshape(-1, 2)
    for p, (first, stop) in enumerate(cidx):
        assert "".join(cli[first - 1:stop - 1]) == (tmp_path / "a" / ("T2DCLI" + suffix(4, p))).read_text()
    par = (b / "T2DPAR-CONCAT").read_text().splitlines(keepends=True)
    pidx = (b / "T2DPAR-INDEX").read_text().splitlines()
    assert all(len(l) == 12 for l in pidx)
    starts = [int(l) for l in pidx] + [len(par) + 1]
    for p in range(4):
        assert "".join(par[starts[p] - 1:starts[p + 1] - 1]) == (tmp_path / "a" / ("T2DPAR" + suffix(4, p))).read_text()


def test_generated_channel_liquid_boundaries(ab, tmp_path):
    ab("generate", "-n", 4000, "-o", tmp_path / "ch.slf", "--frames", 2)
    r = ab("partition", tmp_path / "ch.slf", "--cli", tmp_path / "ch.cli", "-n", 6, "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    check_parts(tmp_path, tmp_path / "ch.slf", tmp_path / "ch.cli", 6, "ch.slf", "ch.cli")
    # Inlet and outlet are the two liquid boundaries; walls are 0.
    numliq = {}
    for p in range(6):
        bnd, _, _, _ = read_par(tmp_path / ("ch.PAR" + suffix(6, p)))
        for b in bnd:
            numliq[int(b[0])] = int(b[5])
    codes = [l.split()[:3] for l in (tmp_path / "ch.cli").read_text().splitlines()]
    for k, c in enumerate(codes, start=1):
        assert (numliq[k] == 0) == (c[0] == "2")
    assert sorted(set(numliq.values())) == [0, 1, 2]


def test_partition_bad_input(ab, data, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    short = tmp_path / "short.cli"
    short.write_text("".join((data / "geo_gouttedo.cli").read_text().splitlines(keepends=True)[:100]))

    def fails(*args, text, status=1):
        r = ab("partition", *args, "-o", out)
        assert_status(r, status, text)
        assert len(r.stderr.strip().splitlines()) == 1
        assert list(out.iterdir()) == []
    fails(data / "geo_gouttedo.slf", "-n", 0, text="number of parts")
    fails(data / "geo_gouttedo.slf", "-n", 100001, text="number of parts")
    fails(data / "geo_gouttedo.slf", "-n", 9000, text="cannot make 9000 parts of 8978 elements")
    fails(data / "geo_gouttedo.slf", "--cli", data / "geo_malpasset-small.cli", "-n", 2, text="outside")
    fails(data / "r2d_gouttedo.slf", "--cli", short, "-n", 2, text="disagree")
    fails(tmp_path / "missing.slf", "-n", 2, text="missing.slf", status=2)  # an input file that does not exist
    fails(data / "geo_gouttedo.slf", "-n", 2, "--also", data / "geo_malpasset-small.slf", text="not on the mesh")


def test_an_unknown_method_is_status_1(ab, data, tmp_path):
    assert_status(ab("partition", data / "geo_gouttedo.slf", "-n", 2, "--method", "nope", "-o", tmp_path), 1, "nope")


def test_partel_answers_on_stdin(data, tmp_path):
    import os
    import shutil
    from conftest import EXE, run
    for name in ("geo_gouttedo.slf", "geo_gouttedo.cli"):
        shutil.copy(data / name, tmp_path / name.replace("geo_gouttedo.slf", "T2DGEO").replace("geo_gouttedo.cli", "T2DCLI"))
    answers = "T2DGEO\nSERAFIN\nT2DCLI\n4\n1\n\n\n\nT2DGEO\nSERAFIN\nYES\n"
    proc = run([EXE, "partition", "--partel"], input=answers, capture_output=True, text=True, cwd=tmp_path,
               env=dict(os.environ, ANABRANCH_PROGRESS="0"))
    assert proc.returncode == 0, proc.stderr
    # The same files as the command line's own concat partition of the same case.
    other = tmp_path / "cmdline"
    other.mkdir()
    r = run([EXE, "partition", tmp_path / "T2DGEO", "--cli", tmp_path / "T2DCLI", "-n", "4", "--layout", "concat",
             "-o", other], capture_output=True, text=True, env=dict(os.environ, ANABRANCH_PROGRESS="0"))
    assert r.returncode == 0, r.stderr
    for n in ("T2DGEO", "T2DCLI", "T2DPAR"):
        for suffix in ("-CONCAT", "-INDEX"):
            assert (tmp_path / (n + suffix)).read_bytes() == (other / (n + suffix)).read_bytes(), n + suffix
    assert len((tmp_path / "T2DGEO-INDEX").read_bytes()) > 0


def test_a_trailing_newline_is_a_note_in_plain_words(ab, data, tmp_path):
    """TELEMAC's own malpasset geometry ends with one extra byte (partel ignores it): said
    once, as a note a user does not take for a problem; a torn frame stays a warning."""
    r = ab("partition", data / "geo_malpasset-small.slf", "--cli", data / "geo_malpasset-small.cli", "-n", 2, "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "extra byte" in line]
    assert len(notes) == 1 and "anabranch partition: note: " in notes[0] and "trailing newline" in notes[0], r.stderr
    assert "warning" not in r.stderr
    torn = tmp_path / "torn.slf"
    torn.write_bytes((data / "r2d_gouttedo.slf").read_bytes()[:-10])
    r = ab("partition", torn, "-n", 2, "-o", tmp_path / "t")
    assert r.returncode == 0 and "anabranch partition: warning: " in r.stderr and "incomplete" in r.stderr, r.stderr


def read_sections(path):
    """A partitioned sections file: {name: [(local a, local b), ...]}."""
    lines = path.read_text().splitlines()[1:]
    nsec = int(lines[0].split()[0])
    out, i = {}, 1
    for _ in range(nsec):
        name, n = lines[i].strip(), int(lines[i + 1])
        out[name] = [tuple(int(x) for x in lines[i + 2 + k].split()) for k in range(n)]
        i += 2 + n
    return out


@pytest.mark.parametrize("nparts", [2, 3, 5])
def test_section_segments_on_part_boundaries_go_to_the_highest_common_part(ab, tmp_path, nparts):
    """partel v8's rule (mod_handle_sections) for a segment whose two ends are both held by
    several parts (a section running along part boundaries): the highest-numbered part
    holding both ends; and every segment is given to exactly one part. Sections between
    interface nodes, so that the rule decides."""
    assert ab("generate", "-n", 3000, "-o", tmp_path / "m.slf").returncode == 0
    assert ab("partition", tmp_path / "m.slf", "--cli", tmp_path / "m.cli", "-n", nparts, "-o", tmp_path / "plain").returncode == 0
    knolg = [read(tmp_path / "plain" / f"m.slf{nparts - 1:05d}-{p:05d}").ipobo for p in range(nparts)]
    holders = collections.defaultdict(list)
    for p, k in enumerate(knolg):
        for g in k:
            holders[int(g)].append(p)
    shared = sorted(g for g, ps in holders.items() if len(ps) > 1)
    assert len(shared) > 20
    m = read(tmp_path / "m.slf")
    # Sections along the boundaries between parts: mesh edges whose two ends are both held by
    # several parts (a section from one end of an edge to the other is that one segment).
    edges = sorted({tuple(sorted((int(e[i]), int(e[(i + 1) % 3])))) for e in m.ikle for i in range(3)})
    along = [(a, b) for a, b in edges if len(holders[a]) > 1 and len(holders[b]) > 1]
    pairs = along[::max(1, len(along) // 40)]
    text = f"# sections along part boundaries\n{len(pairs)} -1\n" + "".join(f"S{i}\n{a} {b}\n" for i, (a, b) in enumerate(pairs))
    (tmp_path / "sec.txt").write_text(text)
    r = ab("partition", tmp_path / "m.slf", "--cli", tmp_path / "m.cli", "-n", nparts, "--sections", tmp_path / "sec.txt",
           "-o", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    given = collections.defaultdict(list)  # global segment -> parts it was given to
    for p in range(nparts):
        for name, segs in read_sections(tmp_path / "p" / f"sec.txt{nparts - 1:05d}-{p:05d}").items():
            for a, b in segs:
                given[(name, int(knolg[p][a - 1]), int(knolg[p][b - 1]))].append(p)
    decided = 0
    for (name, a, b), parts in given.items():
        common = set(holders[a]) & set(holders[b])
        assert parts == [max(common)], (name, a, b, parts, sorted(common))
        decided += len(common) > 1
    assert decided >= 5, "no segment had two parts to choose from: the test checks nothing"


def test_a_3d_file_split_on_its_2d_geometrys_parts_is_its_own_partition(ab, data, tmp_path):
    """TELEMAC-3D's previous computation (3D) split on the parts of T3DGEO (2D), as the
    runner asks partel: each part is the 2D part extruded to the file's planes, byte for
    byte the parts of partitioning the 3D file itself (the same METIS partition of the
    base), frames included."""
    assert ab("partition", data / "geo_gouttedo.slf", "-n", 3, "-o", tmp_path / "geo").returncode == 0
    r = ab("split", data / "r3d_gouttedo.slf", "--plan", tmp_path / "geo" / "geo_gouttedo.slf", "-o", tmp_path / "split")
    assert r.returncode == 0, r.stderr
    assert ab("partition", data / "r3d_gouttedo.slf", "-n", 3, "-o", tmp_path / "own").returncode == 0
    for p in range(3):
        name = f"r3d_gouttedo.slf00002-0000{p}"
        assert (tmp_path / "split" / name).read_bytes() == (tmp_path / "own" / name).read_bytes(), name
