#!/usr/bin/env bash
# run_slurm.sh - cairn under a real Slurm on this one machine (root needed).
# Installs Debian's Slurm and munge if missing, then starts, with its own
# config in a temp dir (nothing in /etc is used): munged with its own key,
# slurmctld, and 4 emulated nodes n0..n3 (4 slurmd -N nI, one host, 2 CPUs
# each), with Prolog/Epilog = scripts/slurm/cairn-prolog/-epilog (through
# wrappers that give them the CAIRN_* settings) and a TaskProlog that gives
# every task Open MPI settings for nodes that share one hostname (no
# CAIRN_NODE: every task's node is its SLURMD_NODENAME, by cairn's own rule). As an unprivileged user (nobody) it then runs:
#   job 1 (-N 4 -n 8): cairn start (4 cairnd, an srun step), t_ckpt save 3 3
#         (8 ranks, sets of 4, m = 2, every 2nd generation to the PFS by the
#         daemons); at its end the daemons drain generation 3 to the PFS; the
#         epilog cleans up;
#   job 2 (-N 4 -n 8): t_ckpt restore 3 with CAIRN_JOB = job 1: from the PFS;
#   job 3: a new job restarting job 1 (sbatch --comment=restart-from=<job 1>,
#         CAIRN_RESTART_FROM): the prolog stages generation 3 in, t_ckpt restores it.
# Slurm ends every step of a job, the daemons' too, before it runs the
# Epilog: terminated, the daemons drain the newest complete generation to the
# PFS themselves (so job 1 never calls cairn drain), and the epilog, finding
# no daemon, cleans up.
# Prints "ok"/"not ok" per check, then "N passed, N failed"; exits non-zero,
# saying which part failed, on any failure. Tears everything down at exit
# (KEEP=1 keeps the temp dir). Usage: bash tests/slurm/run_slurm.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$ROOT" && readlink -f "${BUILD:-build}") # jobs run elsewhere: absolute
[ $# = 0 ] || { echo "usage: $0" >&2; exit 2; }
for v in $(compgen -e | grep '^CAIRN_'); do unset "$v"; done # the jobs set their own
PASSED=0 FAILED=0 T='' PIDS=() START=$SECONDS
say() { echo "# $*"; }
die() { # die PART MESSAGE: infrastructure failure; names the part, shows its logs
  echo "run_slurm: FAIL in $1: $2" >&2
  if [ -n "$T" ]; then
    [ -e "$T/slurm.conf" ] && sinfo -R >&2 2>/dev/null
    for f in "$T"/log/*; do [ -s "$f" ] && { echo "--- $f (errors, last lines)" >&2; { grep -i -E 'error|fatal' "$f" || cat "$f"; } | tail -n 8 >&2; }; done
  fi
  exit 1
}
check() { # check DESCRIPTION COMMAND...
  local d=$1; shift
  if out=$("$@" 2>&1); then PASSED=$((PASSED + 1)); echo "ok - $d"
  else FAILED=$((FAILED + 1)); echo "not ok - $d"; [ -n "$out" ] && sed 's/^/#   /' <<<"$out" | tail -n 20
       NOT_OK+=("$d: $(tail -n 3 <<<"$out" | tr '\n' ' ')"); return 1; fi
}
NOT_OK=() # repeated last: the caller (make test) shows only this run's last lines
teardown() {
  local rc=$?
  if [ -n "$T" ] && [ -e "$T/slurm.conf" ]; then
    squeue -h -o %i 2>/dev/null | xargs -r scancel 2>/dev/null
    for _ in $(seq 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done # slurmds and slurmctld, then munged
  for p in "${PIDS[@]}"; do for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -9 "$p" 2>/dev/null; done
  if [ -n "$T" ]; then # a slurmstepd of ours that outlived its slurmd (a failed prolog can leave one)
    for p in $(pgrep -x slurmstepd); do
      tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$T/slurm.conf" && kill -9 "$p" 2>/dev/null
    done
  fi
  if [ -n "$T" ]; then
    if [ "${KEEP:-0}" = 1 ]; then echo "# kept $T"; else rm -rf "$T"; fi
  fi
  exit $rc
}
trap teardown EXIT
trap 'exit 130' INT TERM

# --- 0. what is needed ---------------------------------------------------------
[ "$(id -u)" = 0 ] || die setup "needs root: it runs munged, slurmctld and slurmd"
for f in cairn cairnd tests/t_ckpt; do [ -x "$BUILD/$f" ] || die setup "$BUILD/$f is missing: build first (make -j2 all)"; done
T=$(mktemp -d /tmp/cairn-slurm.XXXXXX) && chmod 755 "$T" && mkdir "$T/log" || die setup "cannot make a temp dir"
# The jobs run as an unprivileged user, who may not reach the build tree (a clone in /root,
# mode 700, on a fresh machine: "cairn: Permission denied"): they, and the hooks' commands
# run as that user, use copies in $T/bin (cairnd and any cairn-* helper beside the CLI, where
# `cairn start` and the hooks look for them).
BIN=$T/bin
progs=("$BUILD"/cairn "$BUILD"/cairnd "$BUILD"/tests/t_ckpt)
for f in "$BUILD"/cairn-*; do [ -f "$f" ] && [ -x "$f" ] && progs+=("$f"); done
mkdir -m 755 "$BIN" && cp "${progs[@]}" "$BIN"/ && chmod -R a+rX "$BIN" ||
  die setup "cannot copy the programs to $BIN"
missing=()
for p in slurmctld slurmd slurm-client munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  t0=$SECONDS; rcd=''
  # no service may start from the package scripts: this test runs its own
  [ -e /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; rcd=1; }
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$T/log/apt.log" 2>&1
  rc=$?; [ -n "$rcd" ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || die install "apt-get install ${missing[*]} failed"
  say "installed ${missing[*]} in $((SECONDS - t0)) s"; rm -f "$T/log/apt.log"
fi
dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep -q '/mpi_pmix\.so$' || die install "Slurm's mpi/pmix plugin (mpi_pmix.so) is missing"

# --- 1. the cluster's files ----------------------------------------------------
JU=nobody JUID=$(id -u nobody) JGID=$(id -g nobody) || die setup "no user 'nobody' to run the jobs as"
mkdir -p "$T"/{state,hooks,msock,base} && mkdir -m 700 "$T/munge" && chmod 755 "$T/msock"
mkdir -m 1777 "$T/pfs" "$T/shm" && mkdir -m 755 "$T/work" && chown "$JUID:$JGID" "$T/work"
for i in 0 1 2 3; do mkdir -p "$T/spool/n$i" "$T/tmp/n$i"; done
port=$((20000 + RANDOM % 9000)) # slurmctld, then one per slurmd: must be free
for p in $(seq $port $((port + 4))); do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && die setup "port $p is in use"; done
H=$(hostname -s)
cat >"$T/slurm.conf" <<EOF
ClusterName=cairnci
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$port
AuthType=auth/munge
AuthInfo=socket=$T/msock/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
TmpFS=$T/tmp/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# SIGTERM to SIGKILL: the daemons drain to the PFS in between, slowly on a loaded machine
KillWait=120
Prolog=$T/hooks/prolog
Epilog=$T/hooks/epilog
PrologFlags=Alloc
TaskProlog=$T/hooks/taskprolog
EOF
for i in 0 1 2 3; do
  echo "NodeName=n$i NodeHostname=$H NodeAddr=127.0.0.1 Port=$((port + 1 + i)) CPUs=2 State=UNKNOWN" >>"$T/slurm.conf"
done
echo "PartitionName=ci Nodes=n[0-3] Default=YES MaxTime=INFINITE State=UP" >>"$T/slurm.conf"
export SLURM_CONF=$T/slurm.conf
# The cairn settings every job, hook and daemon shares (sbatch passes the environment on).
export CAIRN_BASE=$T/base CAIRN_PFS_DIR=$T/pfs CAIRN_PFS_EVERY=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
unset CAIRN_JOB CAIRN_NODE CAIRN_RANKS_PER_NODE CAIRN_DAEMON_LAUNCHER
# Prolog/Epilog run as root with SLURM_JOB_ID, SLURM_JOB_UID and SLURMD_NODENAME only:
# these wrappers add the rest.
for h in prolog epilog; do
  cat >"$T/hooks/$h" <<EOF
#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin CAIRN_BASE=$T/base CAIRN_PFS_DIR=$T/pfs CAIRN_SET_SIZE=4 CAIRN_EC_M=2 \\
  CAIRN_CLI=$BIN/cairn CAIRN_HOOK_LOG=$T/log/hooks.log CAIRN_HOOK_DRAIN_TIMEOUT=120
# keep the daemons' log, which the epilog removes with the job directory
[ $h = prolog ] || cp "$T/base/cairn-\$SLURM_JOB_UID/\$SLURM_JOB_ID/cairnd.log" "$T/log/cairnd.\$SLURM_JOB_ID.log" 2>/dev/null
# a restart names the job it restarts in its comment (sbatch --comment=restart-from=ID)
export SLURM_CONF=$T/slurm.conf CAIRN_RESTART_FROM=\$(scontrol show job -o "\$SLURM_JOB_ID" 2>/dev/null |
  sed -n 's/.* Comment=restart-from=\([A-Za-z0-9._-]*\).*/\1/p')
# the emulated nodes share one base: 4 prologs at once make <base>/cairn-<uid>/<job>
exec $ROOT/scripts/slurm/cairn-$h "\$@"
EOF
done
# TaskProlog (as the user, per task): Open MPI's shared memory per node, TCP on lo
# through the cm PML and libfabric's tcp provider (with ob1's TCP BTL, Open MPI 4.1.4
# segfaults in MPI_Init under load when a peer leaves the PMIx fence first and sends:
# tests/slurm/README.md). No
# CAIRN_NODE: ranks, daemons and hooks all name their node by SLURMD_NODENAME themselves.
cat >"$T/hooks/taskprolog" <<EOF
#!/bin/sh
mkdir -p "$T/shm/\$SLURMD_NODENAME"
echo "export OMPI_MCA_btl_vader_backing_directory=$T/shm/\$SLURMD_NODENAME"
echo "export OMPI_MCA_btl_tcp_if_include=lo"
echo "export OMPI_MCA_oob_tcp_if_include=lo"
echo "export OMPI_MCA_pml=cm"
echo "export OMPI_MCA_mtl=ofi"
echo "export OMPI_MCA_mtl_ofi_provider_include=tcp"
echo "export FI_TCP_IFACE=lo"
EOF
chmod 755 "$T"/hooks/*

# --- 2. the daemons ------------------------------------------------------------
t0=$SECONDS
mungekey -c -k "$T/munge/munge.key" >"$T/log/mungekey.log" 2>&1 || die munge "mungekey could not create a key"
munged -F --key-file="$T/munge/munge.key" --socket="$T/msock/munge.sock" --pid-file="$T/munge/munged.pid" \
  --seed-file="$T/munge/seed" --log-file="$T/log/munged.log" >"$T/log/munged.out" 2>&1 &
PIDS=($!)
for _ in $(seq 50); do [ -S "$T/msock/munge.sock" ] && break; sleep 0.1; done
munge -n -S "$T/msock/munge.sock" | unmunge -S "$T/msock/munge.sock" >/dev/null 2>&1 || die munge "munged does not answer on $T/msock/munge.sock"
slurmctld -D -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
PIDS=($! "${PIDS[@]}")
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping 2>/dev/null | grep -q UP || die slurmctld "slurmctld is not up after 20 s"
for i in 0 1 2 3; do slurmd -D -N "n$i" -f "$SLURM_CONF" >"$T/log/slurmd.n$i.out" 2>&1 & PIDS=($! "${PIDS[@]}"); done
for _ in $(seq 300); do [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = 4 ] && break; sleep 0.2; done
[ "$(sinfo -h -N -t idle -o %N | sort -u | wc -l)" = 4 ] || die slurmd "not every node is idle after 60 s: $(sinfo -h -N -o '%N=%T' | sort -u | tr '\n' ' ')"
say "munged, slurmctld and slurmd n0..n3 up in $((SECONDS - t0)) s (ports $port-$((port + 4)))"

as_user() { (cd "$T/work" && HOME=$T/work setpriv --reuid="$JUID" --regid="$JGID" --clear-groups -- "$@"); }
# run_job NAME SCRIPT [SBATCH-OPTION]: submit as the user; wait (180 s) until it is done, epilog included.
run_job() { # sets JID, JST (COMPLETED, FAILED, ...) and JEX (exit:signal)
  local s d
  JID=$(as_user sbatch --parsable -J "$1" -N 4 -n 8 -o "$T/work/$1.out" ${3:+"$3"} "$2") || die sbatch "sbatch of job $1 was refused"
  for _ in $(seq 900); do
    s=$(scontrol show job -o "$JID" 2>/dev/null)
    JST=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$s")
    case $JST in PENDING | CONFIGURING | RUNNING | COMPLETING | '') sleep 0.2 ;; *) break ;; esac
    d=$(sinfo -h -R -o '%N: %E' 2>/dev/null) # a failed prolog drains its node
    [ -z "$d" ] || die "job $1" "job $JID: node(s) drained: $d (hooks.log says why)"
  done
  JEX=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$s")
  case $JST in PENDING | CONFIGURING | RUNNING | COMPLETING | '') die "job $1" "job $JID still ${JST:-unknown} after 180 s" ;; esac
}
seen=$(as_user srun -N 4 -n 4 --ntasks-per-node=1 sh -c "echo \$SLURMD_NODENAME=\$($BIN/cairn config --node)" 2>&1 | sort | tr '\n' ' ')
check "srun as $JU on 4 nodes sharing one hostname; each task's node is its Slurm NodeName (cairn config --node)" test "$seen" = "n0=n0 n1=n1 n2=n2 n3=n3 "

# --- 3. job 1: daemons, 3 checkpoints, drain; job 2: restore from the PFS -------
C=$BIN/cairn TC=$BIN/t_ckpt
cat >"$T/work/save.sh" <<EOF
#!/bin/bash
export CAIRN_JOB=\$SLURM_JOB_ID
CAIRN_DAEMON_LAUNCHER="srun --mpi=pmix -N 4 --ntasks-per-node=1 --overlap" $C start --nodes 4 || exit 11
$C status || exit 12
CAIRN_LOG_LEVEL=info srun --mpi=pmix --overlap -n 8 $TC save 3 3 || exit 13
EOF
run_job save "$T/work/save.sh"; J1=$JID ST1=$JST EX1=$JEX
out1=$T/work/save.out
check "job 1 ($J1, save) completed, exit 0 (got $ST1 $EX1)" test "$ST1 $EX1" = "COMPLETED 0:0"
check "  ... prolog ready on n0..n3" \
  bash -c "[ \$(grep -cE 'cairn-prolog job $J1 node n[0-3]: ready' '$T/log/hooks.log') = 4 ]"
check "  ... cairn start: 4 cairnd (srun step) serve n0..n3" \
  bash -c "grep -q 'cairnd: 4 daemon(s) serve job $J1' '$out1' && [ \"\$(awk '\$4==\"idle\" {print \$1}' '$out1' | sort | tr '\n' ' ')\" = 'n0 n1 n2 n3 ' ]"
check "  ... 8 ranks checkpoint 3 generations, handed to the daemons for level 3" \
  bash -c "grep -q 'PASS save' '$out1' && grep -q 'generation 3 complete at level 1; cairnd takes it to level 3' '$out1'"
check "  ... Slurm ended the daemons' step; terminated, they drained generation 3 to the PFS" \
  test -e "$T/pfs/cairn-$JUID/$J1/gen-3/index"
check "  ... epilog cleaned up n0..n3 and the job directory" \
  bash -c "[ \$(grep -cE 'cairn-epilog job $J1 node n[0-3]: cleaned up' '$T/log/hooks.log') = 4 ] && ! test -e '$T/base/cairn-$JUID/$J1'"
check "  ... no cairnd of job $J1 left running" bash -c "! pgrep -f '^[^ ]*cairnd --job $J1( |\$)'"

cat >"$T/work/restore.sh" <<EOF
#!/bin/bash
export CAIRN_JOB=$J1
srun --mpi=pmix -n 8 $TC restore 3
EOF
run_job restore "$T/work/restore.sh"; J2=$JID ST2=$JST EX2=$JEX
out2=$T/work/restore.out
check "job 2 ($J2, restore job $J1) completed, exit 0 (got $ST2 $EX2)" test "$ST2 $EX2" = "COMPLETED 0:0"
check "  ... restores generation 3 from the PFS, bit-exact" \
  bash -c "grep -q 'restoring generation 3 from the PFS' '$out2' && grep -q 'PASS restore' '$out2'"
check "  ... prolog ready and epilog cleaned up on n0..n3" \
  bash -c "[ \$(grep -cE 'cairn-(prolog job $J2 node n[0-3]: ready|epilog job $J2 node n[0-3]: cleaned up)' '$T/log/hooks.log') = 8 ]"
[ -e "$T/base/cairn-$JUID/$J1" ] &&
  say "note: job 2 ran as CAIRN_JOB=$J1; its node directories $T/base/cairn-$JUID/$J1/* stay (the hooks clean job $J2's)"

# --- 4. job 3: a new job restarting job 1 (CAIRN_RESTART_FROM; the prolog stages it in)
cat >"$T/work/restart.sh" <<EOF
#!/bin/bash
export CAIRN_JOB=\$SLURM_JOB_ID CAIRN_RESTART_FROM=$J1
srun -N 4 --ntasks-per-node=1 true || exit 10 # a step waits for its nodes' prologs
mv $T/pfs/cairn-$JUID/$J1 $T/pfs/moved-away || exit 11 # the staged copy must do
srun --mpi=pmix -n 8 $TC restore 3
EOF
run_job restart "$T/work/restart.sh" --comment=restart-from=$J1; J3=$JID
out3=$T/work/restart.out
check "job 3 ($J3, restart-from=$J1) completed, exit 0 (got $JST $JEX)" test "$JST $JEX" = "COMPLETED 0:0"
check "  ... prolog staged generation 3 of job $J1 in on n0..n3" \
  bash -c "[ \$(grep -cE 'cairn-prolog job $J3 node n[0-3]: staged generation 3 of job $J1 in' '$T/log/hooks.log') = 4 ]"
check "  ... restores it from the staged copy (PFS copy moved away), bit-exact; the epilog leaves nothing" \
  bash -c "grep -q 'restoring generation 3 of job $J1 from the PFS (level 4): this job ($J3) has none' '$out3' && grep -q 'PASS restore' '$out3' && ! test -e '$T/base/cairn-$JUID/$J3'"
if [ "$FAILED" != 0 ]; then
  for f in "$out1" "$out2" "$out3" "$T"/log/hooks.log "$T"/log/cairnd.*.log; do [ -s "$f" ] && { echo "--- tail of $f"; tail -n 15 "$f"; }; done
fi
say "run: $((SECONDS - START)) s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ] || { printf 'run_slurm: not ok - %s\n' "${NOT_OK[@]}" >&2; exit 1; }
