#!/usr/bin/env python3
"""Foundation benchmarks (SERAFIN, info, refine). Standard library only.

1. `info` on a multi-GB result file: header and frame index only.
2. Reading every frame (`info --check`) against `cat FILE > /dev/null`, same file, same run,
   best of 3 each, with the page cache warm, then cold (dropped before each run; needs root).
3. `refine` of TELEMAC's malpasset mesh (26,000 triangles) to 26.6M elements (5 levels):
   time, share of writing, peak memory against the size of the output mesh arrays.

Usage: bench/foundation.py [--work DIR] [--quick] [--json OUT]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
AB = os.environ.get("ANABRANCH", str(HERE.parent / "build/src/cli/anabranch"))
DATA = pathlib.Path(os.environ.get("AB_TELEMAC_DATA", HERE.parents[1] / "shared/data/telemac"))


def run(*args, **kw):
    return subprocess.run([AB, "-q", *map(str, args)], check=True, capture_output=True, text=True, **kw)


def drop_caches():
    """Empties the page cache (root only); False when not allowed."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def timed(fn, repeat=1, before=lambda: None):
    best = float("inf")
    for _ in range(repeat):
        before()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", default="bench-work")
    p.add_argument("--quick", action="store_true", help="small sizes (the test suite runs this)")
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    n, frames, levels = (20000, 3, 1) if a.quick else (6650000, 40, 5)
    res = {"machine": {"cores": os.cpu_count(), "uname": " ".join(os.uname())}}

    big = work / "big.slf"
    run("generate", "-n", n, "--vars", 4, "--frames", frames, "-o", big)
    size = big.stat().st_size
    t_info = timed(lambda: run("info", big), repeat=3)
    res["info"] = {"bytes": size, "seconds": t_info}
    print(f"info: {size / 1e9:.2f} GB file, {t_info * 1000:.1f} ms")

    def cat():
        with open(big, "rb") as f, open(os.devnull, "wb") as null:
            subprocess.run(["cat"], stdin=f, stdout=null, check=True)

    def read():
        run("info", "--check", big)

    cat()
    for state in ("warm", "cold"):
        if state == "cold" and a.quick:
            continue
        if state == "cold" and not drop_caches():
            print("read all frames, cold cache: skipped (cannot drop the page cache; run as root)")
            continue
        prep = drop_caches if state == "cold" else (lambda: None)
        t_cat = timed(cat, repeat=3, before=prep)
        t_read = timed(read, repeat=3, before=prep)
        res[f"read_{state}"] = {"bytes": size, "cat_seconds": t_cat, "read_seconds": t_read, "ratio": t_cat / t_read}
        print(f"read all frames, {state} cache: cat {t_cat:.3f} s ({size / t_cat / 1e6:.0f} MB/s), anabranch {t_read:.3f} s "
              f"({size / t_read / 1e6:.0f} MB/s): {100 * t_cat / t_read:.0f}% of cat")
    big.unlink()
    big.with_suffix(".cli").unlink()

    if (DATA / "geo_malpasset-small.slf").exists():
        src, cli = DATA / "geo_malpasset-small.slf", DATA / "geo_malpasset-small.cli"
    else:
        src, cli = work / "base.slf", work / "base.cli"
        run("generate", "-n", 26000, "-o", src)
    out = work / "refined.slf"
    j = json.loads(run("refine", src, "--cli", cli, "--levels", levels, "-o", out, "--json").stdout)
    res["refine"] = j
    print(f"refine: {j['nelem']:,} elements, {j['npoin']:,} nodes in {j['seconds']:.2f} s (mesh {j['seconds_mesh']:.2f} s, "
          f"writing {j['seconds_write']:.2f} s, {j['bytes'] / 1e6:.0f} MB); peak RSS {j['peak_rss_bytes'] / 2**20:.0f} MiB "
          f"= {j['peak_rss_bytes'] / j['output_mesh_array_bytes']:.2f} x the output mesh arrays "
          f"({j['output_mesh_array_bytes'] / 2**20:.0f} MiB)")
    out.unlink()
    out.with_suffix(".cli").unlink()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
