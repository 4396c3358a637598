"""The Python distribution as a user gets it: `python -m build` makes an sdist and, from that
sdist unpacked, a wheel (no build isolation: the build tools, scikit-build-core and nanobind, come
from the test environment); the wheel is installed into a fresh virtual environment (which
sees the test environment's numpy, mpi4py, matplotlib and pytest through a .pth file). The
installed package then reads, writes and converts, its `anabranch` command (and `python -m
anabranch`) runs the commands with the executable's output and exit status, bench-plot runs
with the package's interpreter whatever python3 comes first on PATH, the version is CMake's
everywhere, and the package tests (tests/python/test_package.py) pass against the installed
package. Usage: python_install.py SOURCE_DIR WORK_DIR"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile

src, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
cmake_version = re.search(r"project\(anabranch VERSION ([0-9.]+)", (src / "CMakeLists.txt").read_text()).group(1)

# The sdist, then the wheel built from the unpacked sdist (as `python -m build` does, but in
# a known folder: the test suite's compiler cache then finds the objects the build tree made).
dist = work / "dist"
env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(dist), str(src)], check=True,
               cwd=work, env=env, stdout=subprocess.DEVNULL)
sdists = sorted(dist.glob("*.tar.gz"))
assert [s.name for s in sdists] == [f"anabranch-{cmake_version}.tar.gz"], sdists
with tarfile.open(sdists[0]) as tar:
    names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    tar.extractall(work / "sdist")
unpacked = work / "sdist" / f"anabranch-{cmake_version}"
# Built one folder down, as the build tree is (the cache keys on paths relative to the build).
subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "-Cbuild-dir=build-wheel", "--outdir", str(dist),
                str(unpacked)], check=True,
               cwd=work, env=env, stdout=subprocess.DEVNULL)
wheels = sorted(dist.glob("*.whl"))
assert len(wheels) == 1 and wheels[0].name.startswith(f"anabranch-{cmake_version}-"), wheels
print(f"python_install: python -m build made {sdists[0].name} ({len(names)} files) and {wheels[0].name} from it")

venv = work / "venv"
subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
py = venv / "bin/python"
site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True,
                      check=True).stdout.strip()
pathlib.Path(site, "test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--prefix", str(venv), str(wheels[0])], check=True)
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
assert anabranch.diff(out / "t.slf", out / "t.h5")["identical"]
print("python_install: the installed package reads, writes and converts")
"""
subprocess.run([py, "-c", check, site, str(work)], check=True)

# The command, from the environment's bin, with a PATH whose first python3 is not one at all.
fake = work / "fakebin"
fake.mkdir()
(fake / "python3").write_text("#!/bin/sh\necho 'the python3 on PATH ran' >&2\nexit 3\n")
(fake / "python3").chmod(0o755)
env = dict(os.environ, PATH=f"{fake}:/usr/bin:/bin", ANABRANCH_PROGRESS="0")
env.pop("PYTHON", None)
env.pop("PYTHONPATH", None)
exe = venv / "bin/anabranch"


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=work, timeout=300)


# One version: CMake's project(), the command, the package and its metadata.
r = run(exe, "--version")
assert r.returncode == 0 and r.stdout.split() == ["anabranch", cmake_version], (r, cmake_version)
r = run(py, "-c", "import anabranch, importlib.metadata as m; print(anabranch.__version__, m.version('anabranch'))")
assert r.returncode == 0 and r.stdout.split() == [cmake_version, cmake_version], (r, cmake_version)
assert (src / "CHANGELOG.md").read_text().splitlines()[2].startswith(f"## {cmake_version}"), "CHANGELOG.md starts elsewhere"
r = run(exe, "info", work / "t.slf")
assert r.returncode == 0 and "t.slf" in r.stdout, r
r = run(py, "-m", "anabranch", "diff", work / "t.slf", work / "t.h5")
assert r.returncode == 0 and r.stdout.splitlines()[-1].startswith("identical"), r
r = run(exe, "diff", work / "t.slf", work / "missing.slf")
assert r.returncode == 2 and r.stderr.strip().splitlines() == [r.stderr.strip()] and "missing.slf" in r.stderr, r
r = run(exe, "nocommand")
assert r.returncode == 2 and "unknown command" in r.stderr, r
r = run(exe, "generate", "-o", work / "g.slf", "-n", "2000", "--frames", "2")
assert r.returncode == 0, r
r = run(exe, "-q", "bench", "--mesh", work / "g.slf", "--frames", "1", "--repeat", "1", "--strategies", "aggregated", "--dir", work,
        "-o", work / "b.json")
assert r.returncode == 0, r
r = run(exe, "bench-plot", work / "b.json", "-o", work / "b.png")
assert r.returncode == 0 and (work / "b.png").stat().st_size > 1000, r
print("python_install: the installed `anabranch` command runs the commands, bench-plot with the package's Python")

# The package tests against the installed package (tests/python for their helpers only).
env = dict(os.environ, PYTHONPATH=str(src / "tests/python"), ANABRANCH_EXE=str(exe), ANABRANCH_PROGRESS="0")
r = subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(src / "tests/python/test_package.py"),
                    "--basetemp", str(work / "pytest")], env=env, cwd=work, capture_output=True, text=True, timeout=900)
print(r.stdout[-2000:], r.stderr[-2000:])
assert r.returncode == 0, "the package tests failed against the installed package"
r = subprocess.run([py, "-c", "import anabranch; print(anabranch.__file__)"], env=env, capture_output=True, text=True)
assert r.stdout.startswith(site), r
shutil.rmtree(work)
