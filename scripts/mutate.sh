#!/usr/bin/env bash
# Mutation check: does the test suite catch small deliberate bugs in core code?
#
#   bash scripts/mutate.sh                 # every mutation below
#   bash scripts/mutate.sh ownership-swapped refine-3d-plane0   # some of them
#   MUTATE_TESTS='mpi_writer|cli' bash scripts/mutate.sh ...    # a ctest -R regex
#
# Each mutation is applied to a scratch copy of the working tree (built once in
# build-mutate/, next to build/), the tree is rebuilt, the suite runs (ctest, all but the
# pip-install and consumer builds, which test packaging, not behaviour), and the mutation is
# reported caught (some test failed) or missed. The copy is restored after each one. Needs
# `bash scripts/setup.sh --test` first (for the test virtual environment). Exit status: the
# number of mutations missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${MUTATE_DIR:-$root/build-mutate}
tests_regex=${MUTATE_TESTS:-}

# name # file # text to replace (exact; \n: a line end) # replacement # the behaviour it breaks
mutations=$(cat <<'EOF'
ownership-swapped#src/pio/ownership.cpp#o = highest ? std::max(o, r) : std::min(o, r);#o = highest ? std::min(o == -1 ? size : o, r) : (o == size ? r : std::max(o, r));#the lowest and highest rules swapped
merge-piece-offset#src/pio/merge.cpp#p.reader->read_encoded(f, v, i, m, local.data());#p.reader->read_encoded(f, v, 0, m, local.data());#serial merge rereads a part's first piece
fpp-x-as-y#src/pio/writer.cpp#local_mesh_.npoin = nlocal_;#local_mesh_.npoin = nlocal_; local_mesh_.x = local_mesh_.y;#file-per-process parts get Y as X
refine-3d-plane0#src/core/refine.cpp#const T* src = in + p * n2;#const T* src = in;#refine gives every plane the first plane's values
hints-dropped#src/pio/shared_file.cpp#MPI_MODE_CREATE | MPI_MODE_WRONLY, setup.info, &fh);#MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);#MPI-IO hints never reach the file
short-write-ignored#src/pio/mpi_util.cpp#if (count == MPI_UNDEFINED || count >= asked) return;#return;#a short MPI-IO write (full disk) passes
size-check-off#src/pio/writer.cpp#if (size != expected)#if (false)#a shared file shorter than its frames passes at close
wedge-serafin-order#src/formats/vtu.cpp#static const int wedge[6] = {0, 2, 1, 3, 5, 4};#static const int wedge[6] = {0, 1, 2, 3, 4, 5};#VTK wedges inside out
signal-cleanup-off#src/core/outputs.cpp#for (const auto& t : temporaries()) remove_with_companions(t);#(void)0;#a signal leaves temporaries
section-lowest-part#src/formats/partel_extras.cpp#if (loc->local(b, p) > 0) part = p;#if (loc->local(b, p) > 0 && part < 0) part = p;#a section segment on a part boundary goes to the lowest common part
diff-asymmetric#src/pio/compare.cpp#m = std::max(std::fabs(x), std::fabs(y));#m = std::fabs(x);#diff's relative tolerance depends on which file comes first
nodes-not-emulated#src/pio/topology.cpp#if (emulated > 1) {#if (false) {#emulated nodes are one node: the inter-node paths untested
restart-reads-parts#integrations/telemac/anabranch_telemac.f#IF(NF.EQ.0) MINE = 1#MINE = 0#a continued TELEMAC run does not read the one file
hdf5-short-dataset#src/pio/vtkhdf.cpp#if (have < needed)#if (false)#a cut HDF5 dataset reads as fewer frames
title-d-suffix#src/formats/serafin.cpp#suffix.back() != 'D'#suffix != "SERAFIND"#a title ending in D is rewritten
merged-owner-lowest#src/pio/merge.cpp#options.owner_highest = true;  // gretel's rule#options.owner_highest = false;  // gretel's rule#a file written during the run takes the lowest rank's interface values, not the merge's
owned-run-shifted#src/pio/ownership.cpp#encode_words<R>(in + local[i], #encode_words<R>(in + local[i] + 1, #a run of owned values encoded from one place on
output-is-input#src/core/io.cpp#  if (::stat(path.c_str(), &st) != 0) return;\n  std::lock_guard<std::mutex> lock(inputs_mu);#  return;\n  std::lock_guard<std::mutex> lock(inputs_mu);#an output may replace an input
EOF
)

[[ -x $root/build/venv/bin/python ]] || { echo "mutate: run bash scripts/setup.sh --test first" >&2; exit 2; }
mkdir -p "$work"
echo "mutate: copying the tree to $work/tree"
rm -rf "$work/tree" && mkdir -p "$work/tree"
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -m -xf - -C "$work/tree"  # -m: newer than any earlier build
cd "$work/tree"
py=$root/build/venv/bin/python
cmake -S . -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAB_TEST_PYTHON="$py" -DPython_EXECUTABLE="$py" \
  -DAB_TELEMAC_DATA="$root/../shared/data/telemac" >/dev/null
cmake --build "$work/build" -j "$(nproc)" >/dev/null

selected=("$@")
caught=0 missed=0 report=""
while IFS='#' read -r -u 3 name file from to what; do
  [[ -z $name ]] && continue
  if ((${#selected[@]})) && [[ ! " ${selected[*]} " == *" $name "* ]]; then continue; fi
  from=$(printf '%b' "$from") to=$(printf '%b' "$to")
  cp "$file" "$file.orig"
  if ! FROM="$from" TO="$to" perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file" || cmp -s "$file" "$file.orig"; then
    mv "$file.orig" "$file"
    touch "$file"
    echo "mutate: $name does not apply to $file (the code changed: update the list)" >&2
    exit 2
  fi
  printf 'mutate: %-22s %s ... ' "$name" "$what"
  if ! cmake --build "$work/build" -j "$(nproc)" >"$work/$name.build.log" 2>&1; then
    result="caught (does not build)"
  elif (cd "$work/build" && ctest -j "$(nproc)" ${tests_regex:+-R "$tests_regex"} -E 'python_install|consumer' \
          >"$work/$name.test.log" 2>&1); then
    result=MISSED
  else
    result="caught by: $(grep -E '^\s+[0-9]+ - ' "$work/$name.test.log" | sed -E 's/^\s+[0-9]+ - //; s/ \(.*//' | tr '\n' ' ')"
  fi
  echo "$result"
  [[ $result == MISSED ]] && missed=$((missed + 1)) || caught=$((caught + 1))
  report+="$name: $result"$'\n'
  mv "$file.orig" "$file"
  touch "$file"  # newer than the mutated build: rebuilt
done 3<<<"$mutations"
cmake --build "$work/build" -j "$(nproc)" >/dev/null  # back to the unmutated tree
echo "mutate: $caught caught, $missed missed (logs in $work)"
exit "$missed"
