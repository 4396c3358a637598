#!/usr/bin/env bash
# Installs the Debian packages anabranch needs when they are missing (run as root on a
# fresh Debian machine), then configures and builds into build/.
#   scripts/setup.sh          build dependencies + build
#   scripts/setup.sh --test   also the test tools (clang for the sanitizer/fuzz build, MPICH
#                             and its parallel HDF5 for the MPICH tests, ParaView's Python module for the
#                             VTKHDF/XDMF/VTU reading test, MkDocs for the documentation site, a Python virtual environment
#                             with pytest, h5py, hdf5plugin, xarray-selafin, mpi4py, nanobind, scikit-build-core and build)
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

pkgs=(build-essential cmake ninja-build pkg-config openmpi-bin libopenmpi-dev libmetis-dev libscotch-dev libptscotch-dev
      libhdf5-openmpi-dev zlib1g-dev libzstd-dev libcli11-dev nlohmann-json3-dev libgtest-dev gfortran libcgns-dev)
if (( want_test )); then
  pkgs+=(clang libclang-rt-14-dev mpich libmpich-dev libhdf5-mpich-dev python3-paraview mkdocs strace ccache cgns-convert hdf5-tools)
  python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3-venv)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if (( want_test )) && ! build/venv/bin/python -c 'import pytest, nanobind, mpi4py, h5py, hdf5plugin, build.env, hypothesis, universalmutator' 2>/dev/null; then
  echo "setup: creating the test virtual environment build/venv" >&2
  mkdir -p build
  [[ -x build/venv/bin/python ]] || python3 -m venv build/venv
  build/venv/bin/pip install -q --disable-pip-version-check numpy pytest xarray-selafin python-serafin h5py hdf5plugin matplotlib \
    mpi4py nanobind scikit-build-core build hypothesis universalmutator
fi

# The independent Tecplot readers (the suite's oracles for .plt files): both import as
# "tecio", so each has an environment of its own.
if (( want_test )); then
  for reader in tecio==2.0.6 tecio-python==0.4.0; do
    env_dir=build/venv-${reader%%==*}
    "$env_dir/bin/python" -c 'import tecio, numpy' 2>/dev/null && continue
    echo "setup: creating $env_dir (the $reader reader)" >&2
    python3 -m venv "$env_dir"
    "$env_dir/bin/pip" install -q --disable-pip-version-check numpy "$reader"
  done
fi

extra=()
# With the test environment, its Python (with nanobind) builds the Python package too.
(( want_test )) && extra+=(-DAB_TEST_PYTHON="$PWD/build/venv/bin/python" -DPython_EXECUTABLE="$PWD/build/venv/bin/python")
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
# Two compile jobs more than the cores: one waiting on the disk leaves no core idle, and on
# a machine busy with other work the build keeps its share of the cores.
cmake --build build -j "$(($(nproc) + 2))"
