"""`pip install .` from the source tree (no build isolation: the test environment has
scikit-build-core and nanobind) into a fresh target folder; the installed package imports
from there, reads and writes. Usage: python_install.py SOURCE_DIR WORK_DIR"""
import os
import pathlib
import shutil
import subprocess
import sys

src, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
target = work / "site"
subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target", str(target),
                "--config-settings=build-dir=" + str(work / "build"), str(src)], check=True)
check = r"""
import pathlib, sys, numpy as np
import anabranch
assert pathlib.Path(anabranch.__file__).parent == pathlib.Path(sys.argv[1]) / "anabranch", anabranch.__file__
mesh = {"ikle": np.array([[1, 2, 3], [2, 4, 3]]), "x": np.array([0., 1., 0., 1.]), "y": np.array([0., 0., 1., 1.])}
out = pathlib.Path(sys.argv[2])
anabranch.write(out / "t.slf", mesh, [("H", "M")], [(0.0, {"H": np.arange(4.0)}), (1.0, {"H": np.arange(4.0) * 2})])
anabranch.convert(out / "t.slf", out / "t.h5")
ds = anabranch.read(out / "t.h5")
assert len(ds.frames) == 2 and list(ds.frames[1]["H"]) == [0, 2, 4, 6], ds
print("python_install: the installed package reads, writes and converts")
"""
env = dict(os.environ, PYTHONPATH=str(target))
subprocess.run([sys.executable, "-c", check, str(target), str(work)], check=True, env=env)
shutil.rmtree(work)
