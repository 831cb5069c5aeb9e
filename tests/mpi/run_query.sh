#!/usr/bin/env bash
# run_query.sh - the restart-side API a porting application uses: what a
# restart would do (cairn_restart_query) in every situation, checked against
# what cairn_restart then does; one variable at a time (cairn_var_query,
# cairn_restart_var) through incremental chains, node losses and the PFS;
# restart with nothing protected; labels and seconds (manifests, PFS index,
# cairn ls and inspect); a fresh start below old generations; checkpoints in
# the previous release's manifest and index formats; the matrix of levels
# 1-4, 0 to 4 nodes lost, with and without a PFS copy. Sourced by tests/run.sh
# (uses lib.sh's fresh/check helpers); runs alone as CAIRN_TEST_ONLY=query.
TQ=$BUILD/tests/t_query
q4() { scripts/mpirun.sh 4 "$TQ" "$@"; }
q8() { scripts/mpirun.sh 8 "$TQ" "$@"; }
export CAIRN_RANKS_PER_NODE=2 CAIRN_LOG_LEVEL=warn CAIRN_KEEP=3
unset CAIRN_FAULT CAIRN_INCR CAIRN_PFS_DIR T_SALT T_FIRST T_QUERY_ONLY T_NOVARS T_NOLABEL

# Everything under the node-local base and the PFS but what cairn_init makes
# (the user, job, node, files/ and files/rank-* directories, and the node's
# app.lock: the running application's mark for cairn prune): paths, sizes,
# times and checksums. A query must leave it as it was.
LIVE='\./cairn-[0-9]+/[^/]+/[^/]+/app\.lock'
snap() {
  local d
  for d in "$CAIRN_BASE" ${CAIRN_PFS_DIR:+"$CAIRN_PFS_DIR"}; do
    (cd "$d" && find . -regextype posix-extended -type f ! -regex "$LIVE" -printf '%p %s %T@\n' | sort &&
      find . -regextype posix-extended -type f ! -regex "$LIVE" -exec md5sum {} + | sort &&
      find . -type d | grep -Ev '^\.(/cairn-[0-9]+(/[^/]+(/[^/]+(/files(/rank-[0-9]+)?)?)?)?)?$' | sort)
  done
}
query_writes_nothing() { # NP ARGS...: a query-only run leaves every file as it was
  local np=$1 before after; shift
  before=$(snap)
  run_grep 'PASS query' env T_QUERY_ONLY=1 scripts/mpirun.sh "$np" "$TQ" query "$@" || return 1
  after=$(snap)
  [ "$before" = "$after" ] || { echo "the query changed:"; diff <(echo "$before") <(echo "$after") | head; return 1; }
}

fresh query-none
check "query with nothing written: NONE, and cairn_restart says CAIRN_ENOENT" \
  run_grep 'PASS query' q4 query -1 NONE
check "cairn_label and cairn_errmsg: refusals change nothing, a label is for one checkpoint, every success leaves \"\"" \
  run_grep 'PASS label' env CAIRN_KEEP=8 CAIRN_JOB="$CAIRN_JOB-label" scripts/mpirun.sh 4 "$TQ" label

fresh query-l1
check "level 1: save 3 generations, each labelled; cairn_generations reports label and seconds" \
  run_grep 'PASS save' q4 save 3 1
check "  ... cairn ls: SECONDS and LABEL columns" \
  run_grep '^ +3 +1 +full +2/2 +4/4 .* [0-9]+\.[0-9]{3} +100% +- +complete +gen 3$' "$BUILD/cairn" ls --job "$CAIRN_JOB"
check "  ... cairn inspect of a manifest: label and seconds" \
  bash -c "run_grep '^label: +gen 2$' '$BUILD/cairn' inspect '$(gen_dir 1 2)/manifest' && run_grep '^seconds: +[0-9]+\.[0-9]{3} s' '$BUILD/cairn' inspect '$(gen_dir 1 2)/manifest'"
check "  ... a query writes nothing" query_writes_nothing 4 -1 READY 3 1 0 0 3
check "  ... READY 3 at level 1, no rebuild; the restart restores 3 bit-exact" \
  run_grep 'PASS query' q4 query -1 READY 3 1 0 0 3
check "  ... max_id 2: READY 2; cairn_restart(2) restores it bit-exact" \
  run_grep 'PASS query' q4 query 2 READY 2 1 0 0
check "  ... max_id 0 (older than any): NONE" run_grep 'PASS query' env T_QUERY_ONLY=1 scripts/mpirun.sh 4 "$TQ" query 0 NONE
check "  ... 2 ranks: UNUSABLE, CAIRN_EMISMATCH naming both layouts, as cairn_restart" \
  run_grep 'errmsg .*written by 4 ranks on 2 nodes; this run has 2 ranks' scripts/mpirun.sh 2 "$TQ" query -1 CAIRN_EMISMATCH
check "  ... restart with no variable protected: CAIRN_ESTATE saying so" \
  run_grep 'message: .*no variable is protected: protect the variables to restore' q4 noprot CAIRN_ESTATE
check "  ... one variable at a time: var_query, allocate, protect, restart_var; nothing else touched" \
  run_grep 'message: .*type int16.*type uint8' q4 var 3
fresh query-files
check "a generation of routed files only: restart with nothing protected restores the files" \
  bash -c "run_grep 'PASS save' env T_NOVARS=1 scripts/mpirun.sh 4 '$TQ' save 2 1 && run_grep 'PASS noprot' scripts/mpirun.sh 4 '$TQ' noprot 0"

fresh query-damaged
check "damaged only copy: save 1 generation at level 1" run_grep 'PASS save' env CAIRN_KEEP=1 scripts/mpirun.sh 4 "$TQ" save 1 1
printf '\xff' | dd of="$(gen_dir 1 1)/rank-3.ckpt" bs=1 seek=5000 conv=notrunc status=none
check "  ... UNUSABLE, CAIRN_ECORRUPT naming the file; the restart fails the same, memory unchanged" \
  run_grep 'errmsg .*rank-3.ckpt.*checksum mismatch' q4 query -1 CAIRN_ECORRUPT

# Node losses: 4 nodes of 2 ranks (level 2, the PFS), or of 1 rank (level 3:
# what it checks does not depend on a node's ranks; the matrix below decodes
# nodes of 2 ranks); one node wiped. cairn_generations counts only
# generations complete on every node (0), the query says what the rebuild
# would give.
fresh query-l2
check "level 2: 8 ranks on 4 nodes save 2 generations" run_grep 'PASS save' q8 save 2 2
wipe_nodes 1
check "  ... node 1 wiped: the query writes nothing" query_writes_nothing 8 -1 READY 2 2 2 1 0
check "  ... READY 2, level 2, rebuild 2, 1 node lost (generations: 0); the restart rebuilds and restores it" \
  run_grep 'PASS query' q8 query -1 READY 2 2 2 1 0
wipe_nodes 2
check "  ... node 2 wiped: restart_var rebuilds and restores one variable bit-exact" \
  run_grep 'PASS var' q8 var -1
export CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_RANKS_PER_NODE=1
fresh query-l3
check "level 3 (a set of 4, m = 2): 4 ranks on 4 nodes save 2 generations" run_grep 'PASS save' q4 save 2 3
wipe_nodes 2
check "  ... node 2 wiped: the query writes nothing" query_writes_nothing 4 -1 READY 2 3 3 1 0
check "  ... READY 2, level 3, rebuild 3, 1 node lost; the restart decodes and restores it" \
  run_grep 'PASS query' q4 query -1 READY 2 3 3 1 0
wipe_nodes 0 1 3
check "  ... 3 nodes wiped, no PFS: UNUSABLE, CAIRN_ELOST naming the set, as cairn_restart" \
  run_grep 'errmsg .*encoding set 0 lost 3 nodes' q4 query -1 CAIRN_ELOST

# Level 4 with 8 ranks on 4 nodes: each node's PFS file holds its 2 ranks'
# data, and restart_var reads one rank's variable out of it.
export CAIRN_RANKS_PER_NODE=2
fresh_pfs query-pfs
check "level 4: save 2 generations to the PFS" run_grep 'PASS save' q8 save 2 4
check "  ... cairn ls: the label of a PFS generation" \
  run_grep '^ +2 .* complete +gen 2$' "$BUILD/cairn" ls --job "$CAIRN_JOB"
wipe_nodes 0 1 2 3
check "  ... every node wiped: the query writes nothing; cairn_generations still lists the PFS's 2" query_writes_nothing 8 -1 READY 2 4 0 4 2
check "  ... READY 2 from level 4, 4 nodes lost; the restart reads it from the PFS, bit-exact, label kept" \
  run_grep 'restoring generation 2 from the PFS \(level 4\)' q8 query -1 READY 2 4 0 4 2
wipe_nodes 0 1 2 3
check "  ... every node wiped again: restart_var restores one variable from the PFS" \
  run_grep 'PASS var' q8 var 2
unset CAIRN_SET_SIZE CAIRN_EC_M

fresh query-incr
check "incremental chain (incr.mode = on, level 2): save 4" \
  run_grep 'PASS save' env CAIRN_INCR=on CAIRN_INCR_BLOCK=1K CAIRN_KEEP=4 scripts/mpirun.sh 4 "$TQ" save 4 2
check "  ... generation 4 is stored as changes to 3" \
  bash -c "'$BUILD/cairn' ls --job '$CAIRN_JOB' | awk '\$1==4' | grep -q 'incr <- 3'"
check "  ... READY 4 (level 2); restart_var of the chain, bit-exact" \
  bash -c "run_grep 'PASS query' env T_QUERY_ONLY=1 scripts/mpirun.sh 4 '$TQ' query -1 READY 4 2 0 0 && run_grep 'PASS var' scripts/mpirun.sh 4 '$TQ' var -1"
wipe_nodes 1
check "  ... node 1 wiped: READY 4, rebuild 2 link by link; restart_var restores from the rebuilt chain" \
  bash -c "run_grep 'PASS query' env T_QUERY_ONLY=1 scripts/mpirun.sh 4 '$TQ' query -1 READY 4 2 2 1 0 && run_grep 'PASS var' scripts/mpirun.sh 4 '$TQ' var 4"

# A fresh start: the application declines a restart and checkpoints ids 1
# and 2 below generations up to 10 (and the PFS's).
fresh_pfs query-fresh
check "fresh start: run A saves 10 generations, the last 2 flushed to the PFS" \
  bash -c "run_grep 'PASS save' env CAIRN_KEEP=10 scripts/mpirun.sh 4 '$TQ' save 8 1 && run_grep 'PASS save' env CAIRN_KEEP=10 T_FIRST=9 scripts/mpirun.sh 4 '$TQ' save 2 4"
check "  ... run B's query says READY 10 (it declines)" \
  run_grep 'PASS query' env T_QUERY_ONLY=1 scripts/mpirun.sh 4 "$TQ" query -1 READY 10 x 0 0
check "  ... run B checkpoints ids 1 and 2 (other data): the old generations are set aside" \
  run_grep 'generation 1 is not older than generation 1 this run is writing .*set aside as abandoned-gen-1' env T_SALT=1 CAIRN_KEEP=10 scripts/mpirun.sh 4 "$TQ" save 2 1
check "  ... old 1..10 kept as abandoned-gen-* on both nodes, 9 and 10 on the PFS; none left in place" \
  bash -c "for n in 0 1; do d=\$(dirname '$(gen_dir 0 1)' | sed \"s/node0\$/node\$n/\"); for g in 1 2 3 4 5 6 7 8 9 10; do test -e \$d/abandoned-gen-\$g/manifest || exit 1; done; ls \$d | grep -qx 'gen-[3-9]\\|gen-10' && exit 1; done; test -e '$(dirname "$(pfs_gen 9)")/abandoned-gen-9/index' && test -e '$(dirname "$(pfs_gen 10)")/abandoned-gen-10/index' && test ! -e '$(pfs_gen 10)'"
check "  ... a restart restores run B's 2 bit-exact, never the old 10" \
  run_grep 'PASS query' env T_SALT=1 scripts/mpirun.sh 4 "$TQ" query -1 READY 2 1 0 0
wipe_nodes 1
check "  ... node 1 wiped: run B's level-1 generation 2 is lost; the old PFS 10 is not offered" \
  run_grep 'errmsg .*generation 2 is lost' env T_SALT=1 scripts/mpirun.sh 4 "$TQ" query -1 CAIRN_ELOST

# The previous release's formats: manifests 3 and PFS index 1 (no label,
# no seconds), rewritten by mkcorpus --previous from a real job's.
fresh_pfs query-old
check "previous formats: save 2 generations at level 4, then every manifest and index rewritten as cairn 0.2.0 wrote them" \
  bash -c "run_grep 'PASS save' env CAIRN_KEEP=2 scripts/mpirun.sh 4 '$TQ' save 2 4 && '$BUILD/tests/mkcorpus' --previous \$(find '$CAIRN_BASE' '$CAIRN_PFS_DIR' -name manifest -o -name index) && od -An -tu4 -j8 -N4 '$(gen_dir 0 2)/manifest' | grep -qx ' *3'"
check "  ... READY 2 (no label), restored bit-exact" \
  run_grep 'PASS query' env T_NOLABEL=1 scripts/mpirun.sh 4 "$TQ" query -1 READY 2 x 0 0
wipe_nodes 0 1
check "  ... every node wiped: restored from the version-1 PFS index, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' env T_NOLABEL=1 scripts/mpirun.sh 4 "$TQ" query -1 READY 2 4 0 2
unset CAIRN_PFS_DIR CAIRN_KEEP
export CAIRN_RANKS_PER_NODE=2

# The matrix: does the query say what the restart then does, for every
# level and every number of nodes lost? 4 nodes of 2 ranks, one set of 4
# with erasure.m = 1. Per setup (node-local levels 1, 2, 3, or 4 with its
# PFS copy removed; and with a PFS copy: id 1 at level 4 under id 2 at
# level 1, 2 or 3, or both at level 4), nodes 0.. wiped (02: nodes 0 and 2):
# STATUS ID LEVEL REBUILD LOST, the restart's generation restored bit-exact
# at that level, or its error, or CAIRN_ENOENT for NONE. Two jobs: the
# setups, then every case (each its own cairn_init in a copy of its setup).
# 8 ranks on purpose: a node's leader speaks for its 2 ranks (a rebuild's
# plan counts the bytes of both ranks of each lost node), a level-2 partner
# copy holds 2 ranks' files, a node's PFS file 2 ranks' data.
export CAIRN_SET_SIZE=4 CAIRN_EC_M=1
matrix_expect() { # SETUP LOST: the answer, as "STATUS ID LEVEL REBUILD LOST"
  local s=$1 k=$2 n; n=$(printf %s "$k" | wc -c); [ "$k" = - ] && n=0
  local local=${s: -1}; [ "$local" = 4 ] && local=3 # level 4 keeps a level-3 copy here
  [ "$k" = - ] && { echo "READY 2 $local 0 0"; return; } # nothing lost: id 2, no rebuild
  case $s:$k in
    *:0123) case $s in nopfs-*) echo "NONE x x x x" ;; pfs-l4) echo "READY 2 4 0 4" ;; *) echo "READY 1 4 0 4" ;; esac ;;
    nopfs-l1:*) echo "CAIRN_ELOST x x x x" ;;
    nopfs-l2:0|nopfs-l2:02) echo "READY 2 2 2 $n" ;;
    nopfs-l3:0|nopfs-l4:0) echo "READY 2 3 3 1" ;;
    nopfs-*) echo "CAIRN_ELOST x x x x" ;;
    pfs-l1:0) echo "READY 1 3 3 1" ;; # id 2 lost at level 1; id 1 rebuilt at level 3
    pfs-l2:0|pfs-l2:02) echo "READY 2 2 2 $n" ;;
    pfs-l3:0|pfs-l4:0) echo "READY 2 3 3 1" ;;
    pfs-l4:*) echo "READY 2 4 0 $n" ;; # more than m lost: the PFS copy
    pfs-*) echo "READY 1 4 0 $n" ;;
  esac
}
matrix() {
  local top; top=$(mktemp -d /dev/shm/cairn-matrix.XXXXXX); SCRATCH_DIRS+=("$top")
  local setups="nopfs-l1 nopfs-l2 nopfs-l3 nopfs-l4 pfs-l1 pfs-l2 pfs-l3 pfs-l4" s k args=()
  declare -A levels=([nopfs-l1]=1,1 [nopfs-l2]=2,2 [nopfs-l3]=3,3 [nopfs-l4]=4,4
                     [pfs-l1]=4,1 [pfs-l2]=4,2 [pfs-l3]=4,3 [pfs-l4]=4,4)
  for s in $setups; do
    mkdir -p "$top/$s/base" "$top/$s/pfs"
    case $s in nopfs-l[123]) args+=("$top/$s/base" -) ;; *) args+=("$top/$s/base" "$top/$s/pfs") ;; esac
    args+=("${levels[$s]}")
  done
  run_grep 'PASS setup' scripts/mpirun.sh 8 "$TQ" setup "${args[@]}" || return 1
  rm -rf "$top/nopfs-l4/pfs/"* # level 4 whose PFS copy is gone: its level-3 copy only
  args=()
  for s in $setups; do
    for k in - 0 01 02 012 0123; do
      local c=$top/case-$s-$k x
      mkdir "$c" && cp -a "$top/$s/base" "$top/$s/pfs" "$c/" || return 1
      for x in $(echo "$k" | grep -o '[0-3]'); do
        rm -rf "$c/base/cairn-$(id -u)/$CAIRN_JOB/node$x"
      done
      args+=("$s/lost:$k" "$c/base")
      case $s in nopfs-l[123]) args+=(-) ;; *) args+=("$c/pfs") ;; esac
      # shellcheck disable=SC2207
      args+=($(matrix_expect "$s" "$k"))
    done
  done
  run_grep 'PASS cases' scripts/mpirun.sh 8 "$TQ" cases "${args[@]}"
}
fresh query-matrix
check "matrix: levels 1-4 x 0-4 nodes lost x with and without a PFS copy (48 cases): the query says what the restart then does, bit-exact" \
  matrix
unset CAIRN_SET_SIZE CAIRN_EC_M
