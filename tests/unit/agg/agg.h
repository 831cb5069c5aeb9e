/*
 * agg.h - what the files of test_agg share (the tests are listed in
 * tests/unit/test_agg.c, which owns main, the round trips, names, the
 * comparison, the time model and the fuzz seeds):
 *   agg/workload.c  a memory sink, the workloads (sets of ranks' variables)
 *                   and the round trip through cz_agg_write and cz_agg_read
 *   agg/damage.c    flipped, truncated and resealed files
 *   agg/read.c      known block checksums, cz_agg_read_some, bad input, lent frames
 */
#ifndef CAIRN_TEST_AGG_H
#define CAIRN_TEST_AGG_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"
#include "levels/pfs/pfs.h"

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
    int fail_at;   /* fail the Nth call (0 = never) */
    int calls;
} buf;
typedef struct set {
    cz_agg_var v[1024];
    char names[1024][32];
    void *data[1024];
    size_t n;
} set;
typedef struct check {
    const set *s;
    const cz_agg_file *f;
    size_t calls;
    bool *seen;
    int stop_at;   /* return 7 on this call (0 = never) */
} check;

/* workload.c */
int sink(void *arg, const void *p, size_t len, cn_err *err);
void add(set *s, uint32_t rank, const char *name, uint8_t kind, uint8_t type, int ndims,
         const uint64_t *dims, uint64_t count, uint64_t *seed);
void set_free(set *s);
void big_set(set *s);
void similar_set(set *s, uint32_t nranks);
size_t find(const set *s, const cz_agg_var *v);
void same_meta(const cz_agg_var *a, const cz_agg_var *b);
int check_cb(void *arg, const cz_agg_var *v);
buf round_trip(const set *s, const cz_agg_opts *o, cz_agg_stats *st);

/* damage.c */
buf small_file(int scheme, set *s);
void test_flips_and_truncation(void **state);
void test_raw_index_sum(void **state);
int count_cb(void *arg, const cz_agg_var *v);
void test_resealed_damage(void **state);

/* read.c */
void test_known_sums(void **state);
void test_read_some(void **state);
void test_errors(void **state);
void test_lent_frames(void **state);

#endif
