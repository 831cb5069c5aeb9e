/*
 * mktree.c - test helper: write a node-local checkpoint tree the way
 * libcairn lays it out, without MPI, so tests/cli/test_cli.sh can run the
 * cairn CLI (ls, inspect, verify) on known contents and then damage it.
 *
 *   mktree BASE JOB NODES RANKS_PER_NODE GEN... [--level L] [--block BYTES]
 *
 * writes, for each generation GEN and each emulated node node<i>,
 *   BASE/cairn-<uid>/JOB/node<i>/gen-<GEN>/rank-<r>.ckpt   (every rank of node i)
 *   BASE/cairn-<uid>/JOB/node<i>/gen-<GEN>/manifest
 * Each rank file holds the same entries with contents depending on rank and
 * generation: "u" (double 48x100, error bound 1e-3), "step" (int64), "hist"
 * (float 4x5x6), "empty" (uint8, no elements) and a routed file "out.dat"
 * (5000 bytes). The default block size is 4 KiB so entries span many blocks.
 * Built from src/common only (header, table and manifest encoders).
 */
#include "common/common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NENT 5

typedef struct src {
    const char *name;
    uint8_t kind, type, ndims;
    uint64_t dims[3], count;
    double bound;
} src;

static const src SRC[NENT] = {
    {"u", CN_KIND_VAR, CAIRN_DOUBLE, 2, {48, 100, 0}, 4800, 1e-3},
    {"step", CN_KIND_VAR, CAIRN_INT64, 0, {0, 0, 0}, 1, 0},
    {"hist", CN_KIND_VAR, CAIRN_FLOAT, 3, {4, 5, 6}, 120, 0},
    {"empty", CN_KIND_VAR, CAIRN_UINT8, 0, {0, 0, 0}, 0, 0},
    {"out.dat", CN_KIND_FILE, CAIRN_BYTE, 0, {0, 0, 0}, 5000, 0},
};

static void die(const char *what, const cn_err *err)
{
    fprintf(stderr, "mktree: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

/* Deterministic contents of entry I for RANK at GEN. */
static void fill(uint8_t *p, int i, uint32_t rank, int64_t gen)
{
    const src *s = &SRC[i];
    for (uint64_t k = 0; k < s->count; k++) {
        if (s->type == CAIRN_DOUBLE) {
            double v = (double)rank + (double)gen * 0.5 + (double)k * 1e-3;
            memcpy(p + 8 * k, &v, 8);
        } else if (s->type == CAIRN_FLOAT) {
            float v = (float)(rank * 100 + k) + (float)gen;
            memcpy(p + 4 * k, &v, 4);
        } else if (s->type == CAIRN_INT64) {
            int64_t v = gen * 1000 + rank;
            memcpy(p + 8 * k, &v, 8);
        } else {
            p[k] = (uint8_t)"cairn test output\n"[(k + rank) % 18];
        }
    }
}

/* Write RANK's file for GEN into GENFD; return its manifest entry. */
static cn_manifest_rank write_rank(int genfd, const char *job, int64_t gen, uint32_t level,
                                   uint32_t block, uint32_t rank, uint32_t nranks, uint32_t node,
                                   uint32_t nnodes)
{
    cn_entry e[NENT];
    memset(e, 0, sizeof e);
    cn_header h = {.version = CN_FORMAT_VERSION, .level = level, .generation = gen,
                   .rank = rank, .nranks = nranks, .node = node, .nnodes = nnodes,
                   .block_size = block, .nentries = NENT, .parent = -1, .base = gen};
    snprintf(h.job, sizeof h.job, "%s", job);
    for (int i = 0; i < NENT; i++) {
        snprintf(e[i].name, sizeof e[i].name, "%s", SRC[i].name);
        e[i].kind = SRC[i].kind;
        e[i].type = SRC[i].type;
        e[i].ndims = SRC[i].ndims;
        e[i].codec = CN_CODEC_RAW;
        memcpy(e[i].dims, SRC[i].dims, sizeof e[i].dims);
        e[i].count = SRC[i].count;
        e[i].raw_size = e[i].stored_size = SRC[i].count * cairn_type_size(SRC[i].type);
        e[i].error_bound = SRC[i].bound;
        e[i].nblocks = (uint32_t)((e[i].stored_size + block - 1) / block);
        e[i].block_sums = calloc(e[i].nblocks + 1, 8);
    }
    h.table_size = cn_table_size(e, NENT);
    h.data_offset = cn_align_up(CN_HEADER_SIZE + h.table_size, CN_DATA_ALIGN);
    uint64_t off = h.data_offset;
    for (int i = 0; i < NENT; i++) {
        off = cn_align_up(off, CN_ENTRY_ALIGN);
        e[i].offset = off;
        off += e[i].stored_size;
    }
    h.file_size = off;
    uint8_t *buf = calloc(1, (size_t)h.file_size);
    if (!buf)
        die("out of memory", NULL);
    for (int i = 0; i < NENT; i++) {
        fill(buf + e[i].offset, i, rank, gen);
        for (uint32_t b = 0; b < e[i].nblocks; b++) {
            uint64_t bo = (uint64_t)b * block;
            uint64_t n = e[i].stored_size - bo < block ? e[i].stored_size - bo : block;
            e[i].block_sums[b] = cn_hash(buf + e[i].offset + bo, (size_t)n);
        }
    }
    cn_table_encode(e, NENT, buf + CN_HEADER_SIZE);
    h.table_sum = cn_hash(buf + CN_HEADER_SIZE, (size_t)h.table_size);
    cn_header_encode(&h, buf);
    char name[32];
    cn_err err = {0};
    cn_rank_filename(name, sizeof name, rank);
    if (cn_write_atomic(genfd, name, buf, (size_t)h.file_size, &err) < 0)
        die(name, &err);
    free(buf);
    for (int i = 0; i < NENT; i++)
        free(e[i].block_sums);
    uint64_t raw = 0;
    for (int i = 0; i < NENT; i++)
        raw += e[i].raw_size;
    return (cn_manifest_rank){.rank = rank, .file_size = h.file_size, .header_sum = h.header_sum,
                              .raw = raw, .delta = raw};
}

int main(int argc, char **argv)
{
    uint32_t level = 1, block = CN_MIN_BLOCK;
    int npos = 0;
    char *pos[64];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--level") == 0 && i + 1 < argc)
            level = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--block") == 0 && i + 1 < argc)
            block = (uint32_t)atoi(argv[++i]);
        else if (npos < 64)
            pos[npos++] = argv[i];
    }
    if (npos < 5) {
        fprintf(stderr, "usage: mktree BASE JOB NODES RANKS_PER_NODE GEN... [--level L] "
                        "[--block BYTES]\n");
        return 2;
    }
    const char *job = pos[1];
    uint32_t nnodes = (uint32_t)atoi(pos[2]), rpn = (uint32_t)atoi(pos[3]);
    uint32_t nranks = nnodes * rpn;
    if (!cn_id_ok(job) || nnodes < 1 || rpn < 1)
        die("bad arguments", NULL);
    cn_err err = {0};
    char user[32];
    snprintf(user, sizeof user, "cairn-%u", (unsigned)geteuid());
    int basefd = cn_dir_open_path(pos[0], &err);
    int userfd = basefd < 0 ? basefd : cn_dir_open(basefd, user, true, &err);
    int jobfd = userfd < 0 ? userfd : cn_dir_open(userfd, job, true, &err);
    if (jobfd < 0)
        die(pos[0], &err);
    uint32_t *rank_node = calloc(nranks, sizeof *rank_node);
    for (uint32_t r = 0; r < nranks; r++)
        rank_node[r] = r / rpn;
    for (int g = 4; g < npos; g++) {
        int64_t gen = atoll(pos[g]);
        char gname[32];
        cn_gen_dirname(gname, sizeof gname, gen);
        for (uint32_t nd = 0; nd < nnodes; nd++) {
            char nname[32];
            snprintf(nname, sizeof nname, "node%u", nd);
            int nodefd = cn_dir_open(jobfd, nname, true, &err);
            int genfd = nodefd < 0 ? nodefd : cn_dir_open(nodefd, gname, true, &err);
            if (genfd < 0)
                die(gname, &err);
            cn_manifest_rank local[1024];
            for (uint32_t k = 0; k < rpn && k < 1024; k++)
                local[k] = write_rank(genfd, job, gen, level, block, nd * rpn + k, nranks, nd,
                                      nnodes);
            cn_manifest m = {.version = CN_MANIFEST_VERSION_OLD, .level = level, .target = level,
                             .generation = gen, .parent = -1, .base = gen,
                             .nranks = nranks, .nnodes = nnodes, .node = nd,
                             .nlocal = rpn < 1024 ? rpn : 1024, .rank_node = rank_node,
                             .local = local};
            snprintf(m.job, sizeof m.job, "%s", job);
            snprintf(m.node_name, sizeof m.node_name, "%s", nname);
            uint8_t *mb;
            size_t ml;
            if (cn_manifest_encode(&m, &mb, &ml, &err) < 0 ||
                cn_write_atomic(genfd, CN_MANIFEST_NAME, mb, ml, &err) < 0)
                die("manifest", &err);
            free(mb);
            close(genfd);
            close(nodefd);
        }
    }
    free(rank_node);
    close(jobfd);
    close(userfd);
    close(basefd);
    return 0;
}
