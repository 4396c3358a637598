"""The `anabranch` command of the Python package (`pip install .`), and `python -m anabranch`:
the same commands, options, output and exit status as the executable, run in this process.

    anabranch info run.slf
    python -m anabranch partition mesh.slf --cli mesh.cli -n 64
"""
import os
import sys


def main(argv=None):
    from anabranch import _core

    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    # bench-plot: the plotting script of this package, run by this interpreter (whatever
    # python3 comes first on PATH).
    os.environ.setdefault("ANABRANCH_BENCH_PLOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_plot.py"))
    os.environ.setdefault("PYTHON", sys.executable)
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.main(["anabranch", *args])


if __name__ == "__main__":
    sys.exit(main())
