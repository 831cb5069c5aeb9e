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
check "  ... and node-local storage holds them at level 3 (cairn ls without the PFS), LEVEL 4 with it" \
  bash -c "env -u CAIRN_PFS_DIR '$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' 2>/dev/null | awk '\$1==3 && \$2==3' | grep -q . &&
           '$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' | awk '\$1==3 && \$2==4' | grep -q ."
check "  ... a new job restores from node-local storage (no PFS message)" \
  bash -c "out=\$(scripts/mpirun.sh 8 $T restore 3 2>&1) && ! grep -q 'from the PFS' <<<\"\$out\""
wipe_nodes 0 1 3
check "  ... 3 of 4 nodes lost (m = 2): restart falls back to level 4 and says so, bit-exact" \
  run_grep 'restoring generation 3 from the PFS \(level 4\): .*generation 3: encoding set 0 lost 3 nodes' scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
check "  ... every node-local directory wiped: restored from the PFS, bit-exact" \
  scripts/mpirun.sh 8 "$T" restore 3
# Each rank reads its share straight into protected memory (issue 18): the
# PFS keeps the generation, node-local storage gets nothing until the next
# checkpoint, and a restart before then reads the PFS again.
no_local_gen() { # no_local_gen G: no node of 0-3 holds a directory of generation G
  local n; for n in 0 1 2 3; do
    [ ! -e "$(gen_dir "$n" "$1")" ] || { echo "$(gen_dir "$n" "$1") exists"; return 1; }
  done
}
check "  ... straight into memory: no node wrote generation 3 on node-local storage" no_local_gen 3
check "  ... a second restart before any checkpoint reads the PFS again, bit-exact" \
  run_grep 'restoring generation 3 from the PFS \(level 4\): node-local storage holds none' scripts/mpirun.sh 8 "$T" restore 3
check "  ... a protected variable generation 3 lacks: CAIRN_EMISMATCH naming it, every rank's memory untouched" \
  run_grep "message: .*variable 'x0' is not in generation 3" env T_VARS=none:100 scripts/mpirun.sh 8 "$T" expect-fail CAIRN_EMISMATCH
check "  ... then a job checkpoints generation 4 at level 1 (full, no parent here) and restores it from node-local storage, bit-exact" \
  bash -c "T_THEN=4 scripts/mpirun.sh 8 $T restore 3 >/dev/null && out=\$(scripts/mpirun.sh 8 $T restore 4 2>&1) && ! grep -q 'from the PFS' <<<\"\$out\""
wipe_nodes 0 1 2 3
check "  ... on another node layout (8 ranks on 2 nodes) from the PFS, bit-exact" \
  env CAIRN_RANKS_PER_NODE=4 CAIRN_JOB="$CAIRN_JOB" scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
f=$(pfs_gen 3)/agg-000001.cz # a restore verifies what each node decodes: a raw unit by its frame
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
check "  ... a corrupt aggregated file is detected and the older PFS generation restored" \
  run_grep 'PFS generation 3 is unusable \(.*agg-000001.cz: (checksum does not match the index|.*fails its checksum|.*checksum mismatch)' scripts/mpirun.sh 8 "$T" restore 2
rm -rf "$(pfs_gen 2)/index"
wipe_nodes 0 1 2 3
check "  ... no usable PFS generation left (3 damaged, 2 without index): CAIRN_ECORRUPT naming the file, not ENOENT" \
  run_grep 'PFS generation 3 .*agg-000001.cz: (checksum does not match the index|.*fails its checksum|.*checksum mismatch)' scripts/mpirun.sh 8 "$T" expect-fail CAIRN_ECORRUPT

export CAIRN_RANKS_PER_NODE=1 # schemes and pfs.every: 4 ranks, one per node (groups of 3 and 1)
for s in agnostic agnostic-block aware aware-block auto; do
  fresh_pfs "pfs-$s"
  check "level 4, scheme $s: save at level 4, wipe every node, restore bit-exact" \
    bash -c "CAIRN_PFS_SCHEME=$s CAIRN_PFS_BLOCK=64K scripts/mpirun.sh 4 $T save 1 4 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && scripts/mpirun.sh 4 $T restore 1"
done

fresh_pfs pfs-incr
check "level 4 of an incremental chain (changed blocks only on node-local storage): save 4" \
  env CAIRN_INCR=on CAIRN_PFS_EVERY=2 scripts/mpirun.sh 4 "$T" save 4 3
check "  ... pfs.every = 2 flushed generations 2 and 4 of 4 at level 3" \
  bash -c "test -e '$(pfs_gen 2)/index' && test -e '$(pfs_gen 4)/index' && test ! -e '$(pfs_gen 3)'"
check "  ... generation 4's node-local parent (3) is not on the PFS: it went there full" \
  run_grep '^chain: +full$' "$BUILD/cairn" inspect "$(pfs_gen 4)/index"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 4 (materialized from its chain) restores bit-exact" \
  scripts/mpirun.sh 4 "$T" restore 4

# Increments on the PFS (issue 18): a generation node-local storage holds as
# changes to its parent goes to the PFS as those changes when the PFS holds
# the parent; a restore from the PFS alone applies the chain from its base.
TI=$BUILD/tests/t_incr
pfs_bytes() { du -sb "$(pfs_gen "$1")" | cut -f1; }
export -f pfs_bytes
export CAIRN_RANKS_PER_NODE=2 # 8 ranks: each node leader flushes its 2 ranks' changes (flush_incr.c)
fresh_pfs pfs-l4incr
export CAIRN_INCR=on CAIRN_INCR_BLOCK=4K T_WORK=few
check "level 4 increments: 8 ranks on 4 nodes save 5 incremental generations at level 4" \
  scripts/mpirun.sh 8 "$TI" save 5 4
check "  ... PFS generation 1 is full, 2..5 each name their parent (a chain from 1)" \
  bash -c "'$BUILD/cairn' inspect '$(pfs_gen 1)/index' | grep -Eq '^chain: +full$' &&
           for g in 2 3 4 5; do '$BUILD/cairn' inspect \"$(dirname "$(pfs_gen 0)")/gen-\$g/index\" | grep -Eq \"^chain: +incr <- \$((g - 1)): .*a chain from 1\" || exit 1; done"
check "  ... generation 5 on the PFS holds only the changed bytes (under 1/8 of generation 1's)" \
  bash -c "s1=\$(pfs_bytes 1); s5=\$(pfs_bytes 5); echo \"gen-1 \$s1 bytes, gen-5 \$s5 bytes\"; [ \$((s5 * 8)) -lt \$s1 ]"
check "  ... pfs.keep = 2 kept 4 and 5 and the whole chain they need (1, 2, 3)" \
  bash -c "for g in 1 2 3 4 5; do test -e \"$(dirname "$(pfs_gen 0)")/gen-\$g/index\" || exit 1; done"
check "  ... cairn ls: the PFS column says which are increments" \
  run_grep '^ +5 +4 .*incr <- 4' "$BUILD/cairn" ls --base "$CAIRN_BASE" --job "$CAIRN_JOB"
check "  ... cairn prune --gen 1 refuses: generation 2 (kept) is stored as changes to it" \
  run_grep_rc 1 'gen-1: not removed: PFS generation [2-5] is stored as changes to it' \
  "$BUILD/cairn" prune --job "$CAIRN_JOB" --base "$CAIRN_BASE" --gen 1
check "  ... and left it there" test -e "$(pfs_gen 1)/index"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 5 restored from the PFS chain 1..5, bit-exact" \
  run_grep 'restoring generation 5 from the PFS' scripts/mpirun.sh 8 "$TI" restore 5
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 3 (a link in the middle) restored, bit-exact" \
  scripts/mpirun.sh 8 "$TI" restore-id 3
f=$(pfs_gen 2)/agg-000001.cz
cp "$f" "$CAIRN_PFS_DIR/agg.good"
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
wipe_nodes 0 1 2 3
check "  ... link 2 damaged: 5, 4, 3 and 2 unusable, the message names link 2; generation 1 restored, bit-exact" \
  run_grep 'PFS generation 5 \(changes since 4, a chain from 1\) needs generation 2: agg-000001.cz' scripts/mpirun.sh 8 "$TI" restore 1
wipe_nodes 0 1 2 3
check "  ... restart of generation 5 itself: CAIRN_ECORRUPT naming link 2, memory unchanged" \
  run_grep 'needs generation 2: agg-000001.cz' scripts/mpirun.sh 8 "$TI" expect-fail-id 5 CAIRN_ECORRUPT
cp "$CAIRN_PFS_DIR/agg.good" "$f"
mv "$(pfs_gen 1)/index" "$CAIRN_PFS_DIR/index.1"
wipe_nodes 0 1 2 3
check "  ... the base's index gone: restart of 5 is CAIRN_ECORRUPT saying link 1 is missing, not ENOENT" \
  run_grep 'PFS generation 5 .*its link 1 is missing' scripts/mpirun.sh 8 "$TI" expect-fail-id 5 CAIRN_ECORRUPT
check "  ... cairn verify --job says generation 5's chain is broken" \
  run_grep_rc 4 'gen-5/index.*its link 1 is missing' "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB"
mv "$CAIRN_PFS_DIR/index.1" "$(pfs_gen 1)/index"

export CAIRN_RANKS_PER_NODE=1
fresh_pfs pfs-l4incr-routed
check "level 4 increments with a routed file and every block changed (incr.max_changed = 100): save 3" \
  env -u T_CODECS CAIRN_INCR_MAX_CHANGED=100 scripts/mpirun.sh 4 "$T" save 3 4
check "  ... PFS generation 3 is the changes since 2" \
  run_grep '^chain: +incr <- 2' "$BUILD/cairn" inspect "$(pfs_gen 3)/index"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 3 and its routed file from the PFS chain, bit-exact" \
  env -u T_CODECS scripts/mpirun.sh 4 "$T" restore 3

fresh_pfs pfs-l4incr-keep
check "level 4 increments, incr.full_every = 3, pfs.keep = 1: 4 ranks save 6 generations at level 4" \
  env CAIRN_INCR_FULL_EVERY=3 CAIRN_PFS_KEEP=1 scripts/mpirun.sh 4 "$TI" save 6 4
check "  ... the PFS holds the chain 4 <- 5 <- 6 (pfs.keep counts 6, its chain stays), not 1-3" \
  bash -c "for g in 4 5 6; do test -e \"$(dirname "$(pfs_gen 0)")/gen-\$g/index\" || exit 1; done;
           for g in 1 2 3; do test ! -e \"$(dirname "$(pfs_gen 0)")/gen-\$g\" || exit 1; done;
           '$BUILD/cairn' inspect '$(pfs_gen 4)/index' | grep -Eq '^chain: +full$'"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 6 restored from the PFS chain 4..6, bit-exact" \
  env CAIRN_INCR_FULL_EVERY=3 scripts/mpirun.sh 4 "$TI" restore 6

fresh_pfs pfs-l4incr-back
check "level 4 increments and a restart that goes back: save 5 at level 4" \
  scripts/mpirun.sh 4 "$TI" save 5 4
check "  ... a new job restores 3, writes 4 at level 1 and 5 at level 4: 5 (parent 3, the newest at level 3) goes as changes to the PFS's 3" \
  bash -c "scripts/mpirun.sh 4 $TI resume-id 3 5 4 && '$BUILD/cairn' inspect '$(pfs_gen 5)/index' | grep -Eq '^chain: +incr <- 3: '"
wipe_nodes 0 1 2 3
check "  ... every node wiped: the new 5 restores bit-exact" scripts/mpirun.sh 4 "$TI" restore 5

# The PFS parent must hold what node-local storage diffed against: an index
# that does not say which node-local files it was flushed from (version 1, as
# cairn 0.2.0 wrote) never takes an increment.
fresh_pfs pfs-l4incr-source
check "level 4 increments onto a parent of unknown source: save 1 at level 4, its index rewritten as version 1" \
  bash -c "scripts/mpirun.sh 4 $TI save 1 4 && '$BUILD/tests/mkcorpus' --previous '$(pfs_gen 1)/index' && '$BUILD/cairn' inspect '$(pfs_gen 1)/index' | grep -q 'format version 1'"
check "  ... a new job restores 1 and writes 2 at level 4: an increment node-local, full on the PFS" \
  bash -c "scripts/mpirun.sh 4 $TI resume-id 1 2 4 && '$BUILD/cairn' inspect '$(pfs_gen 2)/index' | grep -Eq '^chain: +full$' &&
           '$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' | grep -Eq '^ +2 .*incr <- 1'"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restores bit-exact" scripts/mpirun.sh 4 "$TI" restore 2
unset CAIRN_INCR CAIRN_INCR_BLOCK T_WORK

fresh_pfs pfs-one
check "level 4 on a single node (no level 2 or 3 possible), 4 ranks, groups of 3" \
  bash -c "CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh 4 $T save 2 4 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh 4 $T restore 2"

# A damaged last copy never looks like no copy (issue 16, defect 7).
export CAIRN_RANKS_PER_NODE=2
fresh_pfs pfs-damaged
check "damaged PFS copy: 4 ranks on 2 nodes save 2 generations at level 4 (pfs.keep = 1)" \
  env CAIRN_PFS_KEEP=1 scripts/mpirun.sh 4 "$T" save 2 4
f=$(pfs_gen 2)/agg-000000.cz
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
check "  ... PFS copy damaged, node-local intact: restored from node-local bit-exact, and a warning names the PFS file" \
  run_grep 'PFS copy of generation 2 is damaged.*agg-000000.cz: (checksum does not match the index|.*checksum mismatch)' scripts/mpirun.sh 4 "$T" restore 2
wipe_nodes 0 1
# (which checksum fails first depends on the codecs the flush picked, and so on the PFS speed it measured)
check "  ... node-local storage wiped, the only PFS generation damaged: CAIRN_ECORRUPT naming the file, not ENOENT" \
  run_grep 'PFS generation 2 .*agg-000000.cz: (checksum does not match the index|.*fails its checksum|.*checksum mismatch)' scripts/mpirun.sh 4 "$T" expect-fail CAIRN_ECORRUPT
check "  ... and the damaged generation is still there (nothing removed)" test -e "$f"
fresh_pfs pfs-damaged-raw
check "damaged raw PFS copy (compression off: each payload only under its frame's checksum): 4 ranks on 2 nodes save 2 generations at level 4" \
  env CAIRN_CODEC=none CAIRN_PFS_KEEP=1 scripts/mpirun.sh 4 "$T" save 2 4
f=$(pfs_gen 2)/agg-000000.cz
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
wipe_nodes 0 1
check "  ... every node wiped, a byte of a raw payload flipped: CAIRN_ECORRUPT naming the file" \
  run_grep 'PFS generation 2 .*agg-000000.cz: .*(fails its checksum|checksum mismatch)' scripts/mpirun.sh 4 "$T" expect-fail CAIRN_ECORRUPT

# A restart that cannot use the checkpoint never destroys it (issue 16, defect 2).
fresh_pfs pfs-layout
check "another rank count: 4 ranks on 2 nodes save 3 generations at level 4" scripts/mpirun.sh 4 "$T" save 3 4
check "  ... restart as 2 ranks: CAIRN_EMISMATCH naming both layouts (node-local)" \
  run_grep 'generation 3 was written by 4 ranks on 2 nodes; this run has 2 ranks on 1 node' scripts/mpirun.sh 2 "$T" expect-fail CAIRN_EMISMATCH
empty=$(mktemp -d /dev/shm/cairn-test.XXXXXX); SCRATCH_DIRS+=("$empty")
check "  ... restart as 2 ranks with no node-local storage (level 4 only): CAIRN_EMISMATCH naming both" \
  run_grep 'PFS generation 3 was written by 4 ranks on 2 nodes; this run has 2 ranks on 1 node' env CAIRN_BASE="$empty" scripts/mpirun.sh 2 "$T" expect-fail CAIRN_EMISMATCH
check "  ... the 2-rank run may not write over the 4-rank generation 2: CAIRN_EMISMATCH naming it" \
  run_grep_rc 1 'checkpoint 2: .*generation 2 .*written by 4 ranks on 2 nodes' scripts/mpirun.sh 2 "$T" save 3 4
check "  ... the 2-rank run checkpoints generations 11-13 at level 4 (starting fresh)" \
  env T_FIRST=11 scripts/mpirun.sh 2 "$T" save 3 4
check "  ... the 4-rank generations 2 and 3 are all still there: PFS and both nodes" \
  bash -c "test -e '$(pfs_gen 2)/index' && test -e '$(pfs_gen 3)/index' && test -e '$(gen_dir 0 2)/manifest' && test -e '$(gen_dir 0 3)/manifest' && test -e '$(gen_dir 1 2)/manifest' && test -e '$(gen_dir 1 3)/manifest'"
check "  ... the 2-rank run's own pruning still works (pfs.keep = 2: 11 gone, 13 there)" \
  bash -c "test ! -e '$(pfs_gen 11)' && test -e '$(pfs_gen 13)/index'"
check "  ... a 2-rank restart restores its generation 13 bit-exact" scripts/mpirun.sh 2 "$T" restore 13
check "  ... a 4-rank restart restores generation 3 bit-exact (node-local)" scripts/mpirun.sh 4 "$T" restore 3
wipe_nodes 0 1
check "  ... and with every node wiped, from the PFS (past the newer 2-rank ones), bit-exact" \
  run_grep 'restoring generation 3 from the PFS' scripts/mpirun.sh 4 "$T" restore 3

# An abandoned timeline on the PFS: run A flushes 100 and 200, run B restores
# 100 and flushes 150; with every node wiped the restart must take run B's
# 150, and 200 is set aside on the PFS (kept, never staged in).
export CAIRN_RANKS_PER_NODE=1
fresh_pfs pfs-abandoned
check "PFS abandoned timeline: run A flushes 100 and 200; run B restores 100, flushes 150" \
  bash -c "T_FIRST=100 T_STEP=100 scripts/mpirun.sh 4 $T save 2 4 >/dev/null && T_THEN=150 scripts/mpirun.sh 4 $T restore-id 100 4"
check "  ... the PFS generation 200 is set aside, not removed" \
  bash -c "test -e \"\$(dirname '$(pfs_gen 200)')/abandoned-gen-200/index\" && test ! -e '$(pfs_gen 200)' && test -e '$(pfs_gen 150)/index'"
wipe_nodes 0 1 2 3
check "  ... every node wiped: the restart takes 150 from the PFS, bit-exact, not 200" \
  run_grep 'restoring generation 150 from the PFS' scripts/mpirun.sh 4 "$T" restore 150
# A generation level 1 stored raw goes to the PFS as it is (issue 18, part 4):
# no codec would pay there either, so each node writes its own ranks' file
# from their verified rank files (lent, not copied) and nothing is sent.
# With T_RAW (and without T_CODECS), t_ckpt's variables are noise: stored raw.
export CAIRN_RANKS_PER_NODE=2 # one file per node, of its 2 ranks
fresh_pfs pfs-raw
check "level 4, raw generation: 8 ranks on 4 nodes save 3 generations (pfs.group 3)" \
  env -u T_CODECS T_RAW=1 scripts/mpirun.sh 8 "$T" save 3 4
check "  ... one file per node (its 2 ranks, not pfs.group's 3), the index says so" \
  bash -c "ls '$(pfs_gen 3)' | tr '\n' ' ' | grep -qx 'agg-000000.cz agg-000001.cz agg-000002.cz agg-000003.cz index ' &&
           '$BUILD/cairn' inspect '$(pfs_gen 3)/index' | grep -Eq '^ranks: +8 on 4 nodes, 2 per file\$'"
check "  ... generation 1 pruned (pfs.keep = 2), nothing of it left behind in the job directory" \
  bash -c "test ! -e '$(pfs_gen 1)' && test -e '$(pfs_gen 2)/index' && ! ls -A \"\$(dirname '$(pfs_gen 3)')\" | grep -v '^gen-'"
check "  ... its files verify (cairn verify --job)" \
  "$BUILD/cairn" verify --job "$CAIRN_JOB"
wipe_nodes 0 1 2 3
check "  ... every node wiped: restored from the PFS, bit-exact" \
  env -u T_CODECS T_RAW=1 scripts/mpirun.sh 8 "$T" restore 3
wipe_nodes 0 1 2 3
check "  ... and onto another node layout (8 ranks on 2 nodes), bit-exact" \
  env -u T_CODECS T_RAW=1 CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh 8 "$T" restore 3
mkdir -p "$(dirname "$(pfs_gen 3)")/.trash-gen-1.99999/x" # what a crash mid-removal leaves
check "  ... generation 4 flushed, pruning nothing (pfs.keep 10): a crash's leftover trash is removed" \
  bash -c "env -u T_CODECS T_RAW=1 T_FIRST=4 CAIRN_PFS_KEEP=10 scripts/mpirun.sh 8 $T save 1 4 >/dev/null &&
           ! ls -A \"\$(dirname '$(pfs_gen 3)')\" | grep -v '^gen-' &&
           test -e '$(pfs_gen 2)/index' && test -e '$(pfs_gen 3)/index' && test -e '$(pfs_gen 4)/index'"
fresh_pfs pfs-raw-odd
check "level 4, raw generation on nodes of unequal rank counts (3 ranks on 2 nodes): a file per rank, bit-exact after a wipe" \
  bash -c "env -u T_CODECS T_RAW=1 scripts/mpirun.sh 3 $T save 2 4 >/dev/null &&
           ls '$(pfs_gen 2)' | tr '\n' ' ' | grep -qx 'agg-000000.cz agg-000001.cz agg-000002.cz index ' &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && env -u T_CODECS T_RAW=1 scripts/mpirun.sh 3 $T restore 2"
fresh_pfs pfs-mixed
check "level 4, compressible data keeps a pfs.group set (T_CODECS=mixed, 8 ranks: 3 files of 3, 3 and 2 ranks)" \
  bash -c "scripts/mpirun.sh 8 $T save 1 4 >/dev/null && '$BUILD/cairn' inspect '$(pfs_gen 1)/index' | grep -Eq '^ranks: +8 on 4 nodes, 3 per file\$'"
# One writer per node by default (issue 31), compressed or not: with pfs.group
# unset each node writes its own ranks' file, nothing sent between nodes; and a
# generation level 1 stored raw takes that path whatever led there
# (compress.codec = none, not only auto).
fresh_pfs pfs-pernode
check "level 4, default pfs.group, compressible data (T_CODECS=mixed): one file per node, bit-exact after a wipe" \
  bash -c "env -u CAIRN_PFS_GROUP scripts/mpirun.sh 8 $T save 2 4 >/dev/null &&
           '$BUILD/cairn' inspect '$(pfs_gen 2)/index' | grep -Eq '^ranks: +8 on 4 nodes, 2 per file\$' &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && env -u CAIRN_PFS_GROUP scripts/mpirun.sh 8 $T restore 2"
fresh_pfs pfs-none
check "level 4, compress.codec = none with pfs.group 3 set (T_RAW: no bound): level 1 stored raw, so one file per node, bit-exact after a wipe" \
  bash -c "env -u T_CODECS T_RAW=1 CAIRN_CODEC=none scripts/mpirun.sh 8 $T save 2 4 >/dev/null &&
           '$BUILD/cairn' inspect '$(pfs_gen 2)/index' | grep -Eq '^ranks: +8 on 4 nodes, 2 per file\$' &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && env -u T_CODECS T_RAW=1 CAIRN_CODEC=none scripts/mpirun.sh 8 $T restore 2"
# Level 1's frames go to the PFS as they are (issue 31): a variable level 1
# stored compressed is not decoded to be written raw (or encoded again), so
# each node's file is about the size of its ranks' rank files, not of their
# variables (2 ranks x 12 MiB of slow ramps, lz4 and zstd, here 0.13 MiB a rank file).
fresh_pfs pfs-frames
pfs_not_larger() { # G: each node's PFS file at most its node's rank files + 16 KiB
  local n f l
  for n in 0 1 2 3; do
    f=$(stat -c %s "$(pfs_gen "$1")/agg-00000$n.cz") || return 1
    l=$(cat "$(gen_dir "$n" "$1")"/rank-*.ckpt | wc -c)
    [ "$f" -le $((l + 16384)) ] || { echo "node $n: PFS file $f bytes, its rank files $l"; return 1; }
  done
}
check "level 4 through level 1 (pfs.direct off), compressed variables: each node's PFS file holds level 1's frames (no larger than its rank files)" \
  bash -c "T_NOROUTE=1 T_VARS=lz4:8388608:r,zstd:4194304:r CAIRN_PFS_DIRECT=off env -u CAIRN_PFS_GROUP -u T_CODECS scripts/mpirun.sh 8 $T save 2 4 >/dev/null &&
           $(declare -f pfs_gen gen_dir pfs_not_larger); pfs_not_larger 2"
wipe_nodes 0 1 2 3
check "  ... every node wiped: restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' env -u T_CODECS T_NOROUTE=1 T_VARS=lz4:8388608:r,zstd:4194304:r scripts/mpirun.sh 8 "$T" restore 2
export CAIRN_RANKS_PER_NODE=1 # 4 ranks: groups of 3 (ranks 0-2 on 3 nodes) and 1
fresh_pfs pfs-frames-mixed
check "level 4 through level 1, mixed codecs across ranks and schemes aware-block and pfs.group 3 (frames decoded where a group cannot take them), bit-exact after a wipe" \
  bash -c "for s in aware aware-block; do T_VARS=lz4:1048576:r,zstd:300000:r CAIRN_PFS_SCHEME=\$s CAIRN_PFS_DIRECT=off scripts/mpirun.sh 4 $T save 1 4 >/dev/null &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && T_VARS=lz4:1048576:r,zstd:300000:r scripts/mpirun.sh 4 $T restore 1 >/dev/null &&
           rm -rf '$CAIRN_PFS_DIR'/* || exit 1; done"
# compress.codec = none holds on the PFS too: a slow PFS (pfs.bandwidth 10 MiB/s,
# where the model would compress) still gets every group raw, the file at least
# as large as its variables' bytes.
fresh_pfs pfs-none-raw
pfs_raw_file() {
  local f=$1 o
  o=$("$BUILD/cairn" inspect "$f") || return 1
  awk -v size="$(stat -c %s "$f")" '$1 ~ /^[0-9]+$/ && NF >= 7 {b += $NF} END {
    if (b > 0 && size >= b) exit 0; print "file " size " bytes, variables " b; exit 1 }' <<<"$o"
}
check "level 4 with compress.codec = none on a slow PFS (pfs.bandwidth 10): every group raw, bit-exact after a wipe" \
  bash -c "CAIRN_CODEC=none CAIRN_PFS_BANDWIDTH=10 scripts/mpirun.sh 4 $T save 1 4 >/dev/null &&
           $(declare -f pfs_raw_file); BUILD='$BUILD' pfs_raw_file '$(pfs_gen 1)/agg-000000.cz' &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && CAIRN_CODEC=none scripts/mpirun.sh 4 $T restore 1"
# pfs.direct (issue 31): a synchronous level-4 checkpoint written from memory
# straight to the PFS, a file per rank, the index last; nothing node-local.
# t_ckpt with T_NOROUTE routes no file (a routed file goes by level 1).
export CAIRN_RANKS_PER_NODE=2 # a file per rank, not per node: 2 ranks a node tell them apart
fresh_pfs pfs-direct
check "pfs.direct on: 8 ranks on 4 nodes write generations 1 and 2 at level 4 straight to the PFS, a file per rank, nothing node-local" \
  bash -c "T_NOROUTE=1 CAIRN_PFS_DIRECT=on scripts/mpirun.sh 8 $T save 2 4 >/dev/null &&
           '$BUILD/cairn' inspect '$(pfs_gen 2)/index' | grep -Eq '^ranks: +8 on 4 nodes, 1 per file\$' &&
           test -z \"\$(ls -d '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB'/node*/gen-* 2>/dev/null)\""
check "  ... cairn_generations lists both, at level 4 (on the PFS only)" \
  env T_GEN_LEVELS=4,4 scripts/mpirun.sh 8 "$T" gens 2
check "  ... every node intact, the restart takes 2 from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' env T_NOROUTE=1 scripts/mpirun.sh 8 "$T" restore 2
check "  ... then generation 3 at level 1 (node-local, as before): the restart takes 3, bit-exact" \
  bash -c "T_NOROUTE=1 CAIRN_PFS_DIRECT=on T_FIRST=3 scripts/mpirun.sh 8 $T save 1 1 >/dev/null &&
           T_NOROUTE=1 scripts/mpirun.sh 8 $T restore 3"
check "  ... cairn_generations lists 3 at level 1, then 2 and 1 at level 4" \
  env T_GEN_LEVELS=1,4,4 scripts/mpirun.sh 8 "$T" gens 3
wipe_nodes 0 1 2 3
check "  ... every node wiped: cairn_generations still lists 2 and 1, at level 4" \
  env T_GEN_LEVELS=4,4 scripts/mpirun.sh 8 "$T" gens 2
check "  ... every node wiped: 2 from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' env T_NOROUTE=1 scripts/mpirun.sh 8 "$T" restore 2
# direct_picks: generations 4-6 straight to the PFS, debug logs: the share
# probed, and each rank's file of generation 4 samples its codecs while 5 and
# 6 take the picks kept (ctx->pfs_memo) and sample none.
direct_picks() {
  local out seq
  out=$(T_NOROUTE=1 CAIRN_PFS_DIRECT=on CAIRN_LOG_LEVEL=debug T_FIRST=4 scripts/mpirun.sh 8 "$T" save 3 4 2>&1) ||
    { echo "save failed"; tail -n 20 <<<"$out"; return 1; }
  grep -Eq 'the PFS \(.*\) writes [1-9][0-9]* MiB/s per writer, 8 of them writing at once on this host, as measured' <<<"$out" ||
    { echo "no probe line"; return 1; }
  seq=$(grep -Eo 'agg-[0-9]+\.cz: ranks .*, [0-9]+ codec\(s\) sampled, the others kept' <<<"$out" |
        sed -E 's/^(agg-[0-9]+)\.cz: .*, ([0-9]+) codec\(s\) sampled.*/\1 \2/' | sort -s -k1,1 |
        awk '{ s[$1] = s[$1] ($2 > 0 ? "S" : "k") } END { for (f in s) print f, s[f] }' | sort)
  [ "$(wc -l <<<"$seq")" -eq 8 ] && [ "$(awk '{ print $2 }' <<<"$seq" | sort -u)" = Skk ] ||
    { echo "codecs sampled, per file and generation (S sampled, k kept):"; echo "$seq"; return 1; }
}
check "  ... each writer's share of the PFS measured once for the job (pfs.bandwidth 0), the 8 ranks of this host writing at once; level 4's model takes it, and each rank samples its codecs in the first straight level 4 and keeps the picks for the next (compress.resample 8)" \
  direct_picks
export CAIRN_RANKS_PER_NODE=1 # the pfs.direct scenarios below: 4 ranks, one per node
fresh_pfs pfs-direct-default
check "the default (the suite pins pfs.direct off; unset, it is on): generation 1 at level 4 straight to the PFS, a file per rank, nothing node-local" \
  bash -c "env -u CAIRN_PFS_DIRECT T_NOROUTE=1 scripts/mpirun.sh 4 $T save 1 4 >/dev/null &&
           '$BUILD/cairn' inspect '$(pfs_gen 1)/index' | grep -Eq '^ranks: +4 on 4 nodes, 1 per file\$' &&
           test -z \"\$(ls -d '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB'/node*/gen-* 2>/dev/null)\""
wipe_nodes 0 1 2 3
check "  ... every node wiped: restored from the PFS, bit-exact" \
  run_grep 'restoring generation 1 from the PFS' env -u CAIRN_PFS_DIRECT T_NOROUTE=1 scripts/mpirun.sh 4 "$T" restore 1
fresh_pfs pfs-direct-crash
check "pfs.direct: generation 1 at level 1, then a crash in generation 2's level 4 after its files, before its index" \
  bash -c "T_NOROUTE=1 scripts/mpirun.sh 4 $T save 1 1 >/dev/null &&
           ! CAIRN_FAULT=pfs.index:gen=2:rank=0 T_NOROUTE=1 CAIRN_PFS_DIRECT=on T_FIRST=2 scripts/mpirun.sh 4 $T save 1 4 >/dev/null 2>&1 &&
           test -d '$(pfs_gen 2)' && test ! -e '$(pfs_gen 2)/index'"
check "  ... the restart takes generation 1, bit-exact: the unindexed one is no generation" \
  env T_NOROUTE=1 scripts/mpirun.sh 4 "$T" restore 1
# A rank whose PFS file cannot be written (RLIMIT_FSIZE: EFBIG) while the
# others write theirs: the one gather tells rank 0, which writes no index,
# and every rank returns the failure with rank 3's message.
fresh_pfs pfs-direct-fail
check "pfs.direct: generation 1 at level 4; then rank 3's files stop at 64 KiB, and generation 2's level 4 fails on every rank with rank 3's message" \
  bash -c "T_NOROUTE=1 CAIRN_PFS_DIRECT=on scripts/mpirun.sh 4 $T save 1 4 >/dev/null &&
           $(declare -f run_grep); run_grep 'message: rank 3: .*(File too large|EFBIG)' \
             env T_NOROUTE=1 CAIRN_PFS_DIRECT=on T_FSIZE_RANK=3 T_FSIZE=65536 T_ID=2 \
             scripts/mpirun.sh 4 $T level 4 -27" # -EFBIG
check "  ... generation 2 has no index on the PFS, and the restart takes generation 1, bit-exact" \
  bash -c "test ! -e '$(pfs_gen 2)/index' && T_NOROUTE=1 scripts/mpirun.sh 4 $T restore 1"
fresh_pfs pfs-direct-routed
check "pfs.direct on, but a routed file: the checkpoint goes through level 1 (node-local copy), bit-exact after a wipe" \
  bash -c "CAIRN_PFS_DIRECT=on scripts/mpirun.sh 4 $T save 1 4 >/dev/null && test -e '$(gen_dir 0 1)/manifest' &&
           rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && scripts/mpirun.sh 4 $T restore 1"
# Rank 0 makes the PFS directory of a straight level 4 before the first
# reduction of the checkpoint; when another rank rules the straight write out
# (a routed file on rank 3 alone), the directory goes again, and level 1 and
# the flush take the generation.
fresh_pfs pfs-direct-drop
check "pfs.direct on, a routed file on rank 3 alone: the PFS directory rank 0 made for a straight write is removed again" \
  run_grep 'PFS gen-1, made for a straight level 4, removed' \
  env T_ROUTE_RANK=3 CAIRN_PFS_DIRECT=on CAIRN_LOG_LEVEL=debug scripts/mpirun.sh 4 "$T" save 1 4
check "  ... the generation went through level 1 (node-local copy) and was flushed: indexed on the PFS, 4 ranks" \
  bash -c "test -e '$(gen_dir 0 1)/manifest' &&
           '$BUILD/cairn' inspect '$(pfs_gen 1)/index' | grep -Eq '^ranks: +4 on 4 nodes'"
check "  ... every node wiped: restored from the PFS, bit-exact (rank 3's file too)" \
  bash -c "rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' && T_ROUTE_RANK=3 scripts/mpirun.sh 4 $T restore 1"
# pfs.parity (issue 31): whether a synchronous level-4 checkpoint keeps the
# parity copy too. off: level 1 and the PFS, and nodes lost take the PFS copy;
# auto: the first keeps it, the later ones as the times measured say, every
# rank alike. The level on the nodes is cairn ls's without the PFS.
node_levels() { env -u CAIRN_PFS_DIR "$BUILD/cairn" ls --job "$CAIRN_JOB" | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {printf "%s:%s ", $1, $2}'; }
export -f node_levels
export CAIRN_RANKS_PER_NODE=1
fresh_pfs pfs-parity-off
check "pfs.parity off: generations 1 and 2 at level 4, 4 ranks on 4 nodes: level 1 on the nodes (no parity), on the PFS" \
  bash -c "CAIRN_PFS_PARITY=off CAIRN_KEEP=10 CAIRN_PFS_KEEP=10 scripts/mpirun.sh 4 $T save 2 4 >/dev/null && l=\$(node_levels) && echo \"levels: \$l\" &&
           test \"\$l\" = '2:1 1:1 ' && test -e '$(pfs_gen 2)/index' && test -e '$(pfs_gen 1)/index'"
wipe_nodes 1 2
check "  ... nodes 1 and 2 wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 4 "$T" restore 2
fresh_pfs pfs-parity-auto
check "pfs.parity auto: 4 generations at level 4: the first at level 3 on the nodes (nothing measured yet), each later one at 3 or 1, on the PFS" \
  bash -c "CAIRN_PFS_PARITY=auto CAIRN_LOG_LEVEL=debug CAIRN_KEEP=10 CAIRN_PFS_KEEP=10 scripts/mpirun.sh 4 $T save 4 4 >'$CAIRN_BASE/auto.log' 2>&1 || { tail '$CAIRN_BASE/auto.log'; exit 1; }
           l=\$(node_levels); echo \"levels: \$l\"; grep 'skipped at this level-4' '$CAIRN_BASE/auto.log' | head -3
           [[ \$l =~ ^4:[13]\ 3:[13]\ 2:[13]\ 1:3\ \$ ]] && for g in 1 2 3 4; do test -e \"\$(pfs_gen \$g)/index\" || exit 1; done"
wipe_nodes 1 2
check "  ... nodes 1 and 2 wiped: generation 4 restored (decoded, or from the PFS), bit-exact" \
  scripts/mpirun.sh 4 "$T" restore 4
unset T_CODECS CAIRN_PFS_DIR CAIRN_PFS_GROUP CAIRN_SET_SIZE CAIRN_EC_M
export CAIRN_RANKS_PER_NODE=2

# The largest id the API takes (LONG_MAX, 19 digits; a nanosecond timestamp
# is one of 19 too): written, listed, restored bit-exact and pruned at level
# 1 and at level 4 (issue 29: the name parser stopped at 18 digits, so such a
# generation was written, returned success and was invisible after).
MAXID=9223372036854775807
export MAXID
export CAIRN_RANKS_PER_NODE=1
fresh pfs-maxid-l1
check "id LONG_MAX at level 1: saved (4 ranks on 4 nodes)" \
  env T_FIRST=$MAXID scripts/mpirun.sh 4 "$T" save 1 1
check "  ... cairn ls lists generation $MAXID" \
  run_grep "^ *$MAXID +1 " "$BUILD/cairn" ls --base "$CAIRN_BASE" --job "$CAIRN_JOB"
check "  ... a new job restores it (LATEST), bit-exact" scripts/mpirun.sh 4 "$T" restore $MAXID
check "  ... cairn prune --gen $MAXID removes it from every node" \
  bash -c "out=\$('$BUILD/cairn' prune --base '$CAIRN_BASE' --job '$CAIRN_JOB' --gen $MAXID) &&
           [ \$(grep -c '^removed .*/gen-$MAXID\$' <<<\"\$out\") = 4 ] && for n in 0 1 2 3; do test ! -e \"\$(gen_dir \$n $MAXID)\" || exit 1; done"
fresh_pfs pfs-maxid-l4
check "id LONG_MAX at level 4: saved after generation 1 (4 ranks on 4 nodes)" \
  bash -c "scripts/mpirun.sh 4 $T save 1 4 && T_FIRST=$MAXID scripts/mpirun.sh 4 $T save 1 4"
check "  ... on the PFS with its index, and on every node" \
  bash -c "test -e '$(pfs_gen $MAXID)/index' && for n in 0 1 2 3; do test -e \"\$(gen_dir \$n $MAXID)/manifest\" || exit 1; done"
check "  ... cairn ls lists it at level 4 (node-local and PFS)" \
  bash -c "'$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' | awk '\$1==\"$MAXID\" && \$2==4' | grep -q ."
check "  ... a new job restores it from node-local storage, bit-exact" \
  scripts/mpirun.sh 4 "$T" restore $MAXID
wipe_nodes 0 1 2 3
check "  ... every node wiped: restored from the PFS, bit-exact" \
  run_grep "restoring generation $MAXID from the PFS" scripts/mpirun.sh 4 "$T" restore $MAXID
check "  ... cairn prune --gen $MAXID removes it from the PFS; generation 1 stays" \
  bash -c "'$BUILD/cairn' prune --base '$CAIRN_BASE' --job '$CAIRN_JOB' --gen $MAXID | grep -q '/gen-$MAXID\$' &&
           test ! -e '$(pfs_gen $MAXID)' && test -e '$(pfs_gen 1)/index'"
check "  ... then the restart finds generation 1 on the PFS, bit-exact" \
  scripts/mpirun.sh 4 "$T" restore 1
check "  ... an id above LONG_MAX is refused by the CLI (status 2)" \
  run_grep_rc 2 'not a generation id' "$BUILD/cairn" prune --base "$CAIRN_BASE" --job "$CAIRN_JOB" --gen 9223372036854775808
unset CAIRN_PFS_DIR MAXID

# A flush that rewrites an id whose PFS generation has an index that does not
# read (issue 29): it may be the only copy left; as the PFS prune keeps such
# a generation, the flush sets it aside (damaged-gen-<id>, logged) instead of
# removing it, and no restart or prune reads it.
export CAIRN_RANKS_PER_NODE=1
fresh_pfs pfs-damaged-index
check "a damaged PFS generation re-flushed: generation 1 saved at level 4 (4 ranks on 4 nodes)" \
  scripts/mpirun.sh 4 "$T" save 1 4
f=$(pfs_gen 1)/index
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
cp -a "$(pfs_gen 1)" "$CAIRN_PFS_DIR/damaged.copy"
check "  ... its index damaged; a new run writes id 1 again at level 4 and says it set the old one aside" \
  run_grep 'PFS generation 1: .*set aside as damaged-gen-1' scripts/mpirun.sh 4 "$T" save 1 4
check "  ... the damaged generation is kept, byte for byte, as damaged-gen-1; the new gen-1 has its index" \
  bash -c "diff -r '$CAIRN_PFS_DIR/damaged.copy' \"\$(dirname '$(pfs_gen 1)')/damaged-gen-1\" && test -e '$(pfs_gen 1)/index'"
wipe_nodes 0 1 2 3
check "  ... every node wiped: the new generation 1 restores from the PFS, bit-exact" \
  run_grep 'restoring generation 1 from the PFS' scripts/mpirun.sh 4 "$T" restore 1
check "  ... generations 2..4 flushed (pfs.keep = 2): the prune leaves damaged-gen-1 alone" \
  bash -c "T_FIRST=2 scripts/mpirun.sh 4 $T save 3 4 >/dev/null && test ! -e '$(pfs_gen 1)' &&
           diff -r '$CAIRN_PFS_DIR/damaged.copy' \"\$(dirname '$(pfs_gen 1)')/damaged-gen-1\""
check "  ... cairn prune --above 0 removes every generation but never damaged-gen-1" \
  bash -c "'$BUILD/cairn' prune --base '$CAIRN_BASE' --job '$CAIRN_JOB' --above 0 >/dev/null &&
           test -d \"\$(dirname '$(pfs_gen 1)')/damaged-gen-1\" && test ! -e '$(pfs_gen 4)'"
unset CAIRN_PFS_DIR

# The PFS job directory is synced once a new generation's index is written
# and before an older generation is removed (issue 29; tmpfs cannot show a
# lost directory entry, so the order of the calls is checked): rank 0 (the
# first leader: it writes the index and prunes) runs under strace, and the
# fsync of the job directory must come after the index's rename into gen-2
# and before gen-1 is renamed to the trash (pfs.keep = 1).
if command -v strace >/dev/null; then
  fresh_pfs pfs-fsync
  export CAIRN_RANKS_PER_NODE=2 PFS_TRACE=$CAIRN_PFS_DIR/trace
  rank0_traced() { # rank0_traced PROGRAM ARGS...: rank 0 under strace -f -y, into $PFS_TRACE
    if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ]; then
      exec strace -f -y -qq -o "$PFS_TRACE" -e trace=fsync,rename,renameat,renameat2,mkdir,mkdirat "$@"
    fi
    exec "$@"
  }
  export -f rank0_traced
  check "fsync order on the PFS: generation 1, then 2 under strace (rank 0), at level 4 with pfs.keep = 1" \
    bash -c "CAIRN_PFS_KEEP=1 scripts/mpirun.sh 4 $T save 1 4 && T_FIRST=2 CAIRN_PFS_KEEP=1 scripts/mpirun.sh 4 bash -c 'rank0_traced \"\$@\"' _ $T save 1 4 && test ! -e '$(pfs_gen 1)'"
  jobdir=$(dirname "$(pfs_gen 1)")
  check "  ... the job directory is synced after gen-2's index is in place and before gen-1 goes to the trash" \
    awk -v job="$jobdir" '
      index($0, "rename") && index($0, "<" job "/gen-2>, \"index.tmp\"") && !idx { idx = NR }
      idx && !sync && /^[0-9]+ +fsync\(/ && index($0, "<" job ">)") { sync = NR }
      index($0, "rename") && index($0, "<" job ">, \"gen-1\"") && index($0, ".trash-gen-1") { trash = NR }
      END { printf "index renamed at line %d, job dir synced at %d, gen-1 trashed at %d\n", idx, sync, trash
            exit !(idx && sync && trash && idx < sync && sync < trash) }' "$PFS_TRACE"
  check "  ... gen-2's directory is synced after rank 0's file is renamed into it and before its index is" \
    awk -v gen="$jobdir/gen-2" '
      index($0, "rename") && index($0, "<" gen ">, \"agg-") && !file { file = NR }
      file && !sync && /^[0-9]+ +fsync\(/ && index($0, "<" gen ">)") { sync = NR }
      index($0, "rename") && index($0, "<" gen ">, \"index.tmp\"") { idx = NR }
      END { printf "file renamed at line %d, directory synced at %d, index renamed at %d\n", file, sync, idx
            exit !(file && sync && idx && file < sync && sync < idx) }' "$PFS_TRACE"
  check "  ... and the job directory was synced into its parent when the first flush created it" \
    bash -c "T_FIRST=1 CAIRN_JOB='$CAIRN_JOB-new' scripts/mpirun.sh 4 bash -c 'rank0_traced \"\$@\"' _ $T save 1 4 &&
             awk -v job='$jobdir-new' -v user=\"\$(dirname '$jobdir')\" '
               /mkdir/ && index(\$0, \"<\" user \">, \\\"\" substr(job, length(user) + 2) \"\\\"\") { mk = NR }
               mk && !sync && /fsync\\(/ && index(\$0, \"<\" user \">)\") { sync = NR }
               index(\$0, \"<\" job \">, \\\"gen-1\\\"\") && /mkdir/ { gen = NR }
               END { printf \"job dir made at %d, user dir synced at %d, gen-1 made at %d\\n\", mk, sync, gen
                     exit !(mk && sync && gen && mk < sync && sync < gen) }' '$PFS_TRACE'"
  unset CAIRN_PFS_DIR PFS_TRACE
else
  skip "fsync order on the PFS: strace is not installed"
fi
