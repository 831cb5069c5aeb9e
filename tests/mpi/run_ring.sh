#!/usr/bin/env bash
# run_ring.sh - the ring encode and the set decode (src/erasure/ring.c) on
# real mpirun jobs, every rank one member of an encoding set of n = NP.
#
# Each job (build/tests/t_ring) encodes payloads of random sizes (one empty),
# compares every parity row with a centralized ec_encode, then loses every
# pattern of 1..m members, decodes and compares bit for bit; m + 1 lost must
# give CAIRN_ECORRUPT on every member. The jobs cover n = 3, 4, 6, 8 with
# every m < n up to 3, the three kernels, 64 KiB blocks and blocks that do
# not divide the chunk (24584 bytes; 49152 for bitmatrix, whose unit is
# 16 KiB), and waits that nap (--nap 1: ec_ring_io.nap, for shared cores). Sourced by tests/run.sh, which provides `check DESC CMD...`.
: "${BUILD:=build}"
RING=$BUILD/tests/t_ring

ring() { local np=$1; shift; scripts/mpirun.sh "$np" "$RING" "$@"; }

check "ring n=3 m=1 isal, 64 KiB blocks" ring 3 --m 1 --kernel isal --block 65536
check "ring n=3 m=2 matrix, uneven blocks" ring 3 --m 2 --kernel matrix --block 24584
check "ring n=4 m=1 bitmatrix, uneven blocks" ring 4 --m 1 --kernel bitmatrix --block 49152
check "ring n=4 m=2 isal, uneven blocks" ring 4 --m 2 --kernel isal --block 24584
check "ring n=4 m=3 matrix, 64 KiB blocks" ring 4 --m 3 --kernel matrix --block 65536
check "ring n=6 m=1 bitmatrix, 64 KiB blocks" ring 6 --m 1 --kernel bitmatrix --block 65536
check "ring n=6 m=2 isal, 64 KiB blocks" ring 6 --m 2 --kernel isal --block 65536
check "ring n=6 m=3 matrix, uneven blocks" ring 6 --m 3 --kernel matrix --block 24584
check "ring n=8 m=1 isal, uneven blocks" ring 8 --m 1 --kernel isal --block 24584
check "ring n=8 m=2 bitmatrix, 64 KiB blocks" ring 8 --m 2 --kernel bitmatrix --block 65536
check "ring n=8 m=3 bitmatrix, uneven blocks" ring 8 --m 3 --kernel bitmatrix --block 49152
check "ring n=8 m=3 isal, 64 KiB blocks, another seed" ring 8 --m 3 --kernel isal --block 65536 --seed 7
check "ring n=4 m=2 isal, napping waits (shared cores)" ring 4 --m 2 --kernel isal --block 24584 --nap 1
check "ring n=6 m=1 bitmatrix, napping waits, another seed" ring 6 --m 1 --kernel bitmatrix --nap 1 --seed 3
check "ring n=5 m=2, tiny payloads (a chunk of 5 words)" ring 5 --m 2 --max 100
check "ring n=4 m=1 bitmatrix, a chunk of one unit (one block)" ring 4 --m 1 --kernel bitmatrix --max 1
