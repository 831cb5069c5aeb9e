#!/usr/bin/env bash
# run_mpi.sh - multi-process scenarios: real mpirun jobs on emulated nodes.
#
# 4 ranks on 2 emulated nodes (CAIRN_RANKS_PER_NODE=2), each scenario in its
# own base directory on tmpfs. A restart is always a new mpirun job that names
# the old job's directory (CAIRN_JOB). Sourced by tests/run.sh, which provides
# `check DESC CMD...` and the pass/fail counters.
: "${BUILD:=build}"
export CAIRN_RANKS_PER_NODE=2 CAIRN_LOG_LEVEL=warn
unset CAIRN_FAULT

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

fresh emptylast
check "checkpoint whose last variable is empty restores in the same job" mpi live-rebuild 1
check "  ... with the libpmem write path too" env CAIRN_IO=pmem CAIRN_JOB=t$CAIRN_TEST_TAG-emptylast-pmem scripts/mpirun.sh $NP $T live-rebuild 1

fresh nothing
check "restart with nothing saved says so (CAIRN_ENOENT)" mpi expect-fail CAIRN_ENOENT
check "level 4 without pfs.dir is refused with CAIRN_ECONFIG naming the key" run_grep pfs.dir scripts/mpirun.sh $NP "$T" level 4 CAIRN_ECONFIG
check "level 3 on 2 nodes with m=2: CAIRN_ECONFIG says why" \
  run_grep 'needs more than 2 nodes in every encoding set' scripts/mpirun.sh $NP "$T" level 3 CAIRN_ECONFIG
check "level 2 on 1 node: CAIRN_ECONFIG" env CAIRN_RANKS_PER_NODE=4 scripts/mpirun.sh $NP $T level 2 CAIRN_ECONFIG

for point in ckpt.write:gen=3:rank=1 ckpt.commit:gen=3:rank=3 ckpt.manifest:gen=3:rank=2; do
  fresh "kill-${point%%:*}"
  mpi save 2 >/dev/null
  check "kill -9 at $point: the job dies" crash "$point" save 3
  check "  ... restart restores generation 2" mpi restore 2
done

fresh flip
mpi save 3 >/dev/null
check "cairn verify: every file of a real job is OK (exit 0)" \
  "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB"
f=$(gen_dir 1 3)/rank-3.ckpt
printf '\xff' | dd of="$f" bs=1 seek=5000 conv=notrunc status=none
check "flipped byte: falls back to generation 2 and names the file" \
  run_grep 'rank-3.ckpt.*checksum mismatch' scripts/mpirun.sh $NP "$T" restore 2
printf '\xff' | dd of="$(gen_dir 0 2)/rank-0.ckpt" bs=1 seek=4200 conv=notrunc status=none
check "cairn verify: the flipped files are reported (exit 4)" \
  bash -c "'$BUILD/cairn' verify --base '$CAIRN_BASE' --job '$CAIRN_JOB'; [ \$? -eq 4 ]"
check "every generation corrupt: CAIRN_ECORRUPT, never restored" mpi expect-fail CAIRN_ECORRUPT

fresh trunc
mpi save 3 >/dev/null
truncate -s 5000 "$(gen_dir 0 3)/rank-1.ckpt"
check "truncated file: falls back to generation 2" mpi restore 2
rm "$(gen_dir 1 2)/manifest"
check "deleted manifest: no complete generation (CAIRN_ENOENT)" mpi expect-fail CAIRN_ENOENT

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
