/*
 * incr.h - the contract of src/incr: change detection for incremental
 * checkpoints (after Jitsumoto et al., section 2.3: store only what changed
 * since the previous generation). No MPI, no files: memory in, runs out.
 *
 *   hash.c   XXH3-128 of every block of a variable (split over threads), and
 *            the diff of two generations' block hashes into runs of changed
 *            blocks.
 *   table.c  one generation's block hashes, per variable: what a later
 *            checkpoint diffs against. Shared by reference count, because
 *            the same generation can be the parent at several levels.
 *
 * A block is unchanged only if the parent has it with the same length and
 * the same 128-bit hash, so a variable that grows, shrinks or reappears is
 * diffed correctly: its new or resized blocks count as changed.
 *
 * Ownership: incr_tab owns its names and hash arrays; incr_tab_add takes
 * the hash array it is given.
 */
#ifndef CAIRN_INCR_H
#define CAIRN_INCR_H

#include "common/common.h"

/* ---- hashing and diffs (hash.c) --------------------------------------- */

/* OUT[i] = XXH3-128 of block i of the SIZE bytes at P (blocks of BLOCK bytes,
 * the last possibly short), for cn_incr_nblocks(SIZE, BLOCK) blocks, using up
 * to THREADS threads (1 = the calling thread only). */
void incr_hash(const void *p, uint64_t size, uint32_t block, int threads, cn_h128 *out);

/* Most runs a diff of NBLOCKS blocks can produce (runs are kept apart). */
static inline uint64_t incr_max_runs(uint64_t nblocks) { return nblocks / 2 + 1; }

/*
 * The blocks of the current variable (hashes CUR, SIZE bytes) that differ
 * from its parent (hashes PREV, PREV_SIZE bytes; PREV NULL: all differ), as
 * runs into RUNS (room for incr_max_runs). Returns the run count; *CHANGED
 * receives the changed block count.
 */
uint32_t incr_diff(const cn_h128 *prev, uint64_t prev_size, const cn_h128 *cur, uint64_t size,
                   uint32_t block, cn_run *runs, uint64_t *changed);

/* Bytes the blocks of RUNS[0..N-1] hold in a variable of SIZE bytes. */
uint64_t incr_run_bytes(const cn_run *runs, uint32_t n, uint64_t size, uint32_t block);

/* ---- a generation's hashes (table.c) ---------------------------------- */

typedef struct incr_var {
    char *name;
    uint64_t size;        /* bytes of the variable at that generation */
    cn_h128 *hash;        /* cn_incr_nblocks(size, block) hashes; NULL: unknown */
    double bound;         /* its stored values are within this of the hashed
                           * ones (a lossy variable's absolute bound); 0: exact */
} incr_var;

typedef struct incr_tab {
    int refs;
    int64_t gen, base;    /* the generation and the full generation of its chain */
    uint32_t depth;       /* generations before it in its chain (0: full) */
    uint32_t block;
    incr_var *v;          /* sorted by name once sealed */
    size_t n, cap;
} incr_tab;

/* A new table with one reference; NULL if out of memory. */
incr_tab *incr_tab_new(int64_t gen, int64_t base, uint32_t depth, uint32_t block);
/* Add variable NAME of SIZE bytes, stored within BOUND (0: exact), with HASH
 * (taken, may be NULL); -1 if out of memory (HASH is freed then). Call
 * incr_tab_seal after the last one. */
int incr_tab_add(incr_tab *t, const char *name, uint64_t size, double bound, cn_h128 *hash);
void incr_tab_seal(incr_tab *t);
const incr_var *incr_tab_find(const incr_tab *t, const char *name);
incr_tab *incr_tab_ref(incr_tab *t);   /* accepts NULL */
void incr_tab_unref(incr_tab *t);      /* accepts NULL; frees at zero */

#endif /* CAIRN_INCR_H */
