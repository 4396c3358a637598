#!/usr/bin/env bash
# A two-host cluster on one machine, for the parts of anabranch that only run across nodes.
# Two "hosts" are two sets of Linux namespaces (network, host name, mounts), each with its
# own name (ab-host-a, ab-host-b), its own address on a private link between the two
# (10.231.0.1 and 10.231.0.2, a veth pair that exists only inside them) and its own
# /etc/hosts. Open MPI is launched on ab-host-a with a host file naming both, and starts the
# ranks of ab-host-b through an rsh agent that enters that host's namespaces (no ssh). Open
# MPI then sees two nodes by their host names and carries the traffic between them over TCP.
#
# Runs the demo's parallel steps there (the mini solver writing one shared file with the
# aggregated strategy, its file-per-process run, the merge under mpiexec, bench's write and
# read verification) and checks:
#   - two nodes counted by host name, ranks of both hosts in the job;
#   - bytes over the link between the hosts (the veth counters) at least the values that
#     cross it;
#   - the one shared file: the same bytes as the same run on one host;
#   - a rank killed (SIGKILL) on ab-host-b during a merge: the job ends, non-zero, with
#     nothing under the final name (the temporaries left, if any, are listed: the other ranks
#     remove them when the launcher ends them with SIGTERM, not when it uses SIGKILL).
#
#   scripts/two-hosts.sh [BUILD_DIR]     (root; default build/)
# Exit status 0 all held, 1 a check failed, 77 cannot run here (not root, no namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
ab=$build/src/cli/anabranch
solver=$build/examples/mini_solver
skip() { echo "two-hosts.sh: skipped: $*"; exit 77; }
fail() { echo "two-hosts.sh: FAILED: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || skip "needs root (network namespaces, a veth pair, mounts)"
for t in ip unshare nsenter mpirun; do command -v $t >/dev/null || skip "no $t"; done
[[ -x $ab && -x $solver ]] || fail "no anabranch build in $build"
mpirun --version 2>&1 | grep -q "Open MPI" || skip "mpirun is not Open MPI"

work=$(mktemp -d /tmp/anabranch-two-hosts.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  ip link del ab2h-a 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Each host: a process holding its namespaces (network, host name, mounts) open.
printf '127.0.0.1 localhost\n10.231.0.1 ab-host-a\n10.231.0.2 ab-host-b\n' >"$work/hosts"
start_host() {  # name letter
  unshare --net --uts --mount --propagation private --fork sh -c \
    "hostname $1; mount --bind $work/hosts /etc/hosts; echo ready > $work/$1.ready; exec sleep 100000" &
  local pid=$!
  for _ in $(seq 100); do [[ -f $work/$1.ready ]] && break; sleep 0.05; done
  [[ -f $work/$1.ready ]] || skip "cannot make namespaces here"
  # The namespace holder is the child of unshare --fork.
  local holder
  holder=$(pgrep -P "$pid" sleep || true)
  [[ -n $holder ]] || holder=$(pgrep -P "$pid" | head -1)
  pids+=("$pid" "$holder")
  echo "$holder" >"$work/$1.pid"
}
start_host ab-host-a
start_host ab-host-b
A=$(cat "$work/ab-host-a.pid") B=$(cat "$work/ab-host-b.pid")
on() { local h=$1; shift; nsenter -t "$(cat "$work/$h.pid")" --net --uts --mount -- "$@"; }

ip link add ab2h-a type veth peer name ab2h-b || skip "cannot make a veth pair"
ip link set ab2h-a netns "$A"
ip link set ab2h-b netns "$B"
on ab-host-a sh -c 'ip link set lo up; ip addr add 10.231.0.1/24 dev ab2h-a; ip link set ab2h-a up'
on ab-host-b sh -c 'ip link set lo up; ip addr add 10.231.0.2/24 dev ab2h-b; ip link set ab2h-b up'
echo "two-hosts: ab-host-a (10.231.0.1) and ab-host-b (10.231.0.2) up"

# The rsh agent: runs the launcher's command on the named host.
cat >"$work/agent" <<EOF
#!/bin/sh
host=\$1; shift
exec nsenter -t \$(cat $work/\$host.pid) --net --uts --mount -- sh -c "\$*"
EOF
chmod +x "$work/agent"
printf 'ab-host-a slots=2\nab-host-b slots=2\n' >"$work/hostfile"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_vader_single_copy_mechanism=none ANABRANCH_PROGRESS=0
export OMPI_MCA_plm_rsh_agent=$work/agent OMPI_MCA_btl=self,vader,tcp \
  OMPI_MCA_btl_tcp_if_include=10.231.0.0/24 OMPI_MCA_oob_tcp_if_include=10.231.0.0/24
cluster() { on ab-host-a timeout 300 mpirun --hostfile "$work/hostfile" -n 4 "$@"; }
link_bytes() { on ab-host-a awk '$1 == "ab2h-a:" {print $2 + $10}' /proc/net/dev; }  # received + sent

# The demo's mesh and parts, made once (serial).
d=$work/demo
mkdir -p "$d/parts" "$d/one"
$ab -q generate -n 60000 -o "$d/mesh.slf" >/dev/null
$ab -q partition "$d/mesh.slf" --cli "$d/mesh.cli" -n 4 -o "$d/parts" >/dev/null

# Who runs where: two hosts by name, two ranks on each.
cluster sh -c 'echo "$(hostname) $OMPI_COMM_WORLD_RANK"' | sort -k2 -n >"$work/where"
[[ $(awk '{print $1}' "$work/where" | sort -u | wc -l) == 2 ]] || fail "ranks on $(awk '{print $1}' "$work/where" | sort -u | tr '\n' ' ')"
echo "two-hosts: ranks $(tr '\n' ' ' <"$work/where")"

# The one-host reference: the same run, all four ranks on this machine.
env -u OMPI_MCA_plm_rsh_agent -u OMPI_MCA_btl_tcp_if_include -u OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl=self,vader \
  timeout 300 mpirun -n 4 "$solver" "$d/parts/mesh.slf" "$d/mesh.slf" "$d/one/result.slf" aggregated 10 >/dev/null

before=$(link_bytes)
cluster "$solver" "$d/parts/mesh.slf" "$d/mesh.slf" "$d/result.slf" aggregated 10 >/dev/null ||
  fail "the aggregated run on two hosts failed"
crossed=$(( $(link_bytes) - before ))
cmp -s "$d/result.slf" "$d/one/result.slf" || fail "the shared file from two hosts differs from the one-host run's"
# Ranks 2 and 3 (ab-host-b) hand their values to the writers; at least the values of the
# nodes they own cross the link: about half the frames' bytes.
frames_bytes=$(( $(stat -c %s "$d/result.slf") - $(stat -c %s "$d/mesh.slf") ))
(( crossed > frames_bytes / 4 )) || fail "only $crossed bytes crossed the link for $frames_bytes bytes of frames"
echo "two-hosts: aggregated, one shared file: the one-host bytes; $crossed bytes over TCP between the hosts"

cluster "$solver" "$d/parts/mesh.slf" "$d/mesh.slf" "$d/T2DRES" file-per-process 10 >/dev/null ||
  fail "the file-per-process run on two hosts failed"
cluster "$ab" merge "$d/T2DRES" --geo "$d/mesh.slf" -o "$d/merged.slf" >/dev/null || fail "merge on two hosts failed"
cmp -s "$d/merged.slf" "$d/result.slf" || fail "the merge on two hosts differs from the shared file"
echo "two-hosts: file per process, merged under mpiexec on two hosts: the same bytes"

cluster "$ab" bench --generate 20000 --frames 2 --repeat 1 --read --dir "$d" --json >"$work/bench.json" ||
  fail "bench on two hosts failed"
python3 - "$work/bench.json" <<'EOF' || fail "bench on two hosts: $(head -c 300 "$work/bench.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["config"]["nodes"] == 2, j["config"]
assert sorted(set(j["machine"]["hosts"])) == ["ab-host-a", "ab-host-b"], j["machine"]["hosts"]
bad = [r["strategy"] for r in j["results"] + j["read"]["results"] if not r["verified"]]
assert not bad, bad
print(f"two-hosts: bench on 2 nodes: {len(j['results'])} write and {len(j['read']['results'])} read strategies verified")
EOF

# A rank killed on the second host during a merge.
$ab -q generate -n 600000 --frames 6 -o "$d/big.slf" >/dev/null
$ab -q partition "$d/big.slf" -n 4 -o "$d/bigparts" >/dev/null
mkdir -p "$d/out"
cluster "$ab" merge "$d/bigparts/big.slf" --geo "$d/big.slf" -o "$d/out/merged.slf" >"$work/kill.out" 2>"$work/kill.err" &
job=$!
victim=
for _ in $(seq 400); do
  for p in $(pgrep -f "^$ab merge $d/bigparts" || true); do
    [[ $(readlink /proc/$p/ns/uts) == "$(readlink /proc/$B/ns/uts)" ]] && ls "$d/out" | grep -q tmp && { victim=$p; break 2; }
  done
  sleep 0.01
done
[[ -n $victim ]] || fail "no rank of the merge seen on ab-host-b while it wrote"
kill -9 "$victim"
rc=0
wait $job || rc=$?
# Open MPI's mpirun reports a rank killed by signal N as 128 + N (124: timeout ended the job).
(( rc == 128 + 9 )) || fail "the job ended with status $rc after a rank was killed by SIGKILL (expected 137)"
for _ in $(seq 300); do  # mpirun may end before the ranks it is ending
  [[ -z $(pgrep -f "^$ab merge $d/bigparts" || true) ]] && break
  sleep 0.1
done
grep -q "exited on signal 9" "$work/kill.err" || fail "the launcher did not report the killed rank: $(head -c 400 "$work/kill.err")"
(( $(grep -c "^anabranch merge: error: " "$work/kill.err" || true) <= 1 )) || fail "more than one error line: $(cat "$work/kill.err")"
[[ ! -e $d/out/merged.slf ]] || fail "a file under the final name after the kill"
left=$(ls "$d/out" | tr '\n' ' ')
echo "two-hosts: a rank killed on ab-host-b: the job ended (status $rc), nothing under the final name" \
  "(temporaries left: ${left:-none})"
echo "two-hosts: all checks held"
