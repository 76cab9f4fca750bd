#!/usr/bin/env bash
# Runs a study on a real, one-node Slurm cluster started here, and checks that the merged result is the local one.
#
#   scripts/slurm-test.sh [SCENARIO] [SHARDS]      (default: tests/scenarios/tiny/tiny.toml at --quick, 3 shards)
#
# Opt-in (not part of .ci/run): it installs Debian's slurm-wlm and munge with apt-get when they are missing (run as
# root), then, in a scratch folder ($SLURM_TEST_DIR, default /tmp/gridmarket-slurm-test):
#   1. starts munged on a socket of its own, and slurmctld and slurmd with a one-node slurm.conf (this host, its
#      CPUs and memory as `slurmd -C` reads them; no cgroups: proctrack/linuxproc, task/none, no accounting);
#   2. writes the scripts of `gridmarket slurm SCENARIO --quick --array-size SHARDS`, runs their submit.sh (a job
#      array of shards, then the merge with --dependency=afterok) and waits for the queue to empty;
#   3. runs the same study locally and compares every file of the merged folder with the local run's (`cmp`; each
#      run's run.json without its `command` line, which names the command that ran it).
#   4. submits the scripts again with shard 1 made to fail, and checks that the merge job is held
#      (DependencyNeverSatisfied) and never runs.
# Exits non-zero on any difference, on a job that did not succeed, or when Slurm does not start (its logs are
# printed). The daemons it started are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SCENARIO=${1:-tests/scenarios/tiny/tiny.toml}
SHARDS=${2:-3}
WORK=${SLURM_TEST_DIR:-/tmp/gridmarket-slurm-test}
# Ports of their own, so that a Slurm already running on the host is left alone.
CTLD_PORT=${SLURM_TEST_CTLD_PORT:-16817}
SLURMD_PORT=${SLURM_TEST_SLURMD_PORT:-16818}

say() { echo "slurm-test: $*" >&2; }

# Slurm runs as root here (SlurmUser=root), and apt-get needs root.
[ "$(id -u)" -eq 0 ] || { say "run as root"; exit 2; }
# The folder is emptied first: never one this script did not make (SLURM_TEST_DIR=$HOME would be lost).
if [ -e "$WORK" ] && [ ! -f "$WORK/.slurm-test" ] && [ -n "$(ls -A "$WORK" 2>/dev/null)" ]; then
  say "$WORK is not empty and was not made by this script: give SLURM_TEST_DIR a new or empty folder"
  exit 2
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

# A debug build: the tiny study needs no more, and the build is the slow part.
cargo build --quiet
BIN=$ROOT/target/debug/gridmarket

rm -rf "$WORK"
mkdir -p "$WORK"/{state,spool,log,munge}
touch "$WORK/.slurm-test"
chmod 755 "$WORK/munge"
WORK=$(cd "$WORK" && pwd)
HOST=$(hostname -s)

PIDS=()
cleanup() {
  # Jobs still queued or running (a failure midway) go before the daemons that run them.
  [ -f "${SLURM_CONF:-}" ] && scancel --user=root 2>/dev/null || true
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  say "FAILED: $*"
  for log in "$WORK"/log/*.log; do
    [ -f "$log" ] && { echo "--- $log"; tail -n 30 "$log"; }
  done
  exit 1
}

# munge: a key of its own, and a socket of its own.
KEY=$WORK/munge/munge.key
dd if=/dev/urandom of="$KEY" bs=1 count=1024 status=none
chmod 400 "$KEY"
SOCKET=$WORK/munge/munge.socket
munged --foreground --force --socket="$SOCKET" --key-file="$KEY" --log-file="$WORK/log/munged.log" \
  --pid-file="$WORK/munge/munged.pid" --seed-file="$WORK/munge/munged.seed" 2>"$WORK/log/munged.err.log" &
PIDS+=($!)
for _ in $(seq 50); do
  munge --socket="$SOCKET" -n </dev/null 2>/dev/null | unmunge --socket="$SOCKET" >/dev/null 2>&1 && break
  sleep 0.2
done
munge --socket="$SOCKET" -n </dev/null | unmunge --socket="$SOCKET" >/dev/null || fail "munged does not answer"

# The node as slurmd sees it (NodeName=... CPUs=... RealMemory=...), named as this host.
NODE=$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$HOST/")
export SLURM_CONF=$WORK/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gridmarket-test
SlurmctldHost=$HOST
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MinJobAge=600
$NODE State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i 2>"$WORK/log/slurmctld.err.log" &
PIDS+=($!)
slurmd -D 2>"$WORK/log/slurmd.err.log" &
PIDS+=($!)
for _ in $(seq 60); do
  state=$(sinfo -h -n "$HOST" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "${state:-}" = idle ] || fail "the node is not idle after 60 s (sinfo: ${state:-no answer})"
say "slurm is up: $(sinfo -h -o '%P %D %T %c CPUs')"

CLUSTER=$WORK/cluster
"$BIN" slurm "$SCENARIO" --quick --array-size "$SHARDS" --time 00:10:00 --partition debug --out "$CLUSTER"
"$CLUSTER/submit.sh" | tee "$WORK/submitted"
read -r ARRAY MERGE < <(sed -E 's/^array job ([0-9]+) .*merge job ([0-9]+):.*/\1 \2/' "$WORK/submitted")
for _ in $(seq 300); do
  [ -z "$(squeue -h 2>/dev/null)" ] && break
  sleep 1
done
[ -z "$(squeue -h)" ] || fail "jobs still queued after 300 s: $(squeue -h)"
# Every array task and the merge completed with exit code 0 (MinJobAge keeps them known to slurmctld).
jobs=$( (scontrol show job "$ARRAY"; scontrol show job "$MERGE") 2>&1 || true)
states=$(echo "$jobs" | grep -oE 'JobId=[0-9]+|ArrayTaskId=[0-9]+|JobState=[A-Z_]+|ExitCode=[0-9:]+' | paste -sd' ' || true)
say "jobs: $states"
n_done=$(echo "$jobs" | grep -c 'JobState=COMPLETED ' || true)
[ "$n_done" -eq $((SHARDS + 1)) ] || fail "$n_done of $((SHARDS + 1)) jobs completed: $states"
[ -f "$CLUSTER/merged/summary.csv" ] || fail "no merged summary ($CLUSTER/logs/merge.out: $(cat "$CLUSTER/logs/merge.out"))"

# By its absolute path, as the array ran it: run.json records the path as given.
"$BIN" run "$(realpath "$SCENARIO")" --quick --quiet --out "$WORK/local" >/dev/null
# Every file, compared byte for byte; run.json without its command line.
differ=0
files=0
while IFS= read -r rel; do
  files=$((files + 1))
  a=$WORK/local/$rel b=$CLUSTER/merged/$rel
  if [ ! -f "$b" ]; then
    say "missing in the merge: $rel"; differ=1
  elif [[ $rel == */run.json ]]; then
    cmp -s <(grep -v '"command"' "$a") <(grep -v '"command"' "$b") || { say "differs: $rel"; differ=1; }
  else
    cmp -s "$a" "$b" || { say "differs: $rel"; differ=1; }
  fi
done < <(cd "$WORK/local" && find . -type f | sed 's|^\./||' | sort)
extra=$(diff <(cd "$WORK/local" && find . -type f | sort) <(cd "$CLUSTER/merged" && find . -type f | sort) || true)
[ -z "$extra" ] || { say "the folders hold other files: $extra"; differ=1; }
[ "$differ" -eq 0 ] || fail "the merged study differs from the local run"
say "ok: $SHARDS shards on Slurm (array job $ARRAY, merge job $MERGE) merged into the local run's $files files, byte for byte"

# The dependency holds: with one shard failing, the merge never starts.
FAILING=$WORK/failing
"$BIN" slurm "$SCENARIO" --quick --array-size "$SHARDS" --time 00:10:00 --out "$FAILING" >/dev/null
sed -i 's/^set -euo pipefail$/&\n[ "$SLURM_ARRAY_TASK_ID" != 1 ] || exit 3/' "$FAILING/array.sh"
"$FAILING/submit.sh" >"$WORK/submitted-failing"
read -r ARRAY MERGE < <(sed -E 's/^array job ([0-9]+) .*merge job ([0-9]+):.*/\1 \2/' "$WORK/submitted-failing")
for _ in $(seq 300); do
  [ -z "$(squeue -h -j "$ARRAY" 2>/dev/null)" ] && break
  sleep 1
done
sleep 3
merge_state=$(scontrol show job "$MERGE" | grep -oE 'JobState=[A-Z_]+ Reason=[A-Za-z_]+' || true)
scancel "$MERGE" 2>/dev/null || true
[ "$merge_state" = "JobState=PENDING Reason=DependencyNeverSatisfied" ] || fail "with a shard failed, the merge: $merge_state"
[ ! -e "$FAILING/merged" ] || fail "with a shard failed, the merge ran"
say "ok: with shard 1 failing, the merge job was held ($merge_state)"
