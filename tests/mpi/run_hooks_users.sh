#!/usr/bin/env bash
# run_hooks_users.sh - the scheduler hooks as Slurm runs them (root) for a
# job of a real unprivileged user, against an unprivileged attacker, in a
# sticky world-writable base like /dev/shm. Sourced by run_hooks.sh (its
# hooks_all, check, $T). As root only: it creates the users cairn-test (the
# job's user, "victim") and cairn-atk (the attacker) if missing.
#
#   (a) a deterministic race: the directory root has just made is swapped for
#       a symlink to a root-owned 0600 file, by a `chmod` wrapper on PATH (the
#       tool the bash hooks called) and by the hook's fault point between
#       open and act (CAIRN_HOOK_FAULT): the file keeps its owner and mode;
#   (b) the same race by a program of the attacker at nice 19, looping over
#       several prologs of its own jobs;
#   (c) a squatter's <base>/cairn-<victim uid> (a directory, a symlink):
#       the victim's prologs exit 0 (no node drained), the squatter's entry is
#       set aside, not followed, and the job checkpoints and restores;
#   (d) an epilog whose drain failed (daemons SIGKILLed: stale sockets) or
#       without daemons, with a generation newer than the PFS's: the epilogs
#       flush it themselves as the user, node by node (at once, or one after
#       another), and commit it on the PFS (a stale part of an earlier
#       attempt notwithstanding); the next job restores it bit-exact from
#       there. With a node's data gone, no commit: the other nodes keep it,
#       the log names the node, CAIRN_HOOK_UNFLUSHED=drain makes it exit 1.
# PRO and EPI may name other hook scripts (to run these checks on old ones).

if [ "$(id -u)" != 0 ]; then
  skip "hooks as real users (a)-(d): not root (they create the users cairn-test and cairn-atk)"
  return 0 2>/dev/null || exit 0
fi
for who in cairn-test cairn-atk; do
  id -u "$who" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$who" ||
    { skip "hooks as real users: cannot create the user $who"; return 0 2>/dev/null || exit 0; }
done
VU=$(id -u cairn-test) VG=$(id -g cairn-test) AU=$(id -u cairn-atk) AG=$(id -g cairn-atk)
as_v() { setpriv --reuid="$VU" --regid="$VG" --clear-groups -- env HOME=/tmp "$@"; }
as_a() { setpriv --reuid="$AU" --regid="$AG" --clear-groups -- env HOME=/tmp "$@"; }
export -f as_v as_a
export VU VG AU AG
# The users may not reach the build tree (a clone in /root, mode 700, on a fresh machine):
# the victim's jobs and daemons, and what the hooks run as the user (the cairn binary, exec'd
# again after the drop), use copies in $UT that everyone can read, as the Slurm test does.
UT=$(mktemp -d /tmp/cairn-hookbin.XXXXXX) && SCRATCH_DIRS+=("$UT") && chmod 755 "$UT" &&
  mkdir -p -m 755 "$UT/bin" "$UT/scripts/slurm" &&
  cp "$BUILD/cairn" "$BUILD/cairnd" "$T" "$UT/bin/" && cp scripts/mpirun.sh "$UT/scripts/" &&
  cp scripts/slurm/cairn-* "$UT/scripts/slurm/" && chmod -R a+rX "$UT" ||
  { check "hooks as real users: copies of the programs in a directory they can read" false; return 0 2>/dev/null || exit 0; }
for f in "$BUILD"/cairn-*; do [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$UT/bin/" && chmod a+rx "$UT/bin/${f##*/}"; done
U_SAVED=("$T" "$PRO" "$EPI" "${CAIRN_CLI:-}" "${CAIRN_DAEMON_LAUNCHER:-}")
T=$UT/bin/${T##*/} PRO=$UT/scripts/slurm/cairn-prolog EPI=$UT/scripts/slurm/cairn-epilog
UM=$UT/scripts/mpirun.sh UC=$UT/bin/cairn
export CAIRN_CLI=$UC CAIRN_DAEMON_LAUNCHER="bash $UM"
export T UM UC
# vhooks HOOK [ENV...]: HOOK as root on node0..node3 for the victim's job $J in base $B.
vhooks() {
  local h=$1 n rc=0; shift
  for n in 0 1 2 3; do
    env -u CAIRN_JOB -u CAIRN_PFS_DIR SLURM_JOB_ID="$J" SLURM_JOB_UID="$VU" SLURMD_NODENAME="node$n" \
      CAIRN_BASE="$B" CAIRN_HOOK_LOG="$B/hooks.log" "$@" "$h" || { echo "$h on node$n: status $?"; rc=1; }
  done
  return $rc
}
# vjob ARGS...: the victim's job on 4 emulated nodes (8 ranks) in base $B.
vjob() { as_v env -u CAIRN_PFS_DIR CAIRN_BASE="$B" CAIRN_JOB="$J" "$UM" 8 "$T" "$@"; }
export -f vhooks vjob
sticky_base() { # a fresh base like /dev/shm: root's, mode 1777
  B=$(mktemp -d /dev/shm/cairn-ub.XXXXXX) && chmod 1777 "$B" && SCRATCH_DIRS+=("$B")
  export B
}
victim_pfs() { # a fresh PFS directory of the victim
  VP=$(mktemp -d /dev/shm/cairn-vpfs.XXXXXX) && chown "$VU:$VG" "$VP" && SCRATCH_DIRS+=("$VP")
  export VP
}
# Root's own things the attacker wants: a 0600 file and a 0755 directory.
SAFE=$(mktemp -d /tmp/cairn-hooksafe.XXXXXX); SCRATCH_DIRS+=("$SAFE")
chmod 755 "$SAFE"
export SAFE
fresh_target() { rm -rf "$SAFE/target" "$SAFE/rootdir" "$SAFE/swapped"; echo precious >"$SAFE/target"; chmod 600 "$SAFE/target"; mkdir -m 755 "$SAFE/rootdir"; }
target_intact() { # the target file keeps owner root, mode 600, its bytes; root's directory stays empty
  local st; st=$(stat -c '%u %a' "$SAFE/target")
  [ "$st" = "0 600" ] || { echo "the target is now uid/mode $st"; return 1; }
  [ "$(cat "$SAFE/target")" = precious ] || { echo "the target's bytes changed"; return 1; }
  [ -z "$(ls -A "$SAFE/rootdir")" ] || { echo "root's directory got: $(ls -A "$SAFE/rootdir")"; return 1; }
}
# went_on_safely NODE: the victim's node directory is real, the victim's, mode 700 (or the prolog refused: RC 1)
went_on_safely() {
  local rc=$1 d=$B/cairn-$VU/$J/node$2
  [ "$rc" = 1 ] && return 0
  [ "$rc" = 0 ] || { echo "prolog status $rc"; return 1; }
  [ ! -L "$B/cairn-$VU" ] && [ ! -L "$B/cairn-$VU/$J" ] && [ ! -L "$d" ] && [ -d "$d" ] ||
    { echo "no real directory $d"; ls -la "$B" "$B/cairn-$VU" 2>&1; return 1; }
  [ "$(stat -c '%u %a' "$B/cairn-$VU")" = "$VU 700" ] && [ "$(stat -c '%u %a' "$d")" = "$VU 700" ] ||
    { echo "wrong owner or mode: $(stat -c '%n %u %a' "$B/cairn-$VU" "$d")"; return 1; }
}
export -f fresh_target target_intact went_on_safely

# The victim can run its job here.
check "users cairn-test ($VU) and cairn-atk ($AU); the victim can read and run the build tree" \
  as_v test -x "$T" -a -r "$T" -a -x "$UC"

# ---- (a) the deterministic race ----------------------------------------------------------
# swap [POINT] PATH: once, move PATH away and put a symlink to root's 0600 file in its place.
cat >"$SAFE/swap" <<EOF
#!/bin/bash
p=\${!#}
[ -e "$SAFE/swapped" ] && exit 0
: >"$SAFE/swapped"
mv -T -- "\$p" "\$p.moved" && ln -s "$SAFE/target" "\$p"
EOF
mkdir -m 755 "$SAFE/bin"
cat >"$SAFE/bin/chmod" <<EOF
#!/bin/bash
# the chmod the bash hooks called: swaps a directory they have just made
case \${!#} in */.cairn-new.*) "$SAFE/swap" "\${!#}" ;; esac
exec /bin/chmod "\$@"
EOF
chmod 755 "$SAFE/swap" "$SAFE/bin/chmod"
for point in made opened; do
  sticky_base; fresh_target; J=t$CAIRN_TEST_TAG-race-$point; export J
  env -u CAIRN_JOB PATH="$SAFE/bin:$PATH" CAIRN_HOOK_FAULT="$point:$SAFE/swap" SLURM_JOB_ID="$J" \
    SLURM_JOB_UID="$VU" SLURMD_NODENAME=node0 CAIRN_BASE="$B" CAIRN_HOOK_LOG="$B/hooks.log" "$PRO" >/dev/null 2>&1
  rc=$?
  check "(a) race, swap at '$point' (chmod wrapper / fault point): root's 0600 file keeps owner and mode; the prolog refused or went on safely (status $rc)" \
    bash -c "test -e '$SAFE/swapped' && target_intact && went_on_safely $rc 0"
done

# ---- (b) the same race by the attacker's own program, at nice 19 -----------------------------
# The attacker is the job's user here: its own directory <base>/cairn-<uid> is
# where a root hook that makes directories by name can be raced.
sticky_base; fresh_target; RD=$(mktemp -d /tmp/cairn-race.XXXXXX); SCRATCH_DIRS+=("$RD"); chown "$AU:$AG" "$RD"
ahook() { env -u CAIRN_JOB SLURM_JOB_ID="$1" SLURM_JOB_UID="$AU" SLURMD_NODENAME=node0 CAIRN_BASE="$B" CAIRN_HOOK_LOG="$B/hooks.log" "$PRO" >/dev/null 2>&1; }
ahook "t$CAIRN_TEST_TAG-race-b0"
as_a nice -n 19 "$BUILD/tests/t_hookrace" "$SAFE/target" "$RD/stop" "$RD/ready" "$B/cairn-$AU" >"$RD/out" 2>&1 &
racer=$!
for _ in $(seq 100); do [ -e "$RD/ready" ] && break; sleep 0.1; done
statuses=
for i in 1 2 3 4 5 6 7 8; do ahook "t$CAIRN_TEST_TAG-race-b$i"; statuses="$statuses$?"; done
touch "$RD/stop"; wait "$racer"
check "(b) a racing program of the job's user at nice 19 over 8 prologs ($(cat "$RD/out"); statuses $statuses): root's 0600 file keeps owner and mode" \
  bash -c "test -e '$RD/ready' && target_intact && [[ '$statuses' =~ ^[01]{8}$ ]]"
check "  ... every prolog that said ready made a real directory of that user, mode 700" \
  bash -c "st='$statuses'; for i in 1 2 3 4 5 6 7 8; do s=\${st:\$((i - 1)):1}; d='$B/cairn-$AU/t$CAIRN_TEST_TAG-race-b'\$i/node0; [ \$s = 1 ] && continue; [ ! -L \$d ] && [ \"\$(stat -c '%u %a' \$d)\" = '$AU 700' ] || exit 1; done; [ ! -L '$B/cairn-$AU' ]"

# ---- (c) a squatter's <base>/cairn-<victim uid> -------------------------------------------
sticky_base; fresh_target; J=t$CAIRN_TEST_TAG-squat; export J
as_a mkdir -m 755 "$B/cairn-$VU" && as_a touch "$B/cairn-$VU/bait"
check "(c) the attacker's directory as <base>/cairn-<victim>: the victim's prologs exit 0 on 4 nodes (none drained)" \
  vhooks "$PRO"
check "  ... the squatter's directory is set aside (kept whole, not followed), logged; the victim's is real, 0700" \
  bash -c "grep -q 'cairn-$VU is owned by uid $AU, not by the job.s user $VU: set aside as' '$B/hooks.log' && ls -d '$B'/.cairn-aside-$VU.* | grep -q . && test -e \"\$(ls -d '$B'/.cairn-aside-$VU.* | head -n1)/bait\" && went_on_safely 0 3 && test \"\$(stat -c %U '$B/cairn-$VU/$J')\" = cairn-test"
check "  ... the victim's job checkpoints 3 generations and restores generation 3 bit-exact" \
  bash -c "vjob save 3 1 && run_grep 'PASS restore' vjob restore 3"
check "  ... the epilog (no PFS) cleans up: exit 0" \
  bash -c "vhooks '$EPI' && ! test -e '$B/cairn-$VU/$J'"
sticky_base; fresh_target; J=t$CAIRN_TEST_TAG-squat-link; export J
as_a ln -s "$SAFE/rootdir" "$B/cairn-$VU"
check "(c) the attacker's symlink to a root directory as <base>/cairn-<victim>: prologs exit 0, nothing made through it" \
  bash -c "vhooks '$PRO' && target_intact && went_on_safely 0 1 && test \"\$(readlink \"\$(ls -d '$B'/.cairn-aside-$VU.* | head -n1)\")\" = '$SAFE/rootdir'"
check "  ... the victim's job checkpoints and restores bit-exact; the epilog cleans up" \
  bash -c "vjob save 2 1 && run_grep 'PASS restore' vjob restore 2 && vhooks '$EPI' && ! test -e '$B/cairn-$VU/$J' && target_intact"
check "  ... an epilog facing a squatter's entry leaves it alone: exit 0, not followed" \
  bash -c "as_a ln -s '$SAFE/rootdir' '$B/sq' && rm -rf '$B/cairn-$VU' && mv '$B/sq' '$B/cairn-$VU' && vhooks '$EPI' && test -L '$B/cairn-$VU' && target_intact"

# Prologs of the victim's jobs at once on one node (a fresh base): none sees
# <base>/cairn-<uid> half made (root's, before it is given away) and sets it aside.
sticky_base; J=t$CAIRN_TEST_TAG-together; export J
check "8 prologs of the victim at once on a fresh base: all exit 0, nothing set aside or left half made" \
  bash -c "pids=; for n in 0 1 2 3 4 5 6 7; do env -u CAIRN_JOB SLURM_JOB_ID=\$J-\$((n % 2)) SLURM_JOB_UID=$VU SLURMD_NODENAME=node\$n CAIRN_BASE='$B' CAIRN_HOOK_LOG='$B/hooks.log' '$PRO' & pids=\"\$pids \$!\"; done; rc=0; for p in \$pids; do wait \$p || rc=1; done; [ \$rc = 0 ] && [ -z \"\$(ls -A '$B' | grep -v -x -e cairn-$VU -e hooks.log)\" ] && J=\$J-1 went_on_safely 0 7 && J=\$J-0 went_on_safely 0 6"

sticky_base; J=t$CAIRN_TEST_TAG-paused; export J
printf '#!/bin/bash\n: >"%s/paused"\nsleep 1\n' "$SAFE" >"$SAFE/pause"; chmod 755 "$SAFE/pause"; rm -f "$SAFE/paused"
check "  ... a prolog paused between making <base>/cairn-<uid> and giving it away (fault point): another's prolog meanwhile exits 0, nothing set aside" \
  bash -c "env -u CAIRN_JOB CAIRN_HOOK_FAULT='opened:$SAFE/pause' SLURM_JOB_ID=\$J-a SLURM_JOB_UID=$VU SLURMD_NODENAME=node0 CAIRN_BASE='$B' CAIRN_HOOK_LOG='$B/hooks.log' '$PRO' & a=\$!; for _ in \$(seq 100); do [ -e '$SAFE/paused' ] && break; sleep 0.05; done; test -e '$SAFE/paused' || exit 1; env -u CAIRN_JOB SLURM_JOB_ID=\$J-b SLURM_JOB_UID=$VU SLURMD_NODENAME=node1 CAIRN_BASE='$B' CAIRN_HOOK_LOG='$B/hooks.log' '$PRO' || exit 1; wait \$a || exit 1; [ -z \"\$(ls -A '$B' | grep -v -x -e cairn-$VU -e hooks.log)\" ] && J=\$J-a went_on_safely 0 0 && J=\$J-b went_on_safely 0 1"

# ---- (d) an epilog whose drain failed -----------------------------------------------------
# vhooks_par HOOK [ENV...]: as vhooks, the 4 nodes' hooks at once (as Slurm runs them), each
# one's status checked.
vhooks_par() {
  local h=$1 n rc=0 pids=(); shift
  for n in 0 1 2 3; do
    env -u CAIRN_JOB -u CAIRN_PFS_DIR SLURM_JOB_ID="$J" SLURM_JOB_UID="$VU" SLURMD_NODENAME="node$n" \
      CAIRN_BASE="$B" CAIRN_HOOK_LOG="$B/hooks.log" "$@" "$h" & pids+=($!)
  done
  for n in 0 1 2 3; do wait "${pids[$n]}" || { echo "$h on node$n: status $?"; rc=1; }; done
  return $rc
}
export -f vhooks_par
export PRO EPI
vpids() { pgrep -u "$VU" -f "^[^ ]*cairnd --job $J( |\$)"; }
# killed_job: prologs; the victim's job with daemons, 3 checkpoints at level 3, every 2nd to
# the PFS; once the daemons have flushed generation 2 (in the background: on a loaded host
# after the job's end), they are SIGKILLed (stale sockets): generation 3 is only on the nodes.
killed_job() {
  vhooks "$PRO" && as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$J" "$UC" start --nodes 4 >/dev/null &&
    as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$J" CAIRN_PFS_EVERY=2 "$UM" 8 "$T" save 3 3 || return 1
  for _ in $(seq 1200); do test -e "$VP/cairn-$VU/$J/gen-2/index" && break; sleep 0.1; done
  local p; for p in $(vpids); do kill -KILL "$p"; done
  for _ in $(seq 100); do [ -z "$(vpids)" ] && break; sleep 0.1; done
  test -z "$(vpids)" && test -S "$B/cairn-$VU/$J/node0/cairnd.sock" && test -e "$VP/cairn-$VU/$J/gen-2/index" &&
    ! test -e "$VP/cairn-$VU/$J/gen-3"
}
# on_pfs G: the PFS holds generation G of $J complete (its index decodes: cairn ls lists it), no part left
on_pfs() {
  local out; out=$(as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" "$UC" ls --pfs "$VP" --job "$J" 2>&1) &&
    grep -Eq "^ *$1 +4 .* [0-9]+ files, " <<<"$out" && test -e "$VP/cairn-$VU/$J/gen-$1/index" &&
    ! test -e "$VP/cairn-$VU/$J/.part-gen-$1" ||
    { echo "generation $1 is not complete on the PFS: $out"; ls -la "$VP/cairn-$VU/$J" 2>&1; return 1; }
}
nodes_gone() { local n; for n in 0 1 2 3; do ! test -e "$B/cairn-$VU/$J/node$n" || { echo "node$n kept"; return 1; }; done; }
restores_from_pfs() { # the next job on wiped nodes restores generation $1 from the PFS, bit-exact
  vhooks "$PRO" && run_grep "restoring generation $1 from the PFS" as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$J" "$UM" 8 "$T" restore "$1"
}
export -f vpids killed_job on_pfs nodes_gone restores_from_pfs

sticky_base; victim_pfs; J=t$CAIRN_TEST_TAG-eflush; export J
check "(d) the victim's job with daemons, 3 checkpoints at level 3, every 2nd to the PFS; the daemons SIGKILLed (stale sockets)" killed_job
check "  ... the 4 epilogs at once: the drain fails, each flushes its node's part as the user; generation 3 is committed on the PFS, every node directory removed, each exit 0" \
  bash -c "vhooks_par '$EPI' CAIRN_PFS_DIR='$VP' && on_pfs 3 && nodes_gone && grep -q 'drain' '$B/hooks.log' && grep -q 'committed generation 3 (8 ranks from 4 nodes)' '$B/hooks.log' && [ -z \"\$(find '$VP' ! -user cairn-test)\" ] || { cat '$B/hooks.log'; exit 1; }"
check "  ... the next job, on wiped nodes, restores generation 3 from the PFS bit-exact" restores_from_pfs 3

sticky_base; victim_pfs; J=t$CAIRN_TEST_TAG-kept; export J
check "(d) the same job, its daemons SIGKILLed, and node 2's directory wiped (a replaced node)" \
  bash -c "killed_job && rm -rf '$B/cairn-$VU/$J/node2'"
check "  ... the epilogs at once (CAIRN_HOOK_FLUSH_WAIT=1): exit 0, the other nodes keep generation 3, none on the PFS, the log names node 2" \
  bash -c "vhooks_par '$EPI' CAIRN_PFS_DIR='$VP' CAIRN_HOOK_FLUSH_WAIT=1 && for n in 0 1 3; do test -e '$B/cairn-$VU/$J/node'\$n/gen-3/manifest || exit 1; done && ! test -e '$VP/cairn-$VU/$J/gen-3' && grep -q 'kept $B/cairn-$VU/$J/node1: its generation 3 is not on the PFS' '$B/hooks.log' && grep -q 'no record of node 2 (of 4)' '$B/hooks.log' || { cat '$B/hooks.log'; exit 1; }"
check "  ... with CAIRN_HOOK_UNFLUSHED=drain: exit 1 (drain the node), still kept" \
  bash -c "env -u CAIRN_JOB SLURM_JOB_ID='$J' SLURM_JOB_UID='$VU' SLURMD_NODENAME=node1 CAIRN_BASE='$B' CAIRN_PFS_DIR='$VP' CAIRN_HOOK_LOG='$B/hooks.log' CAIRN_HOOK_FLUSH_WAIT=0 CAIRN_HOOK_UNFLUSHED=drain '$EPI'; test \$? = 1 && test -e '$B/cairn-$VU/$J/node1/gen-3/manifest'"
check "  ... the next job (CAIRN_JOB=$J) restores generation 3 bit-exact from the kept directories (node 2 rebuilt)" \
  run_grep 'PASS restore' as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$J" "$UM" 8 "$T" restore 3

sticky_base; victim_pfs; J=t$CAIRN_TEST_TAG-stale; export J
check "(d) the same job, its daemons SIGKILLed; a stale .part-gen-3 left on the PFS (a garbage record, rank file and claim)" \
  bash -c "killed_job && p='$VP/cairn-$VU/$J/.part-gen-3' && as_v mkdir -m 700 \"\$p\" && for f in node-1.done node-3.done agg-000001.cz commit; do head -c 3000 /dev/urandom | as_v tee \"\$p/\$f\" >/dev/null || exit 1; done"
check "  ... the 4 epilogs at once: generation 3 committed all the same, nodes removed, each exit 0" \
  bash -c "vhooks_par '$EPI' CAIRN_PFS_DIR='$VP' && on_pfs 3 && nodes_gone || { cat '$B/hooks.log'; exit 1; }"
check "  ... the next job restores generation 3 from the PFS bit-exact" restores_from_pfs 3

sticky_base; victim_pfs; J=t$CAIRN_TEST_TAG-kept-nod; export J
check "(d) no daemon at all: level 1, every 2nd generation to the PFS" \
  bash -c "vhooks '$PRO' && as_v env CAIRN_BASE='$B' CAIRN_PFS_DIR='$VP' CAIRN_JOB='$J' CAIRN_PFS_EVERY=2 '$UM' 8 '$T' save 3 1 && test -e '$VP/cairn-$VU/$J/gen-2/index'"
check "  ... the epilogs one after another (CAIRN_HOOK_FLUSH_WAIT=0): nodes 0-2 keep generation 3 (not committable yet), node 3's commits it; each exit 0" \
  bash -c "vhooks '$EPI' CAIRN_PFS_DIR='$VP' CAIRN_HOOK_FLUSH_WAIT=0 && for n in 0 1 2; do test -e '$B/cairn-$VU/$J/node'\$n/gen-3/manifest || exit 1; done && ! test -e '$B/cairn-$VU/$J/node3' && on_pfs 3 && grep -q 'no record of node 3 (of 4)' '$B/hooks.log' || { cat '$B/hooks.log'; exit 1; }"
check "  ... the epilogs again: generation 3 is on the PFS, every node directory goes" \
  bash -c "vhooks '$EPI' CAIRN_PFS_DIR='$VP' CAIRN_HOOK_FLUSH_WAIT=0 && nodes_gone"
check "  ... the next job restores generation 3 from the PFS bit-exact" restores_from_pfs 3

# ---- stage-in as the user, through the library's index decoder and chain walk -------------------
first=$J; J=t$CAIRN_TEST_TAG-staged; export J
sf=$B/cairn-$VU/$J/node2/stage/cairn-$VU/$first
check "stage-in as the victim: the prolog of a job restarting $first stages its generation 3 (the PFS's newest, the epilogs' flush), the victim's files" \
  bash -c "vhooks '$PRO' CAIRN_PFS_DIR='$VP' CAIRN_RESTART_FROM='$first' && test -e '$sf/gen-3/index' && [ -z \"\$(find '$B/cairn-$VU/$J' ! -user cairn-test)\" ] && grep -q 'staged generation 3 of job $first in' '$B/hooks.log'"
mv "$VP/cairn-$VU/$first" "$VP/cairn-$VU/moved-away"
check "  ... the job restores generation 3 of $first from the staged copy (PFS copy moved away), bit-exact" \
  run_grep "restoring generation 3 of job $first from the PFS" as_v env CAIRN_BASE="$B" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$J" CAIRN_RESTART_FROM="$first" "$UM" 8 "$T" restore 3
mv "$VP/cairn-$VU/moved-away" "$VP/cairn-$VU/$first"
# A generation whose index does not decode (a forged or torn one) is no
# generation: the prolog stages nothing (it once copied whatever had an index file).
J=t$CAIRN_TEST_TAG-forged; export J
as_v mkdir -p -m 700 "$VP/cairn-$VU/$J-src/gen-7" && head -c 4096 /dev/urandom | as_v tee "$VP/cairn-$VU/$J-src/gen-7/index" >/dev/null
check "stage-in of a job whose newest generation has a forged index: nothing staged, no stage directory left, exit 0" \
  bash -c "vhooks '$PRO' CAIRN_PFS_DIR='$VP' CAIRN_RESTART_FROM='$J-src' && ! test -e '$B/cairn-$VU/$J/node0/stage/cairn-$VU/$J-src' && grep -q 'job $J-src has no complete generation' '$B/hooks.log'"
T=${U_SAVED[0]} PRO=${U_SAVED[1]} EPI=${U_SAVED[2]}
export CAIRN_CLI=${U_SAVED[3]} CAIRN_DAEMON_LAUNCHER=${U_SAVED[4]}
