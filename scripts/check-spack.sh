#!/usr/bin/env bash
# Checks the Spack package in packaging/spack against a Spack checkout, on a Debian machine
# with the libraries scripts/setup.sh installs. It is a manual check, not part of CI.
#
#   scripts/check-spack.sh SPACK_ROOT [SPACK_PACKAGES_REPO]
#
# SPACK_ROOT           a Spack v1.x checkout (tested with v1.1.0).
# SPACK_PACKAGES_REPO  (argument or environment) a checkout of spack/spack-packages, the
#                      builtin packages that Spack v1.x keeps in their own repository; needed
#                      when Spack cannot clone it itself (no network), e.g. the branch that
#                      SPACK_ROOT/etc/spack/defaults/base/repos.yaml names.
#
# What it does, all of it in a scratch folder (CHECK_SPACK_DIR, or a new one under
# ${TMPDIR:-/tmp}, removed after a pass unless CHECK_SPACK_KEEP=1); nothing goes to ~/.spack:
#   1. a Python virtual environment with clingo from PyPI runs Spack (SPACK_PYTHON), with
#      bootstrapping disabled (Spack's bootstrap binaries come from GitHub);
#   2. a second virtual environment (Debian's python3, nanobind and numpy from PyPI) is the
#      external python, py-nanobind and py-numpy;
#   3. a Spack environment with packaging/spack as a repository, this machine's Debian packages
#      as externals (buildable: false: gcc/gfortran, cmake, gmake, pkgconf, HDF5 for Open MPI,
#      zlib and the python found by `spack external find`; Open MPI, METIS, SCOTCH/PT-Scotch,
#      CLI11, nlohmann-json and CGNS written with their Debian versions), and
#      anabranch@develop <ANABRANCH_VARIANTS> developed from a copy of this working tree
#      (tracked and untracked, not ignored, files: the checkout itself is left alone);
#   4. spack install, then with the installed prefix: the demo's first steps (generate a
#      400,000-triangle mesh, info, partition with METIS, SCOTCH and PT-Scotch), a consumer built
#      with pkg-config (mpicc/mpif90) and one with find_package(anabranch)
#      (tests/consumer/CMakeLists.txt), each run on 2 ranks with the same bytes out, the
#      demo's solver run on 4 ranks, HDF5 and CGNS round trips and the Python package through
#      `spack load`, as the variants allow;
#   5. a summary; the exit status is non-zero when anything failed.
#
# ANABRANCH_VARIANTS  the variants to install, after anabranch@develop (default "+python
#                     +cgns": with the default-on hdf5, fortran and scotch, every variant on;
#                     ANABRANCH_VARIANTS="" checks the defaults).
# CHECK_SPACK_JOBS    build jobs (default: nproc). CHECK_SPACK_NICE: niceness of the build (10).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
[[ $# -ge 1 && $1 != -h && $1 != --help ]] || { usage; exit 2; }
start=$(date +%s)
spack_root=$(cd "$1" && pwd)
packages_repo=${2:-${SPACK_PACKAGES_REPO:-}}
[[ -z $packages_repo ]] || packages_repo=$(cd "$packages_repo" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
variants=${ANABRANCH_VARIANTS-+python +cgns}
jobs=${CHECK_SPACK_JOBS:-$(nproc)}
[[ -x $spack_root/bin/spack ]] || { echo "check-spack: $spack_root/bin/spack not found" >&2; exit 2; }

if [[ -n ${CHECK_SPACK_DIR:-} ]]; then
  work=$CHECK_SPACK_DIR keep=1
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
  # Only an empty folder or one this script made: parts of it are removed below.
  if [[ -n $(ls -A "$work") && ! -e $work/.check-spack ]]; then
    echo "check-spack: CHECK_SPACK_DIR=$work is neither empty nor a folder of this check" >&2
    exit 2
  fi
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/check-spack.XXXXXX") keep=${CHECK_SPACK_KEEP:-0}
fi
touch "$work/.check-spack"
logs=$work/logs
# A folder used before keeps only its Python virtual environments: the rest is made anew
# (an anabranch already installed there would not be built again).
rm -rf "$logs" "$work/src" "$work/env" "$work/opt" "$work/stage" "$work/run" "$work/source-cache" \
  "$work/user-config" "$work/user-cache"
mkdir -p "$logs"
echo "check-spack: working in $work (logs in $logs)"

# Spack reads and writes nothing of the user's: its configuration and caches are the scratch's.
unset SPACK_ENV SPACK_ROOT
export SPACK_USER_CONFIG_PATH=$work/user-config SPACK_USER_CACHE_PATH=$work/user-cache
export SPACK_DISABLE_LOCAL_CONFIG=1
mkdir -p "$SPACK_USER_CONFIG_PATH"

results=()
failed=0
note() { results+=("$1"); }
die() {
  echo "check-spack: FAILED: $*" >&2
  note "FAIL  $*"
  summary
  exit 1
}
# step NAME CMD...: runs CMD with its output in logs/NAME.log and sets step_rc; a failure is
# recorded, shown (the log's tail) and counted, and the later steps still run. It is called
# as a plain command, never in a condition, so that set -e holds in the functions it runs;
# `must MESSAGE` after it stops the check when the step failed.
step() {
  local name=$1 log=$logs/$1.log t0=$SECONDS
  shift
  printf 'check-spack: %-28s ' "$name"
  set +e
  (set -e; "$@") >"$log" 2>&1
  step_rc=$?
  set -e
  if (( step_rc == 0 )); then
    echo "ok ($((SECONDS - t0)) s)"
    note "PASS  $name"
  else
    echo "FAILED ($((SECONDS - t0)) s), $log:"
    tail -n 25 "$log" | sed 's/^/    | /'
    note "FAIL  $name  ($log)"
    failed=$((failed + 1))
  fi
}
must() { (( step_rc == 0 )) || die "$@"; }
summary() {
  echo
  echo "==== check-spack summary ===="
  echo "spack           ${spack_version:-?} at $spack_root"
  [[ -z $packages_repo ]] || echo "spack-packages  $(git -C "$packages_repo" rev-parse HEAD 2>/dev/null || echo '?') at $packages_repo"
  echo "anabranch       ${source_rev:-?} (working tree of $here)"
  echo "spec            ${concrete:-not concretized}"
  echo "prefix          ${prefix:-not installed}"
  echo "scratch         $work"
  local r
  for r in "${results[@]}"; do echo "  $r"; done
  echo "time            $(($(date +%s) - start)) s"
}

# -- The Debian packages the externals come from ------------------------------------------
debs=(gcc g++ gfortran cmake make pkgconf openmpi-bin libopenmpi-dev libmetis-dev libscotch-dev libptscotch-dev
      libhdf5-openmpi-dev zlib1g-dev libzstd-dev zstd libcli11-dev nlohmann-json3-dev libcgns-dev python3-dev python3-venv)
missing=()
for p in "${debs[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done
(( ${#missing[@]} == 0 )) || die "Debian packages missing: apt-get install ${missing[*]}"
# A Debian version as Spack writes it: 1:5.1.0.dfsg-7 -> 5.1.0
deb_version() { dpkg-query -W -f='${Version}' "$1" | sed -E 's/^[0-9]+://; s/[-+~].*$//; s/\.dfsg.*$//'; }
# HDF5 is found through h5pcc (FindHDF5): Debian's alternative must be Open MPI's.
h5pcc=$(readlink -f "$(command -v h5pcc || true)" 2>/dev/null || true)
[[ $h5pcc == *openmpi* ]] || die "h5pcc is '${h5pcc:-missing}', not Open MPI's (update-alternatives --config h5pcc)"
py=/usr/bin/python3
[[ -x $py ]] || py=$(command -v python3)

# -- 1. Spack's own Python, with clingo from PyPI -------------------------------------------
if [[ ! -x $work/spack-python/bin/python ]] || ! "$work/spack-python/bin/python" -c 'import clingo' 2>/dev/null; then
  step spack-python bash -c "'$py' -m venv '$work/spack-python' && '$work/spack-python/bin/pip' install -q --disable-pip-version-check clingo"
  must "a Python with clingo for Spack"
fi
export SPACK_PYTHON=$work/spack-python/bin/python
spack=("$spack_root/bin/spack")
spack_version=$("${spack[@]}" --version)
[[ ${spack_version%%.*} -ge 1 ]] || die "Spack $spack_version: this check needs Spack v1.x"
cat > "$SPACK_USER_CONFIG_PATH/bootstrap.yaml" <<'EOF'
bootstrap:
  enable: false
EOF

# -- 2. The external Python, with nanobind and numpy ----------------------------------------
if [[ $variants == *+python* ]]; then
  if [[ ! -x $work/python/bin/python ]] || ! "$work/python/bin/python" -c 'import nanobind, numpy' 2>/dev/null; then
    step python-venv bash -c "'$py' -m venv '$work/python' && '$work/python/bin/pip' install -q --disable-pip-version-check nanobind numpy"
    must "a Python with nanobind and numpy"
  fi
fi

# -- 3. The Spack environment ---------------------------------------------------------------
mkdir -p "$work/src" "$work/env"
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
  source_rev=$(git -C "$here" describe --always --dirty --abbrev=12)
  (cd "$here" && git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
     if [[ -e $f || -L $f ]]; then printf '%s\0' "$f"; fi; done | tar --null -T - -cf -) | tar -C "$work/src" -xf -
else
  source_rev="not a git checkout"
  tar -C "$here" --exclude='./build*' --exclude='./demo' -cf - . | tar -C "$work/src" -xf -
fi

{
  echo "spack:"
  echo "  specs:"
  echo "  - anabranch@develop $variants"
  echo "  view: false"
  echo "  concretizer:"
  echo "    unify: true"
  echo "    reuse: false"
  echo "  config:"
  echo "    install_tree:"
  echo "      root: $work/opt"
  echo "    build_stage:"
  echo "    - $work/stage"
  echo "    source_cache: $work/source-cache"
  echo "    build_jobs: $jobs"
  echo "  repos:"
  echo "    anabranch: $work/src/packaging/spack"
  if [[ -n $packages_repo ]]; then
    echo "    builtin:"
    echo "      destination: $packages_repo"
  fi
  echo "  packages:"
  ext() {  # ext NAME SPEC PREFIX: an external that Spack does not detect
    printf '    %s:\n      externals:\n      - spec: "%s"\n        prefix: %s\n      buildable: false\n' "$1" "$2" "$3"
  }
  # Open MPI: spack-packages' detection of it fails where a compiler on PATH is not yet in
  # the configuration (clang here), so it is written; mpi: only this external.
  ext openmpi "openmpi@$(deb_version libopenmpi-dev)+fortran~cuda~rocm~wrapper-rpath" /usr
  printf '    mpi:\n      buildable: false\n'
  ext metis "metis@$(deb_version libmetis-dev)~int64~real64+shared" /usr
  ext scotch "scotch@$(deb_version libscotch-dev)+mpi~int64~metis~esmumps+shared" /usr
  ext cli11 "cli11@$(deb_version libcli11-dev)" /usr
  ext nlohmann-json "nlohmann-json@$(deb_version nlohmann-json3-dev)" /usr
  ext cgns "cgns@$(deb_version libcgns-dev)~mpi~fortran+hdf5" /usr
  if [[ -x $work/python/bin/python ]]; then
    nb=$("$work/python/bin/python" -c 'import nanobind; print(nanobind.__version__)')
    np=$("$work/python/bin/python" -c 'import numpy; print(numpy.__version__)')
    ext py-nanobind "py-nanobind@$nb %python" "$work/python"
    ext py-numpy "py-numpy@$np %python" "$work/python"
  fi
} > "$work/env/spack.yaml"
senv=("${spack[@]}" -e "$work/env")

repos() {
  local list
  list=$("${senv[@]}" repo list)
  echo "$list"
  [[ $list =~ \[\+\]\ +anabranch ]] && [[ $list =~ \[\+\]\ +builtin ]]
}
step repos repos
must "Spack's package repositories (Spack v1.x without network: give SPACK_PACKAGES_REPO)"
detect() {
  "${senv[@]}" external find --not-buildable gcc
  "${senv[@]}" external find --not-buildable cmake gmake pkgconf hdf5 zlib zstd
  if [[ -x $work/python/bin/python ]]; then
    "${senv[@]}" external find --not-buildable -p "$work/python/bin" python
  fi
  # What was found must be this machine's: the compilers, Open MPI and a parallel HDF5.
  cat "$work/env/spack.yaml"
  grep -qE "spec: gcc@.*languages.*fortran" "$work/env/spack.yaml"
  grep -qE "spec: openmpi@" "$work/env/spack.yaml"
  grep -qE "spec: hdf5@.*\+mpi" "$work/env/spack.yaml"
  if grep -q "error detecting" "$logs/externals.log"; then return 1; fi
}
step externals detect
must "spack external find"
step develop "${senv[@]}" develop --no-clone --path "$work/src" anabranch@=develop
must "spack develop"
step concretize "${senv[@]}" concretize --force
must "spack concretize"
concrete=$(grep -m1 -o 'anabranch@develop[^ ]*' "$logs/concretize.log" || true)
sed -n '/Concretized/,$p' "$logs/concretize.log"
step install nice -n "${CHECK_SPACK_NICE:-10}" "${senv[@]}" install --fail-fast
must "spack install"
prefix=$("${senv[@]}" location -i anabranch)
mpi_prefix=$("${senv[@]}" location -i mpi)
has() { [[ " $concrete " == *"+$1"* ]]; }

# -- 4. The installed package ---------------------------------------------------------------
if [[ $(id -u) == 0 ]]; then  # Open MPI refuses root unless told
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1  # 4 ranks on few cores
mpiexec=("timeout" "300" "$mpi_prefix/bin/mpiexec")
ab=$prefix/bin/anabranch
run=$work/run
mkdir -p "$run"
cd "$run"

check_files() {
  local f files=(bin/anabranch lib/libanabranch_c.so include/anabranch/anabranch.h lib/cmake/anabranch/anabranchConfig.cmake
                 lib/pkgconfig/anabranch.pc libexec/anabranch/telemac/partel libexec/anabranch/telemac/gretel)
  has fortran && files+=(lib/libanabranch_fortran.a lib/pkgconfig/anabranch-fortran.pc include/anabranch/fortran/anabranch.mod)
  has cgns && files+=(bin/anabranch-cgns)
  for f in "${files[@]}"; do
    [[ -e $prefix/$f ]] || { echo "missing: $prefix/$f"; return 1; }
    echo "$f"
  done
  local want
  want=$(sed -nE 's/^project\(anabranch VERSION ([0-9.]+).*/\1/p' "$work/src/CMakeLists.txt")
  "$ab" --version
  [[ "$("$ab" --version)" == "anabranch $want" ]]
  [[ "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion anabranch)" == "$want" ]]
}
step installed-files check_files

demo_mesh() {  # the demo's first steps on its 400,000-triangle mesh
  "$ab" generate -n 400000 -o mesh.slf
  "$ab" info mesh.slf
  [[ $("$ab" info --json mesh.slf) == *'"nelem": 400064,'* ]]
  mkdir -p parts
  "$ab" partition mesh.slf --cli mesh.cli -n 4 -o parts
  ls parts/mesh.slf00003-0000{0,1,2,3}
}
step demo-generate-partition demo_mesh
if has scotch; then
  scotch_parts() {
    mkdir -p parts-scotch parts-ptscotch
    "$ab" partition mesh.slf --cli mesh.cli -n 4 --method scotch -o parts-scotch
    "${mpiexec[@]}" -n 2 "$ab" partition mesh.slf --cli mesh.cli -n 4 --method ptscotch -o parts-ptscotch
    ls parts-scotch/mesh.slf00003-00003 parts-ptscotch/mesh.slf00003-00003
  }
  step partition-scotch-ptscotch scotch_parts
fi

consumer_pkgconfig() {
  mkdir -p pkgconfig
  local pc=$prefix/lib/pkgconfig
  # shellcheck disable=SC2046  # the flags are words
  "$mpi_prefix/bin/mpicc" -o pkgconfig/mini_solver_c "$work/src/examples/c/mini_solver.c" \
    $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs anabranch)
  if has fortran; then
    # shellcheck disable=SC2046
    "$mpi_prefix/bin/mpif90" -o pkgconfig/mini_solver_f "$work/src/examples/fortran/mini_solver.f90" \
      $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs anabranch-fortran)
  fi
  ls -l pkgconfig
}
step consumer-pkgconfig consumer_pkgconfig
consumer_cmake() {
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  cmake -S "$work/src/tests/consumer" -B cmake-consumer "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
    -DEXAMPLES="$work/src/examples" -DMPI_C_COMPILER="$mpi_prefix/bin/mpicc" -DMPI_Fortran_COMPILER="$mpi_prefix/bin/mpif90"
  grep -q "anabranch_DIR:PATH=$prefix/lib/cmake/anabranch" cmake-consumer/CMakeCache.txt
  cmake --build cmake-consumer
  ls cmake-consumer/mini_solver_c
  if has fortran; then ls cmake-consumer/mini_solver_f; fi
}
step consumer-cmake consumer_cmake

solvers_two_ranks() {  # tests/consumer/run.sh's run: 4,000 triangles in 2 parts, 2 ranks
  mkdir -p small/parts
  "$ab" -q generate -n 4000 -o small/mesh.slf
  "$ab" -q partition small/mesh.slf --cli small/mesh.cli -n 2 -o small/parts
  local solver first="" n=0 out
  for solver in pkgconfig/mini_solver_* cmake-consumer/mini_solver_*; do
    [[ -x $solver ]] || continue
    out=small/out-${solver//\//-}.slf
    "${mpiexec[@]}" -n 2 "$solver" small/parts/mesh.slf small/mesh.slf "$out" aggregated 2
    [[ -s $out ]]
    "$ab" info "$out"
    [[ $("$ab" info --json "$out") == *'"integrity": "OK"'* ]]
    if [[ -z $first ]]; then first=$out; else cmp "$first" "$out"; fi
    echo "$solver: $out, the same bytes as $first"
    n=$((n + 1))
  done
  (( n >= 2 ))
}
step consumers-on-2-ranks solvers_two_ranks
demo_solver() {  # the demo's step 3: the 400,000-triangle mesh in 4 parts, 4 ranks, one shared file
  "${mpiexec[@]}" -n 4 pkgconfig/mini_solver_c parts/mesh.slf mesh.slf result.slf aggregated 10
  "$ab" info result.slf
  [[ $("$ab" info --json result.slf) == *'"integrity": "OK"'* ]]
}
step demo-solver-4-ranks demo_solver
if has hdf5; then
  hdf5_round_trip() {  # the demo's step 6: SERAFIN -> HDF5 (VTKHDF + XDMF) -> SERAFIN, the same bytes
    "$ab" convert result.slf result.hdf
    "$ab" info result.hdf
    ls result.hdf.xmf
    "$ab" -q convert result.hdf back.slf
    cmp result.slf back.slf
  }
  step hdf5-round-trip hdf5_round_trip
fi
if has cgns; then
  cgns_round_trip() {  # multi-block: the blocks solver on 2 ranks, its file to CGNS and back
    local blocks=cmake-consumer/blocks_solver_c src=run.dat
    printf '1 6 5 4\n2 3 7 2\n3 9 4 1\n' > blocks.txt
    "$ab" -q balance blocks.txt -n 2 --json > two.json
    "${mpiexec[@]}" -n 2 "$blocks" two.json run.dat 2
    if has hdf5; then "${mpiexec[@]}" -n 2 "$blocks" two.json run.h5 2; src=run.h5; fi
    "$ab" convert "$src" run.cgns
    "$ab" convert run.cgns back.dat
    cmp run.dat back.dat
  }
  step cgns-round-trip cgns_round_trip
fi
if has python; then
  python_package() {  # through `spack load`: PATH and PYTHONPATH as Spack sets them
    local so
    so=$(echo "$prefix"/lib/python3*/site-packages/anabranch/_core*.so)
    readelf -d "$so" | grep -E "RPATH|RUNPATH"
    [[ $(readelf -d "$so") != *spack-build* ]]  # the extension names no build directory
    eval "$("${senv[@]}" load --sh anabranch)"
    command -v python3
    python3 - "$run/small/mesh.slf" "$("$ab" --version)" <<'EOF'
import sys

import numpy as np

import anabranch

print(anabranch.__file__)
assert f"anabranch {anabranch.__version__}" == sys.argv[2], (anabranch.__version__, sys.argv[2])
ds = anabranch.read(sys.argv[1])
values = ds.frames[-1][ds.names[0]]
assert values.shape == (ds.npoin,) and np.isfinite(values).all()
assert anabranch.info(sys.argv[1])["nelem"] == ds.nelem == 4004
print("anabranch", anabranch.__version__, "read", ds.names, ds.nelem, "triangles")
EOF
  }
  step python-package python_package
fi

summary
if (( failed )); then
  echo "check-spack: $failed check(s) failed; the scratch folder is kept: $work" >&2
  exit 1
fi
echo "check-spack: all checks passed"
if (( ! keep )); then
  cd /
  rm -rf "$work"
fi
