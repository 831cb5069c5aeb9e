#!/usr/bin/env bash
# run_h5.sh - routed HDF5 files at level 4 (issue 19 part 2, mcrEngine): each
# rank's HDF5 checkpoints are split by dataset, the datasets of the ranks
# aggregated by path and type, the skeletons together; restart rebuilds every
# file byte for byte and checks its whole-file checksum. Sourced by
# tests/run.sh (section h5); skipped, counted, when the build has no libhdf5.

H5=$BUILD/tests/t_h5
if ! "$H5" has-hdf5; then
  skip "routed HDF5 files at level 4: this build has no libhdf5 (Debian libhdf5-dev; USE_HDF5)"
  return 0 2>/dev/null || exit 0
fi
H5FORGE=$BUILD/tests/t_h5forge
# 6 ranks on 3 nodes, groups of 4: agg-000000.cz holds ranks 0-3 (nodes 0
# and 1), agg-000001.cz ranks 4-5.
export CAIRN_RANKS_PER_NODE=2 CAIRN_PFS_GROUP=4 CAIRN_SET_SIZE=3 CAIRN_EC_M=1
# new_dir VAR...: a fresh scratch directory in each VAR, removed when the suite ends (made in
# this shell: a $(...) subshell could not add it to SCRATCH_DIRS).
new_dir() { local v d; for v; do d=$(mktemp -d /dev/shm/cairn-h5ref.XXXXXX); SCRATCH_DIRS+=("$d"); printf -v "$v" %s "$d"; done; }
# same_files REF OUT: every file REF holds is in OUT, byte-identical (cmp).
same_files() {
  local n=0 f
  for f in "$1"/*; do cmp "$f" "$2/$(basename "$f")" || return 1; n=$((n + 1)); done
  [ "$n" -eq 24 ] || { echo "same_files: $n files compared, expected 24 (6 ranks x 4)"; return 1; }
}
export -f same_files
wipe_all() { rm -rf "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB"; }

fresh_pfs h5
new_dir ref out logdir
log=$logdir/save.log
check "HDF5 routed files: 6 ranks on 3 nodes write state.h5 (groups, float/double/int/string/compound, contiguous, chunked, deflated, attributes), aux.h5, notes.txt and fake.h5 (signature, then text), checkpoint at level 4" \
  bash -c "env CAIRN_PFS_SCHEME=aware T_REF='$ref' scripts/mpirun.sh 6 '$H5' save 1 >'$log' 2>&1; rc=\$?; cat '$log'; [ \$rc -eq 0 ] && grep -q 'PASS save' '$log'"
check "  ... fake.h5, which libhdf5 cannot open, cost no message (no HDF5-DIAG error stack, no warning)" \
  bash -c "! grep -Ei 'HDF5-DIAG|error|warn' '$log'"
check "  ... the aggregated file holds the datasets by path and type (/fields/T double 48x40, /fields/rho float, /fields/sub/ids int32, /meta/particles bytes), skeletons and maps; notes.txt and fake.h5 whole" \
  bash -c "o=\$('$BUILD/cairn' inspect '$(pfs_gen 1)/agg-000000.cz') &&
    grep -Eq '^ *0 +/fields/T +h5data +double +48x40 ' <<<\"\$o\" &&
    grep -Eq '^ *3 +/fields/rho +h5data +float ' <<<\"\$o\" &&
    grep -Eq '^ *2 +/fields/sub/ids +h5data +int32 ' <<<\"\$o\" &&
    grep -Eq '^ *1 +/meta/particles +h5data +byte ' <<<\"\$o\" &&
    grep -Eq '^ *1 +skeleton +h5skel ' <<<\"\$o\" && grep -Eq '^ *1 +map +h5map ' <<<\"\$o\" &&
    grep -Eq '^ *1 +notes.txt +file ' <<<\"\$o\" && grep -Eq '^ *2 +fake.h5 +file ' <<<\"\$o\" &&
    ! grep -Eq '/fields/chunked|/fields/deflated|/meta/tiny|^ *[0-9]+ +state.h5 ' <<<\"\$o\""
wipe_all
check "  ... every node-local directory wiped: restart from level 4 rebuilds the 24 files byte-identical (cmp against the copies kept aside)" \
  bash -c "run_grep 'PASS restore' env T_REF='$ref' T_OUT='$out' scripts/mpirun.sh 6 '$H5' restore 1 && same_files '$ref' '$out'"
check "  ... cairn verify reads the level-4 copy whole (every frame decoded, every split file rebuilt)" \
  "$BUILD/cairn" verify "$(pfs_gen 1)/agg-000000.cz"

for s in agnostic agnostic-block aware-block auto; do
  fresh_pfs "h5-$s"
  new_dir ref out
  check "HDF5 routed files, scheme $s: save at level 4, wipe every node, restore byte-identical (cmp)" \
    bash -c "CAIRN_PFS_SCHEME=$s T_REF='$ref' scripts/mpirun.sh 6 '$H5' save 2 >/dev/null && rm -rf '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB' &&
             run_grep 'PASS restore' env T_REF='$ref' T_OUT='$out' scripts/mpirun.sh 6 '$H5' restore 2 && same_files '$ref' '$out'"
done

# Damage under every container checksum: the index's or a raw unit's (a restore
# verifies what each node decodes), then (forged, every
# container checksum resealed) only the rebuilt file's own checksum.
fresh_pfs h5-corrupt
new_dir ref keep out
check "HDF5 damage: save generation 3 at level 4 (scheme aware)" \
  run_grep 'PASS save' env CAIRN_PFS_SCHEME=aware T_REF="$ref" scripts/mpirun.sh 6 "$H5" save 3
cp -a "$(pfs_gen 3)/." "$keep/"
wipe_all
f=$(pfs_gen 3)/agg-000000.cz
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 3)) conv=notrunc status=none
check "  ... a flipped byte in the stored level-4 file: restart fails CAIRN_ECORRUPT naming the file, no routed file written" \
  run_grep 'refused: .*agg-000000.cz: (checksum does not match the index|.*fails its checksum|.*checksum mismatch)' scripts/mpirun.sh 6 "$H5" expect-fail CAIRN_ECORRUPT 3
cp -a "$keep/." "$(pfs_gen 3)/"; wipe_all
check "  ... forged: a dataset byte of rank 2 (/fields/T) changed, every container checksum resealed" \
  run_grep 'forged h5data /fields/T of rank 2' "$H5FORGE" "$(pfs_gen 3)" 0 2 h5data /fields/T
check "  ... restart fails CAIRN_ECORRUPT: rank 2's state.h5 rebuilt does not match its checksum; no routed file written on any rank" \
  run_grep "refused: .*rank 2, split routed file 0: routed file 'state.h5' rebuilt .* does not match the checksum taken at checkpoint" \
  scripts/mpirun.sh 6 "$H5" expect-fail CAIRN_ECORRUPT 3
check "  ... cairn verify rebuilds the split files too: agg-000000.cz CORRUPT naming rank 2's state.h5 (exit 4)" \
  run_grep_rc 4 "CORRUPT .*agg-000000.cz: rank 2, split routed file 0: routed file 'state.h5' rebuilt" \
  "$BUILD/cairn" verify "$(pfs_gen 3)/agg-000000.cz"
cp -a "$keep/." "$(pfs_gen 3)/"; wipe_all
check "  ... forged: a skeleton byte of rank 5 (in agg-000001.cz) changed, every container checksum resealed" \
  run_grep 'forged h5skel skeleton of rank 5' "$H5FORGE" "$(pfs_gen 3)" 1 5 h5skel
check "  ... restart fails CAIRN_ECORRUPT naming rank 5's state.h5; no routed file written on any rank" \
  run_grep "refused: .*rank 5, split routed file 0: routed file 'state.h5' rebuilt .* does not match the checksum" \
  scripts/mpirun.sh 6 "$H5" expect-fail CAIRN_ECORRUPT 3
cp -a "$keep/." "$(pfs_gen 3)/"; wipe_all
check "  ... forged: rank 4's map changed: its record fails its own checksum (CAIRN_ECORRUPT, 'HDF5 map')" \
  bash -c "run_grep 'forged h5map map of rank 4' '$H5FORGE' '$(pfs_gen 3)' 1 4 h5map &&
           run_grep 'refused: .*rank 4, split routed file 0: HDF5 map: checksum mismatch' scripts/mpirun.sh 6 '$H5' expect-fail CAIRN_ECORRUPT 3"
cp -a "$keep/." "$(pfs_gen 3)/"; wipe_all
check "  ... the intact copy put back: restored byte-identical (cmp)" \
  bash -c "run_grep 'PASS restore' env T_REF='$ref' T_OUT='$out' scripts/mpirun.sh 6 '$H5' restore 3 && same_files '$ref' '$out'"
unset CAIRN_PFS_GROUP CAIRN_SET_SIZE CAIRN_EC_M
export CAIRN_RANKS_PER_NODE=2
