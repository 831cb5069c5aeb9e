#!/usr/bin/env bash
# run_pfs.sh - level 4: generations flushed to a PFS directory (here tmpfs),
# aggregated N->M; restart falls back to it when more than m nodes of a set
# are lost or every node-local directory is wiped, and says so. Sourced by
# tests/run.sh after run_mpi.sh (uses its fresh/gen_dir helpers and `check`).


# 8 ranks on 4 nodes, one encoding set of 4 with m = 2; groups of 3 ranks:
# M = 3 aggregated files (3 + 3 + 2 ranks), the first two written by node 0
# and node 1 (a node aggregating for ranks of another node).
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_PFS_GROUP=3 T_CODECS=mixed
fresh_pfs pfs
check "level 4: 8 ranks on 4 nodes save 3 generations at level 4" scripts/mpirun.sh 8 "$T" save 3 4
check "  ... the PFS holds generations 2 and 3 (pfs.keep = 2), 3 files and the index each" \
  bash -c "test ! -e '$(pfs_gen 1)' && ls '$(pfs_gen 3)' | tr '\n' ' ' | grep -qx 'agg-000000.cz agg-000001.cz agg-000002.cz index '"
check "  ... and node-local storage holds them at level 3" \
  bash -c "'$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' | awk '\$1==3 && \$2==3' | grep -q ."
check "  ... a new job restores from node-local storage (no PFS message)" \
  bash -c "out=\$(scripts/mpirun.sh 8 $T restore 3 2>&1) && ! grep -q 'from the PFS' <<<\"\$out\""
wipe_nodes 0 1 3
check "  ... 3 of 4 nodes lost (m = 2): restart falls back to level 4 and says so, bit-exact" \
  run_grep 'restoring generation 3 from the PFS \(level 4\): .*generation 3: encoding set 0 lost 3 nodes' scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
check "  ... every node-local directory wiped: restored from the PFS, bit-exact" \
  scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
check "  ... on another node layout (8 ranks on 2 nodes) from the PFS, bit-exact" \
  env CAIRN_RANKS_PER_NODE=4 CAIRN_JOB="$CAIRN_JOB" scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
f=$(pfs_gen 3)/agg-000001.cz
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
check "  ... a corrupt aggregated file is detected and the older PFS generation restored" \
  run_grep 'PFS generation 3 is unusable \(.*agg-000001.cz: checksum does not match the index' scripts/mpirun.sh 8 "$T" restore 2
rm -rf "$(pfs_gen 2)/index"
wipe_nodes 0 1 2 3
check "  ... no complete PFS generation left: CAIRN_ENOENT" scripts/mpirun.sh 8 "$T" expect-fail CAIRN_ENOENT

for s in agnostic agnostic-block aware aware-block auto; do
  fresh_pfs "pfs-$s"
  check "level 4, scheme $s: save at level 4, wipe every node, restore bit-exact" \
    bash -c "CAIRN_PFS_SCHEME=$s CAIRN_PFS_BLOCK=64K scripts/mpirun.sh 8 $T save 1 4 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && scripts/mpirun.sh 8 $T restore 1"
done

fresh_pfs pfs-incr
check "level 4 of an incremental chain (changed blocks only on node-local storage): save 4" \
  env CAIRN_INCR=on CAIRN_PFS_EVERY=2 scripts/mpirun.sh 8 "$T" save 4 3
check "  ... pfs.every = 2 flushed generations 2 and 4 of 4 at level 3" \
  bash -c "test -e '$(pfs_gen 2)/index' && test -e '$(pfs_gen 4)/index' && test ! -e '$(pfs_gen 3)'"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 4 (materialized from its chain) restores bit-exact" \
  scripts/mpirun.sh 8 "$T" restore 4

fresh_pfs pfs-one
check "level 4 on a single node (no level 2 or 3 possible), 4 ranks, groups of 3" \
  bash -c "CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh 4 $T save 2 4 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh 4 $T restore 2"
unset T_CODECS CAIRN_PFS_DIR CAIRN_PFS_GROUP CAIRN_SET_SIZE CAIRN_EC_M
export CAIRN_RANKS_PER_NODE=2
