"""Plot `anabranch bench` results: write (or, with --metric read_mbs_median, read) bandwidth
of each strategy against the rank count.

    anabranch bench-plot results-2.json results-4.json ... -o bench.png
    python3 -m anabranch.bench_plot results*.json -o bench.png

Each JSON file is one `anabranch bench -o FILE` run (one rank count); the raw disk rate of
each run is drawn as the ceiling, and for writes the file system's own rate for one shared
file (plain pwrite by every rank, no library), the ceiling of the one-file strategies.
"""
import argparse
import json
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", help="JSON files written by `anabranch bench -o`")
    p.add_argument("-o", "--output", default="bench.png")
    p.add_argument("--metric", default="to_disk_mbs_median", choices=["write_mbs_median", "to_disk_mbs_median", "read_mbs_median"])
    a = p.parse_args(argv)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(f"anabranch bench-plot: error: matplotlib is missing for {sys.executable} (pip install matplotlib)")
    runs = []
    for path in a.results:
        try:
            with open(path) as f:
                run = json.load(f)
            run["config"]["ranks"], run["results"], run["raw_disk_mbs"]  # noqa: B018 (what the plot needs)
        except OSError as e:
            sys.exit(f"anabranch bench-plot: error: cannot read {path}: {e.strerror}")
        except json.JSONDecodeError as e:
            sys.exit(f"anabranch bench-plot: error: {path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})")
        except (KeyError, TypeError) as e:
            sys.exit(f"anabranch bench-plot: error: {path}: not `anabranch bench -o` results (no {e})")
        runs.append(run)
    runs.sort(key=lambda r: r["config"]["ranks"])
    ranks = [r["config"]["ranks"] for r in runs]
    reading = a.metric == "read_mbs_median"
    if reading and not all("read" in r for r in runs):
        sys.exit("anabranch bench-plot: error: --metric read_mbs_median needs results of `anabranch bench --read`")

    def label(x):  # a write strategy, or a read strategy with its file and decomposition
        if not reading:
            return x["strategy"]
        other = "" if x["decomposition"] == "the writer's" else ", another decomposition"
        return f"{x['strategy']} ({x['file']}{other})"

    def results(r):
        return r["read"]["results"] if reading else r["results"]

    labels = []
    for r in runs:
        for x in results(r):
            if label(x) not in labels:
                labels.append(label(x))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in labels:
        ys = [next((x[a.metric] for x in results(r) if label(x) == s), float("nan")) for r in runs]
        ax.plot(ranks, ys, marker="o", label=s)
    if reading:
        ax.plot(ranks, [r["read"]["raw_read_mbs"] for r in runs], "k:", label="plain pread of the same bytes (ceiling)")
    else:
        ax.plot(ranks, [r["raw_disk_mbs"] for r in runs], "k--", label="raw disk (dd, fdatasync)")
    raw_key = {"write_mbs_median": "write_mbs", "to_disk_mbs_median": "to_disk_mbs"}.get(a.metric)
    if raw_key and all("raw_shared_file" in r for r in runs):
        ax.plot(ranks, [r["raw_shared_file"][raw_key] for r in runs], "k:", label="one shared file, plain pwrite (ceiling)")
    cfg = runs[0]["config"]
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel({"write_mbs_median": "write", "to_disk_mbs_median": "write + sync", "read_mbs_median": "read"}[a.metric] + " MB/s")
    ax.set_title(f"anabranch bench: {cfg['npoin']:,} nodes, {cfg['vars']} variables, {cfg['frames']} frames")
    ax.set_xticks(ranks)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.output, dpi=120)
    print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
