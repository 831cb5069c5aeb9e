/*
 * t_ring.c - the ring encode and the set decode (src/erasure/ring.c) against
 * a centralized computation, on every rank of the job as one member each.
 *
 *   scripts/mpirun.sh N build/tests/t_ring [--m M] [--kernel auto|isal|matrix|bitmatrix]
 *       [--block BYTES] [--max BYTES] [--seed S] [--w 8|16]
 *
 * Member y's payload is a pure function of (seed, y), of a size between 0 and
 * MAX bytes (member 0 has MAX, member 2 none, the others odd sizes), so any
 * rank can compute any member's padded payload: each parity holder encodes
 * its stripes itself with ec_encode over the data columns and compares. The
 * io callbacks keep everything in memory and police the protocol: a lost
 * member's data must never be read, parity only of the holder's own stripes
 * is written, every parity and rebuilt byte exactly once, rebuilt padding is
 * zero. Then, for every pattern of 1..m lost members, the lost members' data
 * and parity are overwritten with garbage and ec_ring_decode must restore
 * them bit for bit; m + 1 lost members must give CAIRN_ECORRUPT everywhere
 * and touch nothing. Finally the agreement: a failing read on one member, or
 * arguments that differ between members, give the same code on every member.
 *
 * Ranks agree on pass/fail; rank 0 prints "PASS ..." or "FAIL ...: reason"
 * and the exit status is 0 only on PASS.
 */
#include "erasure/erasure.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, n;

typedef struct mem {
    int n, m, k, x;
    uint64_t chunk;
    size_t align;
    uint64_t size;          /* true payload size */
    uint8_t *data;          /* size bytes */
    uint8_t *parity;        /* m rows of chunk bytes: row r of stripe x - r */
    uint8_t *pcount;        /* writes per parity byte */
    uint8_t *dcount;        /* writes per payload byte (k * chunk) */
    bool lost;              /* reading our data or parity is a violation */
    bool decoding;          /* writes only allowed if lost */
    int fail_read;          /* inject: read returns this code */
    uint64_t calls;         /* callback calls */
    char bad[256];          /* first protocol violation */
} mem;

static void violation(mem *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(mem *s, const char *fmt, ...)
{
    if (s->bad[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->bad, sizeof s->bad, fmt, ap);
    va_end(ap);
}

static int holder_row(mem *s, int stripe, int row, uint64_t off, size_t len)
{
    if (row < 0 || row >= s->m || ec_parity_holder(s->n, stripe, row) != s->x ||
        off + len > s->chunk || len % s->align || off % s->align) {
        violation(s, "parity stripe %d row %d [%llu, +%zu) is not this member's", stripe, row,
                  (unsigned long long)off, len);
        return -1;
    }
    return 0;
}

static int io_read(void *arg, uint64_t off, void *buf, size_t len, cn_err *err)
{
    mem *s = arg;
    s->calls++;
    if (s->fail_read)
        return cn_fail(err, s->fail_read, "injected read failure at %llu",
                       (unsigned long long)off);
    if (s->lost)
        violation(s, "read of lost data at %llu", (unsigned long long)off);
    if (off + len > (uint64_t)s->k * s->chunk)
        violation(s, "read past the padded payload: %llu + %zu", (unsigned long long)off, len);
    size_t have = off < s->size ? (size_t)(s->size - off < len ? s->size - off : len) : 0;
    memcpy(buf, s->data + off, have);
    memset((uint8_t *)buf + have, 0, len - have);
    return 0;
}

static int io_write_parity(void *arg, int stripe, int row, uint64_t off, const void *buf,
                           size_t len, cn_err *err)
{
    mem *s = arg;
    s->calls++;
    if (s->decoding && !s->lost)
        violation(s, "decode wrote parity of a member that was not lost");
    if (holder_row(s, stripe, row, off, len) == 0) {
        memcpy(s->parity + (size_t)row * s->chunk + off, buf, len);
        for (size_t i = 0; i < len; i++)
            s->pcount[(size_t)row * s->chunk + off + i]++;
    }
    return 0;
}

static int io_read_parity(void *arg, int stripe, int row, uint64_t off, void *buf, size_t len,
                          cn_err *err)
{
    mem *s = arg;
    s->calls++;
    if (s->lost)
        violation(s, "read of lost parity");
    if (holder_row(s, stripe, row, off, len) == 0)
        memcpy(buf, s->parity + (size_t)row * s->chunk + off, len);
    return 0;
}

static int io_write_data(void *arg, uint64_t off, const void *buf, size_t len, cn_err *err)
{
    mem *s = arg;
    s->calls++;
    if (!s->lost)
        violation(s, "decode wrote data of a member that was not lost");
    if (off + len > (uint64_t)s->k * s->chunk || off % s->align || len % s->align) {
        violation(s, "data write [%llu, +%zu) outside the padded payload",
                  (unsigned long long)off, len);
        return 0;
    }
    const uint8_t *b = buf;
    for (size_t i = 0; i < len; i++) {
        uint64_t o = off + i;
        s->dcount[o]++;
        if (o < s->size)
            s->data[o] = b[i];
        else if (b[i] != 0)
            violation(s, "rebuilt padding byte %llu is %u, not 0", (unsigned long long)o, b[i]);
    }
    return 0;
}

/* ---- data -------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t member_size(uint64_t seed, int y, uint64_t max)
{
    if (y == 0)
        return max;
    if (y == 2)
        return 0;
    return mix(seed * 1000003 + (uint64_t)y) % (max + 1);
}

/* Member Y's payload padded to PADDED bytes. */
static void member_payload(uint64_t seed, int y, uint64_t size, uint8_t *out, uint64_t padded)
{
    uint64_t x = mix(seed ^ ((uint64_t)(y + 1) << 32)) | 1;
    for (uint64_t i = 0; i < size; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = (uint8_t)(x >> 24);
    }
    memset(out + size, 0, padded - size);
}

static bool agree(bool ok)
{
    int mine = ok, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
}

static char fail_msg[1024];
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    if (fail_msg[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = snprintf(fail_msg, sizeof fail_msg, "member %d: ", rank);
    vsnprintf(fail_msg + w, sizeof fail_msg - (size_t)w, fmt, ap);
    va_end(ap);
}

/* Agree; on failure, rank 0 learns the lowest failing rank's message. */
static bool agree_report(bool ok, char *out, size_t outlen)
{
    if (agree(ok))
        return true;
    int mine = ok ? n : rank, first = 0;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", fail_msg[0] ? fail_msg : "failed");
    MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    snprintf(out, outlen, "%s", msg);
    return false;
}

static long parse_num(const char *s, const char *opt)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, "t_ring: %s: bad number '%s'\n", opt, s);
        exit(2);
    }
    return v;
}

static int kernel_of(const char *s)
{
    for (int kn = EC_KERNEL_AUTO; kn <= EC_KERNEL_BITMATRIX; kn++)
        if (strcmp(s, ec_kernel_name(kn)) == 0)
            return kn;
    fprintf(stderr, "t_ring: unknown kernel '%s'\n", s);
    exit(2);
}

/* Next combination of R of N (ascending indexes in C); false after the last. */
static bool next_comb(int *c, int r, int nn)
{
    int i = r - 1;
    while (i >= 0 && c[i] == nn - r + i)
        i--;
    if (i < 0)
        return false;
    c[i]++;
    for (int j = i + 1; j < r; j++)
        c[j] = c[j - 1] + 1;
    return true;
}

/* ---- the test ---------------------------------------------------------- */

typedef struct world {
    const ec_codec *c;
    int m, k;
    uint64_t chunk, seed;
    size_t block;
    mem s;
    ec_ring_io io;
    uint8_t *expect_data;   /* this member's padded payload */
    uint8_t *expect_parity; /* m rows */
} world;

static void layout_checks(int m)
{
    int k = n - m;
    for (int t = 0; t < n; t++) {
        int seen[EC_MAX_SHARDS] = {0};
        for (int r = 0; r < m; r++) {
            int h = ec_parity_holder(n, t, r);
            seen[h]++;
            if (ec_data_column(n, m, t, h) != -1)
                fail("layout: stripe %d row %d holder %d also gives data", t, r, h);
        }
        for (int p = 0; p < k; p++) {
            int y = ec_data_member(n, m, t, p);
            seen[y]++;
            if (ec_data_column(n, m, t, y) != p)
                fail("layout: stripe %d column %d member %d has column %d", t, p, y,
                     ec_data_column(n, m, t, y));
        }
        for (int y = 0; y < n; y++)
            if (seen[y] != 1)
                fail("layout: member %d has %d shards of stripe %d", y, seen[y], t);
    }
    /* The ring's schedule: member x at step s works on stripe (x - s - m) mod n. */
    for (int x = 0; x < n; x++)
        for (int s = 0; s < n; s++) {
            int t = ((x - s - m) % n + n) % n;
            if (s < k && ec_data_column(n, m, t, x) != s)
                fail("schedule: member %d step %d: stripe %d column is %d", x, s, t,
                     ec_data_column(n, m, t, x));
            if (s >= k && ec_parity_holder(n, t, s - k) != x)
                fail("schedule: member %d step %d: row %d of stripe %d is held by %d", x, s,
                     s - k, t, ec_parity_holder(n, t, s - k));
        }
}

/* Every parity holder encodes its stripes from all members' padded payloads. */
static int central_parity(world *w, uint64_t max)
{
    size_t padded = (size_t)w->k * w->chunk;
    uint8_t *all = malloc((size_t)n * padded);
    uint8_t *tmp = malloc((size_t)w->m * w->chunk);
    if (!all || !tmp)
        return -1;
    for (int y = 0; y < n; y++)
        member_payload(w->seed, y, member_size(w->seed, y, max), all + (size_t)y * padded,
                       padded);
    int rc = 0;
    for (int r = 0; r < w->m && rc == 0; r++) {
        int t = ((rank - r) % n + n) % n;
        const uint8_t *data[EC_MAX_SHARDS];
        uint8_t *par[EC_MAX_SHARDS];
        for (int p = 0; p < w->k; p++)
            data[p] = all + (size_t)ec_data_member(n, w->m, t, p) * padded + (size_t)p * w->chunk;
        for (int q = 0; q < w->m; q++)
            par[q] = tmp + (size_t)q * w->chunk;
        rc = ec_encode(w->c, data, par, w->chunk);
        memcpy(w->expect_parity + (size_t)r * w->chunk, par[r], w->chunk);
    }
    free(all);
    free(tmp);
    return rc;
}

static bool coverage_once(const uint8_t *count, size_t len, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (count[i] != 1) {
            fail("%s byte %zu written %u times, not once", what, i, count[i]);
            return false;
        }
    return true;
}

static void test_encode(world *w, uint64_t max)
{
    mem *s = &w->s;
    memset(s->parity, 0x5a, (size_t)w->m * w->chunk);
    memset(s->pcount, 0, (size_t)w->m * w->chunk);
    cn_err err;
    int rc = ec_ring_encode(MPI_COMM_WORLD, w->c, w->chunk, w->block, &w->io, &err);
    if (rc != 0) {
        fail("ec_ring_encode: %s (%d): %s", cairn_strerror(rc), rc, err.msg);
        return;
    }
    if (s->bad[0]) {
        fail("encode: %s", s->bad);
        return;
    }
    if (!coverage_once(s->pcount, (size_t)w->m * w->chunk, "encode: parity"))
        return;
    if (central_parity(w, max) != 0) {
        fail("centralized ec_encode failed");
        return;
    }
    for (int r = 0; r < w->m; r++)
        for (uint64_t i = 0; i < w->chunk; i++)
            if (s->parity[r * w->chunk + i] != w->expect_parity[r * w->chunk + i]) {
                fail("parity row %d of stripe %d differs from ec_encode at byte %llu", r,
                     ((rank - r) % n + n) % n, (unsigned long long)i);
                return;
            }
}

/* Lose the members in LOSTSET[0..NL), decode, compare. */
static void test_pattern(world *w, const int *lostset, int nl)
{
    mem *s = &w->s;
    bool lost[EC_MAX_SHARDS] = {false};
    char names[128] = "";
    for (int i = 0; i < nl; i++) {
        lost[lostset[i]] = true;
        size_t u = strlen(names);
        snprintf(names + u, sizeof names - u, "%s%d", i ? "," : "", lostset[i]);
    }
    size_t plen = (size_t)w->m * w->chunk, dlen = (size_t)w->k * w->chunk;
    s->lost = lost[rank];
    s->decoding = true;
    memset(s->pcount, 0, plen);
    memset(s->dcount, 0, dlen);
    if (s->lost) { /* a replaced node: everything gone */
        for (size_t i = 0; i < s->size; i++)
            s->data[i] = (uint8_t)(0xa5 ^ i ^ (size_t)nl);
        memset(s->parity, 0xc3, plen);
    }
    cn_err err;
    int rc = ec_ring_decode(MPI_COMM_WORLD, w->c, w->chunk, w->block, lost, &w->io, &err);
    s->decoding = false;
    bool was_lost = s->lost;
    s->lost = false;
    if (rc != 0) {
        fail("lost {%s}: ec_ring_decode: %s (%d): %s", names, cairn_strerror(rc), rc, err.msg);
        return;
    }
    if (s->bad[0]) {
        fail("lost {%s}: %s", names, s->bad);
        return;
    }
    if (memcmp(s->data, w->expect_data, s->size) != 0 ||
        memcmp(s->parity, w->expect_parity, plen) != 0) {
        fail("lost {%s}: %s differs after decode", names,
             memcmp(s->data, w->expect_data, s->size) ? "payload" : "parity");
        return;
    }
    if (was_lost) {
        if (!coverage_once(s->pcount, plen, "decode: parity") ||
            !coverage_once(s->dcount, dlen, "decode: payload"))
            return;
    }
}

static void test_too_many(world *w)
{
    mem *s = &w->s;
    bool lost[EC_MAX_SHARDS] = {false};
    for (int i = 0; i <= w->m; i++) /* m + 1 members, spread over the ring */
        lost[(i * n) / (w->m + 1)] = true;
    s->calls = 0;
    s->decoding = true;
    cn_err err;
    int rc = ec_ring_decode(MPI_COMM_WORLD, w->c, w->chunk, w->block, lost, &w->io, &err);
    s->decoding = false;
    char want[64];
    snprintf(want, sizeof want, "at most %d can be rebuilt", w->m);
    if (rc != CAIRN_ECORRUPT)
        fail("m+1 lost: got %s (%d), not CAIRN_ECORRUPT", cairn_strerror(rc), rc);
    else if (!strstr(err.msg, want))
        fail("m+1 lost: message '%s' does not say '%s'", err.msg, want);
    else if (s->calls != 0)
        fail("m+1 lost: %llu io calls, expected none", (unsigned long long)s->calls);
}

/* A failing read on the last member: every member gets its code and message. */
static void test_agreement(world *w)
{
    mem *s = &w->s;
    cn_err err;
    s->fail_read = rank == n - 1 ? CAIRN_EIO : 0;
    int rc = ec_ring_encode(MPI_COMM_WORLD, w->c, w->chunk, w->block, &w->io, &err);
    s->fail_read = 0;
    char want[64];
    snprintf(want, sizeof want, "member %d: injected read failure", n - 1);
    if (rc != CAIRN_EIO)
        fail("failing read: encode gave %s (%d), not CAIRN_EIO", cairn_strerror(rc), rc);
    else if (!strstr(err.msg, want))
        fail("failing read: message '%s' lacks '%s'", err.msg, want);
    if (fail_msg[0])
        return;

    /* Arguments that differ between members: refused everywhere. */
    size_t block = rank == 1 ? w->block + 2 * w->s.align : w->block;
    rc = ec_ring_encode(MPI_COMM_WORLD, w->c, w->chunk + (rank == 1 ? w->s.align : 0), block,
                        &w->io, &err);
    if (rc != CAIRN_EINVAL)
        fail("different chunk sizes: got %s (%d), not CAIRN_EINVAL", cairn_strerror(rc), rc);
    bool lost[EC_MAX_SHARDS] = {false};
    lost[rank == 0 ? 1 : 0] = true;
    rc = ec_ring_decode(MPI_COMM_WORLD, w->c, w->chunk, w->block, lost, &w->io, &err);
    if (rc != CAIRN_EINVAL)
        fail("different lost arrays: got %s (%d), not CAIRN_EINVAL", cairn_strerror(rc), rc);
    s->calls = 0;
    rc = ec_ring_encode(MPI_COMM_WORLD, w->c, 0, w->block, &w->io, &err);
    if (rc != 0 || s->calls != 0)
        fail("empty chunk: rc %d, %llu io calls", rc, (unsigned long long)s->calls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int m = 2, kernel = EC_KERNEL_AUTO, wbits = 0, nap = 0;
    size_t block = 64 << 10;
    uint64_t max = 1 << 20, seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "t_ring: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--m"))
            m = (int)parse_num(v, a);
        else if (!strcmp(a, "--kernel"))
            kernel = kernel_of(v);
        else if (!strcmp(a, "--block"))
            block = (size_t)parse_num(v, a);
        else if (!strcmp(a, "--max"))
            max = (uint64_t)parse_num(v, a);
        else if (!strcmp(a, "--seed"))
            seed = (uint64_t)parse_num(v, a);
        else if (!strcmp(a, "--w"))
            wbits = (int)parse_num(v, a);
        else if (!strcmp(a, "--nap"))
            nap = (int)parse_num(v, a);
        else {
            fprintf(stderr, "t_ring: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (wbits == 0)
        wbits = n > 256 ? 16 : 8;
    char desc[256];
    snprintf(desc, sizeof desc, "ring n=%d m=%d kernel=%s block=%zu max=%llu%s", n, m,
             ec_kernel_name(kernel), block, (unsigned long long)max, nap ? " napping" : "");
    if (m < 1 || m >= n || max < 1) {
        if (rank == 0)
            printf("FAIL %s: need 1 <= m < n and max >= 1\n", desc);
        MPI_Finalize();
        return 1;
    }

    world w;
    memset(&w, 0, sizeof w);
    w.m = m;
    w.k = n - m;
    w.seed = seed;
    w.block = block;
    ec_codec *codec = NULL;
    cn_err err;
    int rc = ec_codec_new(w.k, m, wbits, kernel, &codec, &err);
    char why[1024] = "";
    bool ok = rc == 0;
    if (!ok)
        fail("ec_codec_new: %s", err.msg);
    if (!agree_report(ok, why, sizeof why)) {
        if (rank == 0)
            printf("FAIL %s: %s\n", desc, why);
        MPI_Finalize();
        return 1;
    }
    w.c = codec;
    size_t align = ec_codec_align(codec);
    uint64_t per = (max + (uint64_t)w.k - 1) / (uint64_t)w.k;
    w.chunk = (per + align - 1) / align * align;

    mem *s = &w.s;
    *s = (mem){.n = n, .m = m, .k = w.k, .x = rank, .chunk = w.chunk, .align = align};
    s->size = member_size(seed, rank, max);
    size_t plen = (size_t)m * w.chunk, dlen = (size_t)w.k * w.chunk;
    s->data = malloc(s->size ? s->size : 1);
    s->parity = malloc(plen);
    s->pcount = malloc(plen);
    s->dcount = malloc(dlen);
    w.expect_data = malloc(dlen);
    w.expect_parity = malloc(plen);
    if (!s->data || !s->parity || !s->pcount || !s->dcount || !w.expect_data || !w.expect_parity) {
        fprintf(stderr, "t_ring: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    member_payload(seed, rank, s->size, w.expect_data, dlen);
    memcpy(s->data, w.expect_data, s->size);
    w.io = (ec_ring_io){io_read, io_write_parity, io_read_parity, io_write_data, s, nap != 0};

    int patterns = 0;
    layout_checks(m);
    if (agree(!fail_msg[0]))
        test_encode(&w, max);
    if (agree(!fail_msg[0])) {
        int comb[EC_MAX_SHARDS];
        for (int r = 1; r <= m && !fail_msg[0]; r++) {
            for (int i = 0; i < r; i++)
                comb[i] = i;
            do {
                test_pattern(&w, comb, r);
                patterns++;
            } while (agree(!fail_msg[0]) && next_comb(comb, r, n));
        }
    }
    if (agree(!fail_msg[0]))
        test_too_many(&w);
    if (agree(!fail_msg[0]))
        test_agreement(&w);

    ok = agree_report(!fail_msg[0], why, sizeof why);
    if (rank == 0) {
        uint64_t blk = block / align * align;
        if (blk == 0)
            blk = align;
        if (blk > w.chunk / 2) /* as the ring does: two blocks at least */
            blk = (w.chunk / 2 + align - 1) / align * align;
        if (ok)
            printf("PASS %s chunk=%llu nb=%llu last=%llu patterns=%d\n", desc,
                   (unsigned long long)w.chunk, (unsigned long long)((w.chunk + blk - 1) / blk),
                   (unsigned long long)(w.chunk - (w.chunk - 1) / blk * blk), patterns);
        else
            printf("FAIL %s: %s\n", desc, why);
    }
    ec_codec_free(codec);
    free(s->data);
    free(s->parity);
    free(s->pcount);
    free(s->dcount);
    free(w.expect_data);
    free(w.expect_parity);
    MPI_Finalize();
    return ok ? 0 : 1;
}
