#!/usr/bin/env python3
"""Partition ladder: TELEMAC's malpasset mesh refined level by level (`anabranch refine`),
then partitioned into P = ceil(elements / 10,000) parts (the TELEMAC paper's rule) with METIS and
the Hilbert curve, in the per-rank and the concatenated layouts; METIS_PartMeshDual alone on
the same mesh as the floor; and P = 16 vs 4096 on level 4 (memory must not grow with P).

Prints a table (level, P, method, layout, seconds, peak RSS, files) and writes JSON.
Usage: bench/partition.py [--levels 3 4 5 6] [--work DIR] [--json OUT] [--quick]
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))
METIS_ALONE = BUILD / "bench/bench_metis_alone"
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", HERE.parents[1] / "shared/data/telemac"))


def run_json(*args):
    out = subprocess.run([AB, "-q", *map(str, args), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--levels", type=int, nargs="+", default=[3, 4, 5])
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true", help="level 1 only, small P (the test suite runs this)")
    a = p.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    levels = [1] if a.quick else a.levels
    if (DATA / "geo_malpasset-small.slf").exists():
        base, base_cli = DATA / "geo_malpasset-small.slf", DATA / "geo_malpasset-small.cli"
    else:
        base, base_cli = work / "base.slf", work / "base.cli"
        run_json("generate", "-n", 26000, "-o", base)
    rows = []
    header = f"{'level':>5} {'elements':>12} {'P':>6} {'method':>12} {'layout':>8} {'seconds':>8} {'peak RSS':>10} {'files':>6}"
    print(header)
    print("-" * len(header))

    def show(level, nelem, parts, method, layout, secs, rss, files):
        rows.append(dict(level=level, nelem=nelem, parts=parts, method=method, layout=layout, seconds=secs, peak_rss_bytes=rss,
                         files=files))
        print(f"{level:>5} {nelem:>12,} {parts:>6} {method:>12} {layout:>8} {secs:>8.2f} {rss / 2**20:>7.0f} MiB {files:>6}",
              flush=True)

    for level in levels:
        mesh = work / f"l{level}.slf"
        r = run_json("refine", base, "--cli", base_cli, "--levels", level, "-o", mesh)
        nelem = r["nelem"]
        parts = 10 if a.quick else max(2, -(-nelem // 10000))  # ceil, as in the TELEMAC paper
        if METIS_ALONE.exists():
            m = json.loads(subprocess.run([str(METIS_ALONE), str(mesh), str(parts)], check=True, capture_output=True,
                                          text=True).stdout)
            show(level, nelem, parts, "METIS alone", "-", m["seconds"], m["peak_rss_bytes"], 0)
        for method in ("metis", "sfc"):
            for layout in ("telemac", "concat"):
                if layout == "concat" and method == "sfc" and not a.quick:
                    continue
                out = work / "parts"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                j = run_json("partition", mesh, "--cli", mesh.with_suffix(".cli"), "-n", parts, "--method", method,
                             "--layout", layout, "-o", out)
                show(level, nelem, parts, method, layout, j["seconds"], j["peak_rss_bytes"], j["files"])
                shutil.rmtree(out)
        if level == 4 and not a.quick:
            for parts in (16, 4096):
                out = work / "parts"
                out.mkdir(exist_ok=True)
                j = run_json("partition", mesh, "--cli", mesh.with_suffix(".cli"), "-n", parts, "-o", out)
                show(level, nelem, parts, "metis", "telemac", j["seconds"], j["peak_rss_bytes"], j["files"])
                shutil.rmtree(out)
        mesh.unlink()
        mesh.with_suffix(".cli").unlink()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
