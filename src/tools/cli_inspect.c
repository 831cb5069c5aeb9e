/*
 * cli_inspect.c - `cairn inspect FILE...`: print what a checkpoint file, a
 * node manifest, a parity file or a PFS file (aggregated file, index; their
 * printing is in cli_pfs.c) holds, recognised by its magic bytes.
 *
 * A checkpoint file is opened with cn_ckpt_open, which validates the header
 * and the entry table (their checksums and every field) but not the data;
 * the output says so. A manifest is decoded with cn_manifest_decode.
 */
#include "tools/tools.h"
#include "compress/compress.h"
#include "levels/parity/parity.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char cli_inspect_usage[] =
    "Usage: cairn inspect FILE...\n"
    "       cairn inspect --fti FILE | --scr PREFIX | --veloc FILE\n"
    "\n"
    "Print the contents of checkpoint files (rank-<r>.ckpt), node manifests,\n"
    "parity files and the PFS files of level 4 (aggregated files agg-<i>.cz and\n"
    "the index), recognised by their magic bytes. For a checkpoint file: the\n"
    "header (format version, job, generation, its incremental chain, level, rank,\n"
    "node, block size, file size, header checksum) and one line per entry:\n"
    "  NAME  KIND  TYPE  DIMS  COUNT  RAW  STORED  CODEC  RATIO  BLOCKS  BOUND  MAXERR  CHANGE\n"
    "(KIND var or file; RAW and STORED in bytes, STORED 'in NAME' for a small\n"
    "variable aggregated into NAME's compressed buffer; CODEC raw, zlib, zstd, lz4,\n"
    "shuffle-zstd, shuffle-lz4, fpzip, or lossy wavelet or predict; RATIO is\n"
    "raw/stored; BOUND is the absolute error bound, '-' for lossless; MAXERR the\n"
    "largest error measured when a lossy variable was stored; CHANGE, in an\n"
    "incremental chain, 'full' or 'delta N blocks' (the changed blocks it stores),\n"
    "'+hashes' when it records their block hashes). The header and entry table are\n"
    "validated, the data is not: use 'cairn verify' for that. For a manifest: its\n"
    "fields (label and seconds from format 4), the rank -> node map, and for each\n"
    "rank file of its node its size, header checksum, and the bytes of state it\n"
    "holds and stores. For a PFS index: the generation, job, layout, scheme and\n"
    "bytes, and one line per aggregated file (FILE NAME SIZE CHECKSUM RANKS). For\n"
    "an aggregated file: its scheme and one line per variable (RANK NAME KIND TYPE\n"
    "DIMS COUNT BYTES); its tables and group checksums are validated, its frames\n"
    "are not decoded (cairn verify).\n"
    "With --fti, --scr or --veloc: where that program's checkpoints are (job, base, PFS),\n"
    "as its compatibility layer finds them from its configuration file.\n"
    "\n"
    "Options:\n"
    CLI_COMPAT_HELP
    "  -h, --help          show this help\n";

#define FIELD "%-17s"

/* "full generation" / "incremental: parent P, chain from B" (+ block size). */
static void print_chain(int64_t parent, int64_t base, uint32_t block)
{
    char hb[32];
    if (parent < 0)
        printf(FIELD "full generation", "chain:");
    else
        printf(FIELD "incremental: parent %lld, chain from %lld", "chain:", (long long)parent,
               (long long)base);
    if (block)
        printf(" (blocks of %s)", cli_human(block, hb, sizeof hb));
    putchar('\n');
}

static void print_ckpt(const char *path, const cn_ckpt *c)
{
    const cn_header *h = &c->h;
    char hb[32];
    printf(FIELD "%s\n", "file:", path);
    printf(FIELD "checkpoint, format version %u\n", "kind:", h->version);
    printf(FIELD "%s\n", "job:", h->job);
    printf(FIELD "%lld\n", "generation:", (long long)h->generation);
    print_chain(h->parent, h->base, h->incr_block);
    printf(FIELD "%u (%s)\n", "level:", h->level, cli_level_name(h->level));
    printf(FIELD "%u of %u\n", "rank:", h->rank, h->nranks);
    printf(FIELD "%u of %u\n", "node:", h->node, h->nnodes);
    printf(FIELD "%s (%u bytes)\n", "block size:", cli_human(h->block_size, hb, sizeof hb),
           h->block_size);
    printf(FIELD "%s (%llu bytes)\n", "file size:", cli_human(h->file_size, hb, sizeof hb),
           (unsigned long long)h->file_size);
    printf(FIELD "%u (table %llu bytes, checksum 0x%016llx; data at %llu)\n", "entries:",
           h->nentries, (unsigned long long)h->table_size, (unsigned long long)h->table_sum,
           (unsigned long long)h->data_offset);
    printf(FIELD "0x%016llx\n", "header checksum:", (unsigned long long)h->header_sum);
    printf(FIELD "header and table valid; data not verified (use cairn verify)\n", "checked:");
    if (h->nentries == 0)
        return;
    putchar('\n');
    cli_table t;
    cli_table_init(&t, "llllrrrlrrrrl");
    const char *head[] = {"NAME",  "KIND",  "TYPE",   "DIMS",  "COUNT",  "RAW",   "STORED",
                          "CODEC", "RATIO", "BLOCKS", "BOUND", "MAXERR", "CHANGE"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_table_add(&t, "%s", head[i]);
    const cn_entry *owner = NULL; /* of the current pack */
    for (uint32_t i = 0; i < h->nentries; i++) {
        const cn_entry *e = &c->e[i];
        char dims[96] = "-";
        for (int d = 0, n = 0; d < e->ndims; d++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%llu", d ? "x" : "",
                          (unsigned long long)e->dims[d]);
        cli_table_add(&t, "%s", e->name);
        cli_table_add(&t, "%s", e->kind == CN_KIND_FILE                ? "file"
                                : !strcmp(e->name, CN_LAYOUT_NAME) ? "layout" /* cairn's own */
                                                                   : "var");
        cli_table_add(&t, "%s", cli_type_name(e->type));
        cli_table_add(&t, "%s", dims);
        cli_table_add(&t, "%llu", (unsigned long long)e->count);
        cli_table_add(&t, "%llu", (unsigned long long)e->raw_size);
        if (!(e->flags & CN_ENTRY_PACKED))
            owner = e;
        if (e->flags & CN_ENTRY_PACKED) /* its bytes are in the owner's frames */
            cli_table_add(&t, "in %s", owner->name);
        else
            cli_table_add(&t, "%llu", (unsigned long long)e->stored_size);
        cli_table_add(&t, "%s", e->codec == CN_CODEC_RAW ? "raw" : cz_codec_name(e->codec));
        /* raw / stored; a pack's members and owner share the pack's ratio */
        uint64_t raw =
            e->codec == CN_CODEC_RAW ? cn_entry_stream(e, h->incr_block) : owner->frame_raw;
        if (owner->stored_size)
            cli_table_add(&t, "%.2f", (double)raw / (double)owner->stored_size);
        else
            cli_table_add(&t, "-");
        cli_table_add(&t, "%u", e->nblocks);
        if (e->error_bound > 0)
            cli_table_add(&t, "%g", e->error_bound);
        else
            cli_table_add(&t, "-");
        if (e->codec >= CN_CODEC_LOSSY)
            cli_table_add(&t, "%.3g", e->max_error);
        else
            cli_table_add(&t, "-");
        uint64_t changed = 0;
        for (uint32_t r = 0; r < e->nruns; r++)
            changed += e->runs[r].count;
        if (h->incr_block == 0 || e->kind != CN_KIND_VAR)
            cli_table_add(&t, "-");
        else if (e->flags & CN_ENTRY_DELTA)
            cli_table_add(&t, "delta %llu blocks%s", (unsigned long long)changed,
                          e->nhash ? " +hashes" : "");
        else
            cli_table_add(&t, "full%s", e->nhash ? " +hashes" : "");
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

void cli_node_ranks(const cn_manifest *m, uint32_t node, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t r = 0; r < m->nranks; r++) {
        if (m->rank_node[r] != node)
            continue;
        uint32_t end = r;
        while (end + 1 < m->nranks && m->rank_node[end + 1] == node)
            end++;
        if (n + 48 > len) {
            snprintf(buf + n, len - n, ",...");
            return;
        }
        n += (size_t)snprintf(buf + n, len - n, end > r ? "%s%u-%u" : "%s%u", n ? "," : "", r,
                              end);
        r = end;
    }
}

static void print_manifest(const char *path, const cn_manifest *m)
{
    printf(FIELD "%s\n", "file:", path);
    printf(FIELD "node manifest, format version %u\n", "kind:", m->version);
    printf(FIELD "%s\n", "job:", m->job);
    printf(FIELD "%lld\n", "generation:", (long long)m->generation);
    print_chain(m->parent, m->base, 0);
    printf(FIELD "%u (%s), asked for %u\n", "level:", m->level, cli_level_name(m->level),
           m->target);
    if (m->flags & CN_MF_PFS)
        printf(FIELD "yes (level 4 or pfs.every; a flush is owed until its PFS index exists)\n",
               "to the PFS:");
    if (m->version >= 4) {
        printf(FIELD "%s\n", "label:", m->label[0] ? m->label : "(none)");
        if (m->seconds > 0)
            printf(FIELD "%.3f s to checkpoint at its level\n", "seconds:", m->seconds);
        else
            printf(FIELD "unknown\n", "seconds:");
    }
    printf(FIELD "%s (%u of %u)\n", "node:", m->node_name, m->node, m->nnodes);
    printf(FIELD "%u in the job, %u on this node\n", "ranks:", m->nranks, m->nlocal);
    char ranks[256];
    for (uint32_t nd = 0; nd < m->nnodes; nd++) {
        if (nd == 64 && m->nnodes > 65) {
            printf(FIELD "... %u more nodes\n", "", m->nnodes - 64);
            break;
        }
        cli_node_ranks(m, nd, ranks, sizeof ranks);
        printf(FIELD "node %u: ranks %s\n", nd == 0 ? "rank map:" : "", nd, ranks);
    }
    printf(FIELD "manifest valid; rank files not checked (use cairn verify)\n", "checked:");
    if (m->nlocal == 0)
        return;
    putchar('\n');
    cli_table t;
    cli_table_init(&t, "rlrlrr");
    const char *head[] = {"RANK", "FILE", "SIZE", "HEADER CHECKSUM", "STATE", "STORES"};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        cli_table_add(&t, "%s", head[i]);
    for (uint32_t i = 0; i < m->nlocal; i++) {
        char name[32];
        cn_rank_filename(name, sizeof name, m->local[i].rank);
        cli_table_add(&t, "%u", m->local[i].rank);
        cli_table_add(&t, "%s", name);
        cli_table_add(&t, "%llu", (unsigned long long)m->local[i].file_size);
        cli_table_add(&t, "0x%016llx", (unsigned long long)m->local[i].header_sum);
        cli_table_add(&t, "%llu", (unsigned long long)m->local[i].raw);
        cli_table_add(&t, "%llu", (unsigned long long)m->local[i].delta);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

/* A level-3 parity file: its set and the rows it holds. Verifies everything. */
static int inspect_parity(const char *path, cn_err *err)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return cn_fail_errno(err, errno, "cannot open");
    void *map = MAP_FAILED;
    int rc = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 24
                 ? cn_fail(err, CAIRN_ECORRUPT, "not a parity file")
                 : 0;
    if (rc == 0 &&
        (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED)
        rc = cn_fail_errno(err, errno, "cannot map");
    close(fd);
    cn_parity p;
    if (rc == 0)
        rc = cn_parity_check(map, (size_t)st.st_size, path, &p, err);
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    if (rc < 0)
        return rc;
    printf("file:            %s\n", path);
    printf("kind:            parity (level %u), format version %u\n", p.level, p.version);
    printf("job:             %s\n", p.job);
    printf("generation:      %lld\n", (long long)p.generation);
    print_chain(p.parent, p.base, 0);
    printf("encoding set:    %u: %u members, k = %u, m = %u, GF(2^%u), %s form\n", p.set, p.n,
           p.n - p.m, p.m, p.w, p.form ? "bitmatrix" : "matrix");
    printf("this member:     %u (node %u), rows of stripes", p.member, p.members[p.member].node);
    for (uint32_t r = 0; r < p.m; r++)
        printf(" %u", (p.member + p.n - r) % p.n);
    printf("\nchunk:           %llu bytes per shard, checksum block %u\n",
           (unsigned long long)p.chunk, p.block_size);
    printf("checked:         metadata and every row checksum valid\n\n");
    cli_table t;
    cli_table_init(&t, "rrlrl");
    cli_table_add(&t, "MEMBER");
    cli_table_add(&t, "NODE");
    cli_table_add(&t, "NAME");
    cli_table_add(&t, "PAYLOAD");
    cli_table_add(&t, "RANKS");
    for (uint32_t i = 0; i < p.n; i++) {
        const cn_pmember *mb = &p.members[i];
        char ranks[64] = "-";
        if (mb->nlocal)
            snprintf(ranks, sizeof ranks, "%u-%u", mb->local[0].rank,
                     mb->local[mb->nlocal - 1].rank);
        cli_table_add(&t, "%u", i);
        cli_table_add(&t, "%u", mb->node);
        cli_table_add(&t, "%s", mb->node_name);
        cli_table_add(&t, "%llu", (unsigned long long)mb->payload);
        cli_table_add(&t, "%s", ranks);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    cn_parity_free(&p);
    return 0;
}

static int inspect_one(const char *verb, const char *path)
{
    cn_err err = {0};
    int kind, rc = cli_file_kind(path, &kind, &err);
    if (rc == 0 && kind == CLI_FILE_CKPT) {
        cn_ckpt *c;
        rc = cn_ckpt_open(AT_FDCWD, path, path, &c, &err);
        if (rc == 0) {
            print_ckpt(path, c);
            cn_ckpt_close(c);
        }
    } else if (rc == 0 && kind == CLI_FILE_MANIFEST) {
        uint8_t *buf;
        size_t len;
        cn_manifest m;
        rc = cn_read_small(AT_FDCWD, path, CLI_MANIFEST_MAX, &buf, &len, &err);
        if (rc == 0) {
            rc = cn_manifest_decode(buf, len, &m, &err);
            free(buf);
        }
        if (rc == 0) {
            print_manifest(path, &m);
            cn_manifest_free(&m);
        }
    } else if (rc == 0 && kind == CLI_FILE_PARITY) {
        rc = inspect_parity(path, &err);
    } else if (rc == 0 && (kind == CLI_FILE_PINDEX || kind == CLI_FILE_AGG)) {
        rc = cli_pfs_inspect(path, kind, &err);
    } else if (rc == 0) {
        rc = cn_fail(&err, CAIRN_ECORRUPT, "not a file cairn writes (checkpoint file, manifest, "
                                           "parity file, PFS file or index): bad magic");
    }
    if (rc < 0)
        cli_error(verb, "%s: %s", path, cli_msg_after(&err, path));
    return cli_exit_for(rc);
}

int cli_inspect(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        CLI_COMPAT_OPTIONS,
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0];
    cli_compat cc = {.fd = -1};
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h')
            return cli_help(verb);
        if (c != CLI_COMPAT_FTI && c != CLI_COMPAT_SCR && c != CLI_COMPAT_VELOC)
            return cli_getopt_fail(verb, c, argv);
        int r = cli_compat_set(verb, &cc, c, optarg);
        if (r >= 0)
            return r;
    }
    if (cc.kind && optind < argc)
        return cli_usage_error(verb, "give FILEs or --fti/--scr/--veloc, not both");
    if (cc.kind)
        return cli_compat_where(verb, &cc);
    if (optind == argc)
        return cli_usage_error(verb, "no file given");
    int rc = CLI_EXIT_OK;
    for (int i = optind; i < argc; i++) {
        if (i > optind)
            putchar('\n');
        fflush(stdout);
        rc = cli_exit_worst(rc, inspect_one(verb, argv[i]));
    }
    return rc;
}
