/*
 * test_h5.c - routed HDF5 files at level 4 (src/levels/pfs/h5split.c, h5map.c,
 * h5agg.c), without MPI:
 *
 *   - the map record round-trips; the file is rebuilt byte for byte from its
 *     skeleton and datasets; a changed skeleton or dataset byte, a missing or
 *     resized part fail with CAIRN_ECORRUPT saying which;
 *   - with libhdf5: a file image made in memory is scanned; exactly its
 *     contiguous datasets of CZ_H5_MIN_DSET bytes or more are found, with
 *     their types, shapes and the offsets of their bytes (the data written
 *     is found there); chunked, deflated and tiny ones are not; files that
 *     are not HDF5, or carry the signature and then garbage, give none;
 *   - three ranks' files (one with two HDF5 files, one with text) split,
 *     aggregated by every scheme, read back, joined: byte-identical, and the
 *     datasets grouped by path and type across ranks (aware);
 *   - a part no map claims, and a map without its skeleton, are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compress/compress.h"
#include "levels/pfs/pfs.h"

#ifdef CAIRN_HAVE_HDF5
#include <hdf5.h>
#endif

/* ---- the byte side ------------------------------------------------------- */

static uint8_t file[6000];

static void fill_file(void)
{
    for (size_t i = 0; i < sizeof file; i++)
        file[i] = (uint8_t)(i * 13 + (i >> 7));
}

static void test_map_and_join(void **state)
{
    (void)state;
    fill_file();
    cz_h5_dset d[3] = {{.name = "/a", .offset = 100, .size = 1000},
                       {.name = "/g/b", .offset = 1100, .size = 200}, /* adjacent */
                       {.name = "/g/c", .offset = 5000, .size = 1000}}; /* at the end */
    cn_err err = {0};
    uint8_t *map = NULL;
    size_t mlen = 0;
    assert_int_equal(cz_h5map_encode("f.h5", file, sizeof file, d, 3, &map, &mlen, &err), 0);
    cz_h5map *m = NULL;
    assert_int_equal(cz_h5map_parse(map, mlen, &m, &err), 0);
    assert_string_equal(m->file, "f.h5");
    assert_int_equal(m->n, 3);
    assert_int_equal(m->size, sizeof file);
    assert_int_equal(m->skel, sizeof file - 2200);
    assert_int_equal(cz_h5map_find(m, "/g/b"), 1);
    assert_int_equal(cz_h5map_find(m, "/nope"), -1);
    uint8_t skel[sizeof file], out[sizeof file];
    cz_h5_skeleton(file, sizeof file, d, 3, skel);
    const uint8_t *data[3] = {file + 100, file + 1100, file + 5000};
    uint64_t len[3] = {1000, 200, 1000};
    memset(out, 0, sizeof out);
    assert_int_equal(cz_h5_join(m, skel, m->skel, data, len, out, &err), 0);
    assert_memory_equal(out, file, sizeof file);

    skel[17] ^= 1; /* a skeleton byte */
    assert_int_equal(cz_h5_join(m, skel, m->skel, data, len, out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "does not match the checksum"));
    skel[17] ^= 1;
    uint8_t dset[200];
    memcpy(dset, file + 1100, 200);
    dset[199] ^= 0x80; /* a dataset byte */
    data[1] = dset;
    assert_int_equal(cz_h5_join(m, skel, m->skel, data, len, out, &err), CAIRN_ECORRUPT);
    data[1] = NULL;
    assert_int_equal(cz_h5_join(m, skel, m->skel, data, len, out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "'/g/b' is missing"));
    data[1] = file + 1100, len[1] = 199;
    assert_int_equal(cz_h5_join(m, skel, m->skel, data, len, out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "wrong size"));
    len[1] = 200;
    assert_int_equal(cz_h5_join(m, skel, m->skel - 1, data, len, out, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "skeleton"));
    cz_h5map_free(m);

    for (size_t cut = 0; cut < mlen; cut++) { /* every truncation refused */
        m = NULL;
        assert_true(cz_h5map_parse(map, cut, &m, &err) < 0);
        assert_null(m);
    }
    for (size_t i = 0; i < mlen; i++) { /* every flipped byte refused */
        map[i] ^= 0x04;
        assert_true(cz_h5map_parse(map, mlen, &m, &err) < 0);
        map[i] ^= 0x04;
    }
    free(map);
    /* out of place datasets are refused by the encoder too */
    d[1].offset = 1050;
    assert_int_equal(cz_h5map_encode("f.h5", file, sizeof file, d, 3, &map, &mlen, &err),
                     CAIRN_EINVAL);
}

/* ---- aggregation round trip ------------------------------------------------- */

typedef struct sinkbuf {
    uint8_t *p;
    size_t len;
} sinkbuf;

static int sink(void *arg, const void *b, size_t len, cn_err *err)
{
    sinkbuf *s = arg;
    (void)err;
    s->p = realloc(s->p, s->len + len);
    memcpy(s->p + s->len, b, len);
    s->len += len;
    return 0;
}

typedef struct back {
    cz_h5_parts *ps;
    cz_agg_var whole[16];
    uint8_t *whole_data[16];
    size_t nwhole;
    uint32_t groups_seen;
    uint8_t last_kind;
    char last_name[CAIRN_NAME_MAX + 1];
} back;

static int keep(void *arg, const cz_agg_var *v)
{
    back *b = arg;
    cn_err err = {0};
    if (v->kind > CN_KIND_FILE)
        return cz_h5_parts_keep(b->ps, v, &err);
    b->whole[b->nwhole] = *v;
    b->whole_data[b->nwhole] = malloc(v->size + 1);
    memcpy(b->whole_data[b->nwhole], v->data, v->size);
    b->whole[b->nwhole].name = strdup(v->name);
    b->nwhole++;
    return 0;
}

typedef struct rebuilt {
    char name[16][CAIRN_NAME_MAX + 1];
    uint8_t *data[16];
    uint64_t size[16];
    int n;
} rebuilt;

static int got_file(void *arg, const char *name, uint8_t *data, uint64_t size)
{
    rebuilt *r = arg;
    snprintf(r->name[r->n], sizeof r->name[r->n], "%s", name);
    r->data[r->n] = data;
    r->size[r->n++] = size;
    return 0;
}

/* V's routed files (ranks 0..2) through split, SCHEME, read, join: each back byte-identical. */
static void round_trip(const cz_agg_var *v, size_t n, int scheme, uint32_t want_split)
{
    cn_err err = {0};
    cz_h5_split s;
    assert_int_equal(cz_h5_split_vars(v, n, &s, &err), 0);
    assert_int_equal(s.files, want_split);
    cz_agg_opts o = {.scheme = scheme};
    sinkbuf out = {0};
    assert_int_equal(cz_agg_write(s.v, s.n, &o, sink, &out, NULL, &err), 0);
    cz_h5_split_free(&s);
    cz_agg_file *f = NULL;
    assert_int_equal(cz_agg_open(out.p, out.len, &f, &err), 0);
    back b = {.ps = cz_h5_parts_new()};
    assert_int_equal(cz_agg_read(f, keep, &b, &err), 0);
    cz_agg_close(f);
    for (uint32_t rank = 0; rank < 3; rank++) {
        rebuilt r = {0};
        assert_int_equal(cz_h5_parts_join(b.ps, rank, got_file, &r, &err), 0);
        for (size_t i = 0; i < n; i++) {
            if (v[i].kind != CN_KIND_FILE || v[i].rank != rank)
                continue;
            int found = 0; /* whole files come straight back; split ones from join */
            for (size_t k = 0; k < b.nwhole; k++)
                if (b.whole[k].rank == rank && strcmp(b.whole[k].name, v[i].name) == 0) {
                    assert_int_equal(b.whole[k].size, v[i].size);
                    assert_memory_equal(b.whole_data[k], v[i].data, v[i].size);
                    found++;
                }
            for (int k = 0; k < r.n; k++)
                if (strcmp(r.name[k], v[i].name) == 0) {
                    assert_int_equal(r.size[k], v[i].size);
                    assert_memory_equal(r.data[k], v[i].data, v[i].size);
                    found++;
                }
            assert_int_equal(found, 1);
        }
        for (int k = 0; k < r.n; k++)
            free(r.data[k]);
        r.n = 0; /* joined once: a second join of the rank finds nothing left */
        assert_int_equal(cz_h5_parts_join(b.ps, rank, got_file, &r, &err), 0);
        assert_int_equal(r.n, 0);
    }
    for (size_t k = 0; k < b.nwhole; k++) {
        free((void *)b.whole[k].name);
        free(b.whole_data[k]);
    }
    cz_h5_parts_free(b.ps);
    free(out.p);
}

#ifdef CAIRN_HAVE_HDF5
/* An HDF5 file made in memory (core driver, no backing store): *LEN bytes. */
static uint8_t *h5_image(int rank, int second, size_t *len)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 16, 0);
    hid_t f = H5Fcreate(second ? "b.h5" : "a.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hid_t g = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    static double T[30][20];
    static float r[500];
    static int32_t tiny[4] = {1, 2, 3, 4};
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 20; j++)
            T[i][j] = 100.0 + i * 0.5 + j * 0.25 + rank;
    for (int i = 0; i < 500; i++)
        r[i] = (float)(i * 0.001 + rank);
    hsize_t d2[2] = {30, 20}, d1 = 500, dt = 4, ch[2] = {10, 10};
    hid_t sp = H5Screate_simple(2, d2, NULL);
    hid_t ds = H5Dcreate2(g, "T", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, T);
    H5Dclose(ds);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, ch);
    ds = H5Dcreate2(g, "chunked", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, T);
    H5Dclose(ds);
    H5Pset_deflate(dcpl, 1);
    ds = H5Dcreate2(g, "deflated", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, T);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (!second) {
        sp = H5Screate_simple(1, &d1, NULL);
        ds = H5Dcreate2(f, "rho", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, r);
        H5Dclose(ds);
        H5Sclose(sp);
        sp = H5Screate_simple(1, &dt, NULL);
        ds = H5Dcreate2(f, "tiny", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, tiny);
        H5Dclose(ds);
        H5Sclose(sp);
    }
    H5Gclose(g);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    ssize_t n = H5Fget_file_image(f, NULL, 0);
    assert_true(n > 0);
    uint8_t *p = malloc((size_t)n);
    assert_int_equal(H5Fget_file_image(f, p, (size_t)n), n);
    H5Fclose(f);
    H5Pclose(fapl);
    *len = (size_t)n;
    return p;
}

static void test_scan(void **state)
{
    (void)state;
    assert_true(cz_h5_available());
    size_t len = 0;
    uint8_t *p = h5_image(1, 0, &len);
    cz_h5_dset *d = NULL;
    size_t n = 0;
    cn_err err = {0};
    assert_int_equal(cz_h5_scan(p, len, &d, &n, &err), 0);
    assert_int_equal(n, 2); /* /fields/T and /rho: not chunked, deflated, tiny */
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(d[i].name, "/fields/T") == 0) {
            seen |= 1;
            assert_int_equal(d[i].type, CAIRN_DOUBLE);
            assert_int_equal(d[i].ndims, 2);
            assert_int_equal(d[i].dims[0], 30);
            assert_int_equal(d[i].dims[1], 20);
            assert_int_equal(d[i].size, 30 * 20 * 8);
            double first;
            memcpy(&first, p + d[i].offset, 8);
            assert_true(first == 101.0); /* T[0][0] of rank 1: the bytes are there */
        } else if (strcmp(d[i].name, "/rho") == 0) {
            seen |= 2;
            assert_int_equal(d[i].type, CAIRN_FLOAT);
            assert_int_equal(d[i].count, 500);
        }
        if (i)
            assert_true(d[i].offset >= d[i - 1].offset + d[i - 1].size);
    }
    assert_int_equal(seen, 3);
    cz_h5_dsets_free(d, n);
    /* the signature, then garbage: no datasets, no error */
    memset(p + 8, 0xee, len - 8);
    assert_int_equal(cz_h5_scan(p, len, &d, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(cz_h5_scan(file, sizeof file, &d, &n, &err), 0); /* not HDF5 */
    assert_int_equal(n, 0);
    free(p);
}

static void test_split_round_trip(void **state)
{
    (void)state;
    fill_file();
    uint8_t *img[3][2];
    size_t len[3][2];
    cz_agg_var v[10];
    size_t n = 0;
    static int64_t step = 7;
    for (uint32_t r = 0; r < 3; r++) {
        for (int k = 0; k < 2; k++)
            img[r][k] = h5_image((int)r, k, &len[r][k]);
        v[n++] = (cz_agg_var){.rank = r, .name = "step", .kind = CN_KIND_VAR,
                              .type = CAIRN_INT64, .count = 1, .size = 8, .data = &step};
        v[n++] = (cz_agg_var){.rank = r, .name = "state.h5", .kind = CN_KIND_FILE,
                              .count = len[r][0], .size = len[r][0], .data = img[r][0]};
        if (r != 1) /* rank 1 has one HDF5 file */
            v[n++] = (cz_agg_var){.rank = r, .name = "aux.h5", .kind = CN_KIND_FILE,
                                  .count = len[r][1], .size = len[r][1], .data = img[r][1]};
    }
    v[n++] = (cz_agg_var){.rank = 1, .name = "notes.txt", .kind = CN_KIND_FILE,
                          .count = sizeof file, .size = sizeof file, .data = file};
    for (int s = CZ_AGG_AGNOSTIC; s <= CZ_AGG_AUTO; s++)
        round_trip(v, n, s, 5);

    /* aware: one group per dataset path and type, across ranks and files */
    cn_err err = {0};
    cz_h5_split sp;
    assert_int_equal(cz_h5_split_vars(v, n, &sp, &err), 0);
    assert_int_equal(sp.datasets, 3 + 2 + 3 * 1); /* T + rho in state.h5, T in aux.h5 */
    cz_agg_opts o = {.scheme = CZ_AGG_AWARE};
    sinkbuf out = {0};
    cz_agg_stats st;
    assert_int_equal(cz_agg_write(sp.v, sp.n, &o, sink, &out, &st, &err), 0);
    /* step, files (notes.txt), map, skeleton, /fields/T, /rho */
    assert_int_equal(st.ngroups, 6);
    cz_h5_split_free(&sp);
    free(out.p);
    for (uint32_t r = 0; r < 3; r++)
        for (int k = 0; k < 2; k++)
            free(img[r][k]);
}
#endif

static void test_stray_parts(void **state)
{
    (void)state;
    fill_file();
    cz_h5_dset d = {.name = "/a", .type = CAIRN_BYTE, .count = 1000, .offset = 100,
                    .size = 1000};
    cn_err err = {0};
    uint8_t *map = NULL;
    size_t mlen = 0;
    assert_int_equal(cz_h5map_encode("f.h5", file, sizeof file, &d, 1, &map, &mlen, &err), 0);
    cz_agg_var mv = {.rank = 0, .name = "map", .kind = CZ_KIND_H5MAP, .count = mlen,
                     .size = mlen, .data = map};
    cz_agg_var dv = {.rank = 0, .name = "/a", .kind = CZ_KIND_H5DATA, .count = 1000,
                     .size = 1000, .data = file + 100};
    cz_agg_var stray = dv;
    stray.file = 3;
    rebuilt r = {0};
    cz_h5_parts *ps = cz_h5_parts_new(); /* map and dataset, no skeleton */
    assert_int_equal(cz_h5_parts_keep(ps, &mv, &err), 0);
    assert_int_equal(cz_h5_parts_keep(ps, &dv, &err), 0);
    assert_int_equal(cz_h5_parts_join(ps, 0, got_file, &r, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "skeleton is missing"));
    cz_h5_parts_free(ps);
    ps = cz_h5_parts_new(); /* a dataset of a file no map describes */
    assert_int_equal(cz_h5_parts_keep(ps, &stray, &err), 0);
    assert_int_equal(cz_h5_parts_join(ps, 0, got_file, &r, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "belongs to no map"));
    cz_h5_parts_free(ps);
    assert_int_equal(r.n, 0);
    free(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_and_join),
        cmocka_unit_test(test_stray_parts),
#ifdef CAIRN_HAVE_HDF5
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_split_round_trip),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
