#!/usr/bin/env bash
# run_mpi.sh - multi-process scenarios: real mpirun jobs on emulated nodes.
#
# Two emulated nodes, each scenario in its own base directory on tmpfs. A
# restart is always a new mpirun job that names the old job's directory
# (CAIRN_JOB). Scenarios that need two ranks on a node (the first one, mixed
# codecs across ranks, level-2 partner copies holding two ranks' files) run 4
# ranks, 2 per node (two_per_node); the others, whose checks do not, run 2
# ranks, one per node (one_per_node: a 2-rank launch costs ~40% less CPU).
# Both set lib.sh's NP, which `mpi` launches; the script ends at 4 ranks, 2
# per node, as it began. Sourced by tests/run.sh, which provides
# `check DESC CMD...` and the pass/fail counters.
: "${BUILD:=build}"
two_per_node() { NP=4; export CAIRN_RANKS_PER_NODE=2; }
one_per_node() { NP=2; export CAIRN_RANKS_PER_NODE=1; }
export CAIRN_LOG_LEVEL=warn
unset CAIRN_FAULT

two_per_node

fresh roundtrip
check "save 3 generations (4 ranks, 2 nodes)" mpi save 3
check "new job restores the newest, bit-exact" mpi restore 3
check "keep=2: two generations listed" mpi gens 2
check "explicit generation 2 restores" mpi restore-id 2
check "generation 1 was pruned" test ! -e "$(gen_dir 0 1)"
check "  ... and removed by the time the job ended (no .trash-* left)" \
  bash -c "! ls -a '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB'/node* | grep -q trash"

check "restart on 2 ranks of a 4-rank job: CAIRN_EMISMATCH naming both" \
  run_grep 'written by 4 ranks on 2 nodes; this run has 2 ranks' scripts/mpirun.sh 2 "$T" expect-fail CAIRN_EMISMATCH

one_per_node
fresh abandoned # issue 16, defect 2: an abandoned timeline is removed only when asked
check "abandoned timeline: run A writes generations 100 and 200" env T_FIRST=100 T_STEP=100 scripts/mpirun.sh $NP $T save 2
check "  ... run B restores 100 (asked for explicitly) and writes 150" env T_THEN=150 scripts/mpirun.sh $NP $T restore-id 100
check "  ... generation 200 (newer than run B's newest) is set aside on every node, not removed" \
  bash -c "test -e \"\$(dirname '$(gen_dir 0 200)')/abandoned-gen-200/manifest\" && test -e \"\$(dirname '$(gen_dir 1 200)')/abandoned-gen-200/manifest\" && test ! -e '$(gen_dir 0 200)' && test -e '$(gen_dir 0 150)/manifest'"
check "  ... and a restart restores run B's 150 bit-exact, not the abandoned 200" mpi restore 150
check "  ... cairn prune --abandoned --dry-run names it on both nodes and removes nothing" \
  bash -c "run_grep 'would remove .*/node1/abandoned-gen-200' '$BUILD/cairn' prune --base '$CAIRN_BASE' --job '$CAIRN_JOB' --abandoned --dry-run && test -e \"\$(dirname '$(gen_dir 1 200)')/abandoned-gen-200/manifest\""
check "  ... cairn prune --abandoned removes it from every node, and nothing else" \
  bash -c "run_grep 'removed .*/node0/abandoned-gen-200' '$BUILD/cairn' prune --base '$CAIRN_BASE' --job '$CAIRN_JOB' --abandoned && ! ls -d \"\$(dirname '$(gen_dir 0 200)')\"/abandoned-* \"\$(dirname '$(gen_dir 1 200)')\"/abandoned-* 2>/dev/null && test -e '$(gen_dir 1 150)/manifest'"
check "  ... a restart still restores 150 bit-exact" mpi restore 150
check "  ... run C writes 200 and 300; run D restores 200 and writes 250 with store.prune_abandoned = on: 300 goes" \
  bash -c "T_FIRST=200 T_STEP=100 scripts/mpirun.sh $NP $T save 2 >/dev/null && CAIRN_PRUNE_ABANDONED=on T_THEN=250 scripts/mpirun.sh $NP $T restore-id 200 && test ! -e '$(gen_dir 0 300)' && test ! -e '$(gen_dir 1 300)'"
check "  ... and generation 250 restores bit-exact" mpi restore 250

# Mixed codecs: variable i of rank r gets codec (i + r) % 7 of its list, so
# the rank count sets the coverage; the level-2 copies hold two ranks' files.
two_per_node
fresh codecs
export T_CODECS=mixed
check "mixed codecs across ranks and variables (4K buffers: many frames, packs): save 3" \
  env CAIRN_COMPRESS_BUFFER=4K scripts/mpirun.sh $NP $T save 3
check "  ... a new job (1M buffers, 1 thread) restores bit-exact" \
  env CAIRN_COMPRESS_THREADS=1 scripts/mpirun.sh $NP $T restore 3
check "  ... cairn inspect names each variable's codec and ratio" \
  run_grep '^smooth +var +double .* shuffle-lz4 +[0-9]+\.[0-9]+ ' "$BUILD/cairn" inspect "$(gen_dir 0 3)/rank-1.ckpt"
check "  ... level 2 with codecs, then node 1 wiped: a new job rebuilds and restores" \
  bash -c "scripts/mpirun.sh $NP $T save 4 2 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node1' && scripts/mpirun.sh $NP $T restore 4"
f=$(gen_dir 0 4)/rank-1.ckpt # smooth (shuffle-lz4) is most of the file's end
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") * 3 / 4)) conv=notrunc status=none
check "  ... a flipped byte inside compressed data: its checksum names it" \
  run_grep_rc 4 "'smooth' block 0 checksum mismatch" "$BUILD/cairn" verify "$f"
check "  ... and a new job still restores generation 4 (level 2: the partner's copy), bit-exact" \
  run_grep "'smooth' block 0 checksum mismatch" scripts/mpirun.sh $NP "$T" restore 4
unset T_CODECS

one_per_node
fresh emptylast
check "checkpoint whose last variable is empty restores in the same job" mpi live-rebuild 1
check "  ... with the libpmem write path too" env CAIRN_IO=pmem CAIRN_JOB=t$CAIRN_TEST_TAG-emptylast-pmem scripts/mpirun.sh $NP $T live-rebuild 1

fresh nothing
check "restart with nothing saved says so (CAIRN_ENOENT)" mpi expect-fail CAIRN_ENOENT
check "level 4 without pfs.dir is refused with CAIRN_ECONFIG naming the key" run_grep pfs.dir scripts/mpirun.sh $NP "$T" level 4 CAIRN_ECONFIG
check "level 3 on 2 nodes with m=2: CAIRN_ECONFIG says why" \
  run_grep 'needs more than 2 nodes in every encoding set' scripts/mpirun.sh $NP "$T" level 3 CAIRN_ECONFIG
check "level 2 on 1 node: CAIRN_ECONFIG" env CAIRN_RANKS_PER_NODE=$NP scripts/mpirun.sh $NP $T level 2 CAIRN_ECONFIG

for point in ckpt.write:gen=3:rank=0 ckpt.commit:gen=3:rank=1 ckpt.manifest:gen=3:rank=1; do
  fresh "kill-${point%%:*}"
  mpi save 2 >/dev/null
  check "kill -9 at $point: the job dies" crash "$point" save 3
  check "  ... restart restores generation 2" mpi restore 2
done

# A failed run names its failing ranks with their own words (scripts/mpirun.sh), not
# only the launcher's ("exited without calling finalize" says nothing of the cause).
fresh rank-says
mpi save 2 >/dev/null
check "a rank killed at a fault point: the launcher's report names it, its signal and its own last message" \
  bash -c "out=\$(CAIRN_FAULT=ckpt.write:gen=3:rank=1 scripts/mpirun.sh $NP $T save 3 2>&1); rc=\$?
           [ \$rc -ne 0 ] && grep -A1 '^mpirun.sh: rank 1: killed by signal 9 (KILL); its last lines on stderr:\$' <<<\"\$out\" |
           grep -q '^mpirun.sh:   | .*fault injection: killing the process at ckpt.write (generation 3)' ||
           { echo \"exit \$rc\"; tail -n 30 <<<\"\$out\"; exit 1; }"
check "  ... a rank that exits 1: its exit status and its message ('FAIL restore')" \
  bash -c "out=\$(scripts/mpirun.sh $NP $T restore 9 2>&1); rc=\$?
           [ \$rc -ne 0 ] && grep -A1 '^mpirun.sh: rank [01]: exit status 1; its last lines on stderr:\$' <<<\"\$out\" |
           grep -q '^mpirun.sh:   | rank [01]: FAIL restore: restored generation 2, expected 9' ||
           { echo \"exit \$rc\"; tail -n 30 <<<\"\$out\"; exit 1; }"
check "  ... a run that succeeds has no such report" \
  bash -c "out=\$(scripts/mpirun.sh $NP $T restore 2 2>&1) && ! grep -q '^mpirun.sh: ' <<<\"\$out\""

fresh kill-two
check "CAIRN_FAULT with two specs (;): the second, which matches, kills the job at generation 2" \
  crash "ckpt.begin:gen=9;ckpt.begin:gen=2:rank=1" save 3
check "  ... restart restores generation 1" mpi restore 1

fresh flip
mpi save 3 >/dev/null
check "cairn verify: every file of a real job is OK (exit 0)" \
  "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB"
f=$(gen_dir 1 3)/rank-1.ckpt
printf '\xff' | dd of="$f" bs=1 seek=5000 conv=notrunc status=none
check "flipped byte: falls back to generation 2 and names the file" \
  run_grep 'rank-1.ckpt.*checksum mismatch' scripts/mpirun.sh $NP "$T" restore 2
printf '\xff' | dd of="$(gen_dir 0 2)/rank-0.ckpt" bs=1 seek=4200 conv=notrunc status=none
check "cairn verify: the flipped files are reported (exit 4)" \
  bash -c "'$BUILD/cairn' verify --base '$CAIRN_BASE' --job '$CAIRN_JOB'; [ \$? -eq 4 ]"
check "every generation corrupt: CAIRN_ECORRUPT, never restored" mpi expect-fail CAIRN_ECORRUPT

fresh trunc
mpi save 3 >/dev/null
truncate -s 5000 "$(gen_dir 0 3)/rank-0.ckpt"
check "truncated file: falls back to generation 2" mpi restore 2
rm "$(gen_dir 1 2)/manifest"
check "deleted manifest: nothing restorable, yet a checkpoint exists: CAIRN_ECORRUPT naming the truncated file, not ENOENT" \
  run_grep 'gen-3/rank-0.ckpt is 5000 bytes; the manifest says' scripts/mpirun.sh $NP "$T" expect-fail CAIRN_ECORRUPT

fresh lost1 # issue 16, defect 7: a lost checkpoint is not "no checkpoint"
mpi save 2 >/dev/null
wipe_nodes 1
check "level 1, node 1 wiped: CAIRN_ELOST naming the generation and the node, not ENOENT" \
  run_grep 'generation 2 is lost: it was at level 1 .*node\(s\) 1 no longer hold it' scripts/mpirun.sh $NP "$T" expect-fail CAIRN_ELOST

if [ "$(id -u)" -eq 0 ]; then
  fresh enospc
  if mount -t tmpfs -o size=1m,mode=1777 tmpfs "$CAIRN_BASE"; then
    MOUNTS+=("$CAIRN_BASE")
    mpi save 1 >/dev/null
    check "full disk: CAIRN_ENOSPC, clear message" mpi big 2
    check "  ... the previous generation still restores" mpi restore 1
    check "  ... no partial files left" bash -c "! find '$CAIRN_BASE' -name '*.tmp' -o -name 'gen-2' | grep -q ."
    check "full disk inside the compression pipeline (zstd): CAIRN_ENOSPC" env CAIRN_CODEC=zstd scripts/mpirun.sh $NP $T big 2
    check "  ... the previous generation still restores" mpi restore 1
    check "  ... no partial files left" bash -c "! find '$CAIRN_BASE' -name '*.tmp' -o -name 'gen-2' | grep -q ."
  else
    skip "full-disk scenario: cannot mount a small tmpfs here"
  fi

  fresh foreign
  mkdir -m 700 "$CAIRN_BASE/cairn-$(id -u)" && chown 65534 "$CAIRN_BASE/cairn-$(id -u)"
  check "directory owned by another user: CAIRN_EUNSAFE" mpi expect-init-fail CAIRN_EUNSAFE
else
  skip "full-disk and foreign-owner scenarios: need root"
fi

fresh symlink
mkdir -p "$CAIRN_BASE/elsewhere" && chmod 700 "$CAIRN_BASE/elsewhere"
ln -s "$CAIRN_BASE/elsewhere" "$CAIRN_BASE/cairn-$(id -u)"
check "planted symlink in the base: CAIRN_EUNSAFE" mpi expect-init-fail CAIRN_EUNSAFE
check "  ... nothing written through it" test -z "$(ls -A "$CAIRN_BASE/elsewhere")"

fresh config
printf '[store]\nkeep = 2\nkep = 3\n' > "$CAIRN_BASE/bad.ini"
check "bad config key: CAIRN_ECONFIG naming key and line" \
  run_grep "bad.ini:3: unknown key 'store.kep'" env T_CONFIG="$CAIRN_BASE/bad.ini" scripts/mpirun.sh $NP "$T" expect-init-fail CAIRN_ECONFIG

# A failed restart leaves protected memory unchanged (cairn.h, cairn_restart):
# expect-fail fills every variable with a sentinel first and checks it after.
# t_forge makes a frame whose stored checksums all hold but that does not
# decode (a codec bug or a crafted file): only a decode finds it.
fresh untouched
export CAIRN_CODEC=zstd CAIRN_KEEP=3
mpi save 3 >/dev/null
printf '\xff' | dd of="$(gen_dir 1 3)/rank-1.ckpt" bs=1 seek=5000 conv=notrunc status=none
check "restart of generation 3 with a flipped byte on rank 1: CAIRN_ECORRUPT, no rank's memory changed" \
  run_grep 'PASS expect-fail' mpi expect-fail CAIRN_ECORRUPT 3
check "  ... t_forge: a frame of generation 2 on rank 1 that passes its stored checksums" \
  run_grep '^forged ' "$BUILD/tests/t_forge" "$(gen_dir 1 2)/rank-1.ckpt"
check "  ... cairn verify decodes it and names it (exit 4)" \
  run_grep_rc 4 'fails its checksum' "$BUILD/cairn" verify "$(gen_dir 1 2)/rank-1.ckpt"
check "  ... restart of 2: CAIRN_ECORRUPT, no rank's memory changed (rank 0 could restore its own)" \
  run_grep 'PASS expect-fail' mpi expect-fail CAIRN_ECORRUPT 2
check "  ... CAIRN_LATEST skips 2, naming rank 1's file and frame, and restores 1 bit-exact" \
  run_grep "generation 2 is unusable \(rank 1: .*/gen-2/rank-1.ckpt: '[a-z]+': frame decodes to data that fails its checksum" \
  mpi restore 1
fresh untouched-1
CAIRN_RANKS_PER_NODE=1 scripts/mpirun.sh 1 "$T" save 2 >/dev/null
"$BUILD/tests/t_forge" "$(gen_dir 0 2)/rank-0.ckpt" >/dev/null
check "one rank, its own frame does not decode: restart of 2 fails, its memory unchanged" \
  run_grep 'PASS expect-fail' env CAIRN_RANKS_PER_NODE=1 scripts/mpirun.sh 1 "$T" expect-fail CAIRN_ECORRUPT 2
check "  ... CAIRN_LATEST skips it and restores generation 1" \
  env CAIRN_RANKS_PER_NODE=1 scripts/mpirun.sh 1 "$T" restore 1
if [ "$(id -u)" -eq 0 ]; then # rank 1's routed-file directory: a tmpfs without a free inode
  fresh untouched-files
  mpi save 2 >/dev/null
  d="$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node1/files/rank-1"
  if mount -t tmpfs -o size=64k,nr_inodes=1,mode=700 tmpfs "$d"; then
    MOUNTS+=("$d")
    check "rank 1 cannot put its routed file back: restart fails (ENOSPC naming it), no rank's memory changed" \
      run_grep 'rank 1: cannot create notes.txt.tmp: No space left' mpi expect-fail CAIRN_ENOSPC 2
  else
    skip "routed-file failure on one rank: cannot mount a small tmpfs here"
  fi
fi
unset CAIRN_CODEC CAIRN_KEEP

# Routed files (issue 16, defect 3): a generation holds exactly the files
# routed for it; the staging directory is emptied once a checkpoint holds them.
fresh routed
R=$BUILD/tests/t_route
ref=$(mktemp -d /dev/shm/cairn-ref.XXXXXX) out=$(mktemp -d /dev/shm/cairn-out.XXXXXX)
SCRATCH_DIRS+=("$ref" "$out")
check "routed files: A, B for gen 1; B (and E, unrouted) for gen 2; staging empty after each; bad names refused" \
  run_grep "refused: .*routed file names are flat: 'a/b' contains '/'" env T_REF="$ref" scripts/mpirun.sh $NP "$R" save
check "  ... cairn inspect: generation 2 holds B, not A (not routed for it) nor E (unrouted)" \
  bash -c "o=\$('$BUILD/cairn' inspect '$(gen_dir 1 2)/rank-1.ckpt') && grep -Eq '^B +file ' <<<\"\$o\" && ! grep -Eq '^(A|E) +file ' <<<\"\$o\""
check "  ... a new job restores generation 2: B at its routed path, byte-identical to what each rank wrote (cmp); no A there" \
  bash -c "run_grep 'PASS restore' env T_HOLDS=B T_LACKS=A,E T_OUT='$out' scripts/mpirun.sh $NP '$R' restore 2 && for r in 0 1; do cmp '$ref/B.2.rank-'\$r '$out/B.rank-'\$r || exit 1; done"
check "  ... generation 1 restores A and B, byte-identical (cmp), and nothing stale beside them (E)" \
  bash -c "run_grep 'PASS restore' env T_HOLDS=A,B T_LACKS=E T_OUT='$out' scripts/mpirun.sh $NP '$R' restore 1 && for r in 0 1; do cmp '$ref/A.1.rank-'\$r '$out/A.rank-'\$r && cmp '$ref/B.1.rank-'\$r '$out/B.rank-'\$r || exit 1; done"
check "after restart: C (not in gen 2) gets a fresh path, checkpoints; D routed, never written fails its checkpoint by name; the next two work" \
  run_grep "unwritten: .*routed file 'D'.*never written" env T_REF="$ref" scripts/mpirun.sh $NP "$R" after 2
check "  ... no file lingers in the staging directories" \
  bash -c "! find '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' -path '*/files/*' -type f | grep ."
check "  ... generation 6 holds C alone (B was not routed after the restart), byte-identical (cmp)" \
  bash -c "run_grep 'PASS restore' env T_HOLDS=C T_LACKS=B,D T_OUT='$out' scripts/mpirun.sh $NP '$R' restore 6 && for r in 0 1; do cmp '$ref/C.6.rank-'\$r '$out/C.rank-'\$r || exit 1; done"

# Packs (issue 16, defect 1): small variables of one codec share a frame
# stored under the first, whose block checksums then cover the whole pack. A
# 100 B owner of two 300 KB members, and an incompressible pack filling the
# 1 MiB buffer (stored raw in its frame: larger than the buffer), at
# store.block_size 4 KiB; before the fix the owner's checksum array
# overflowed and the job aborted.
two_per_node # level 2: node 0 holds the partner copies of node 1's two ranks
fresh packs
export T_VARS="zstd:100,zstd:300000,zstd:300000,lz4:100,lz4:524288,lz4:524188"
check "packs at store.block_size 4 KiB (a 100 B owner of 600 KB, an incompressible 1 MiB pack): save 2 at level 2" \
  run_grep 'PASS save' env CAIRN_BLOCK_SIZE=4K scripts/mpirun.sh $NP $T save 2 2
check "  ... each owner's block checksums cover its pack (147 and 257 blocks of 4 KiB)" \
  bash -c "'$BUILD/cairn' inspect '$(gen_dir 0 2)/rank-1.ckpt' > '$CAIRN_BASE/inspect.txt' && grep -Eq '^x0 .* 600124 +zstd .* 147 ' '$CAIRN_BASE/inspect.txt' && grep -Eq '^x3 .* 1048600 +lz4 .* 257 ' '$CAIRN_BASE/inspect.txt'"
check "  ... cairn verify checks every block and frame of the generation" \
  "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB" --gen 2
check "  ... a new job restores every packed variable bit-exact" run_grep 'PASS restore' mpi restore 2
wipe_nodes 1
check "  ... node 1 lost: restored bit-exact from the partner copies" run_grep 'PASS restore' mpi restore 2
unset T_VARS
