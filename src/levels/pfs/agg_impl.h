/*
 * agg_impl.h - what agg.c (the writer), agg_auto.c (its scheme sampling),
 * agg_table.c (the file's ends) and agg_read.c (the parser and reader)
 * share about the aggregated file: the record sizes and limits of the
 * layout described in agg.c, the walk that orders a group's bytes for each
 * merging scheme, and the writer's state.
 * Internal to src/levels/pfs.
 */
#ifndef CAIRN_AGG_IMPL_H
#define CAIRN_AGG_IMPL_H

#include "levels/pfs/pfs.h"

#include <xxhash.h>

#define AGG_VERSION_RAW 3         /* a group may be stored raw (codec 0); still read */
#define AGG_VERSION_SUMS 4        /* written when a time model picks codecs (opts.bps) or
                                   * every group is raw (opts.raw): as 3, and a raw group
                                   * may carry AGG_HDRSUM */
#define AGG_VERSION 2             /* written when the file holds HDF5 parts (kinds > FILE) */
#define AGG_VERSION_PLAIN 1       /* written otherwise; all three are read */
#define AGG_HDR 64                 /* header bytes */
#define AGG_TRAILER 64             /* trailer bytes */
#define AGG_GROUP_REC 48           /* one group record in the table */
#define AGG_VAR_FIXED 56           /* one variable record, besides its name */
#define AGG_MAX_VARS (1u << 24)
#define AGG_CHUNK (4u << 20)       /* raw bytes per inner frame, at most */
#define AGG_RAW_UNIT (256u << 10) /* raw bytes per frame written from memory, at most */
#define AGG_SAMPLE (256u << 10)  /* bytes a group's codec is picked on */
#define AGG_MIN_CHUNK 64u          /* smallest chunk a file may declare */
#define AGG_DEFAULT_BLOCK 4096u    /* interleaving unit of the block schemes */
#define AGG_MAX_BLOCK (1u << 30)
#define AGG_PASS2 0x01             /* group flag: units are zstd frames of inner frames */
#define AGG_HDRSUM 0x02            /* group flag (version 4 on; raw groups only): the group's
                                    * checksum covers its frames' headers, not their payloads,
                                    * which each header's checksum covers; nor does the file's
                                    * (cz_agg_sum): the data is hashed once, not three times */

extern const uint8_t cz_agg_magic[8];   /* "CAIRNAGG" */
extern const uint8_t cz_agg_tmagic[8];  /* "CAIRNEND" */

static inline bool cz_agg_is_block(int scheme)
{
    return scheme == CZ_AGG_AGNOSTIC_BLOCK || scheme == CZ_AGG_AWARE_BLOCK;
}
static inline bool cz_agg_is_aware(int scheme)
{
    return scheme == CZ_AGG_AWARE || scheme == CZ_AGG_AWARE_BLOCK;
}

/*
 * A member of a group: the unit whose bytes the block schemes interleave. In
 * the aware schemes every variable is a member of its own; in the agnostic
 * ones a member is a rank (its variables, one after another). A member's
 * variables are consecutive in the table (FIRST..FIRST+NVAR-1); CUR/CUR_OFF
 * is how far its stream has been gathered or scattered.
 */
typedef struct cz_agg_member {
    size_t first, nvar;
    uint64_t size;
    size_t cur;
    uint64_t cur_off;
} cz_agg_member;

/*
 * The order of a group's bytes: with BLOCK 0 each member whole, in order
 * (Agnostic, Aware); otherwise rounds of BLOCK bytes, each round taking the
 * next BLOCK bytes of every member that still has some (the -Block schemes).
 * Every member's bytes are visited in order, so a cursor per member suffices.
 */
typedef struct cz_agg_walk {
    const cz_agg_member *m;
    size_t nm;
    uint64_t block, rounds, round;
    size_t at;
    uint64_t left;      /* bytes left in the current piece; 0 = find the next */
    bool started;
} cz_agg_walk;

void cz_agg_walk_init(cz_agg_walk *w, const cz_agg_member *m, size_t nm, uint64_t block);
/* Bytes left in the current piece (0: the group's stream is over); *MI its member. */
uint64_t cz_agg_walk_piece(cz_agg_walk *w, size_t *mi);
/* Consume K (<= the piece's bytes) of the current piece. */
void cz_agg_walk_take(cz_agg_walk *w, uint64_t k);

/* Order of the similarity key (kind, name, type); names NUL-terminated. */
int cz_agg_key_cmp(uint8_t ka, const char *na, uint8_t ta, uint8_t kb, const char *nb,
                   uint8_t tb);
/* Check one variable's metadata (name, kind, type, dims, count, size);
 * messages start with WHAT; fails with CODE. */
int cz_agg_var_check(const cz_agg_var *v, int code, const char *what, cn_err *err);
/* Stable merge sort of IDX[0..N-1] by CMP (with CTX); -1 if out of memory. */
/* Order of two variables of one key in their group: by rank, then file. */
int cz_agg_member_cmp(const cz_agg_var *a, const cz_agg_var *b);
int cz_agg_sort(size_t *idx, size_t n, int (*cmp)(const void *ctx, size_t a, size_t b),
                const void *ctx);
/* Check that no two of V[IDX[0..N-1]] share (rank, kind, file, name); sorts IDX. */
int cz_agg_unique(const cz_agg_var *v, size_t *idx, size_t n, int code, cn_err *err);

/* The write stage on a thread of its own (agg_pipe.c): units go to SINK(ARG)
 * in post order. Start: NULL if no thread (then write synchronously). Post:
 * waits for the unit before, then hands BUF over (borrowed until the next
 * post or drain returns). Post and drain return the sink's first failure
 * (message into ERR, may be NULL). Stop drains and joins; accepts NULL. */
typedef struct cz_agg_pipe cz_agg_pipe;
cz_agg_pipe *cz_agg_pipe_start(cz_agg_sink sink, void *arg);
int cz_agg_pipe_post(cz_agg_pipe *p, const void *buf, size_t len, cn_err *err);
int cz_agg_pipe_drain(cz_agg_pipe *p, cn_err *err);
void cz_agg_pipe_stop(cz_agg_pipe *p);

/* The writer (agg.c): one file being written, group by group. */
typedef struct agg_wgroup {
    size_t first, nvar;   /* table positions */
    uint8_t type, codec, flags;
    uint64_t raw, stored, nunits, sum;
} agg_wgroup;

typedef struct agg_writer {
    const cz_agg_var *v;
    size_t n;
    size_t *order;        /* table position -> index into v */
    int scheme;
    uint32_t version;     /* AGG_VERSION_RAW with opts.bps, else AGG_VERSION with HDF5
                           * parts, else AGG_VERSION_PLAIN */
    uint64_t block;       /* 0 unless a block scheme */
    int level;
    int threads;
    double core;          /* opts.core: the share of a core each thread has (0: whole) */
    double bps;           /* the time model's write bandwidth; 0: by size alone */
    bool raw_only;        /* opts.raw: every group raw */
    uint32_t chunk;
    cz_agg_sink sink;
    void *arg;
    uint64_t stored;      /* bytes passed to the sink */
    XXH3_state_t *fsum;   /* the file's checksum (cz_agg_sum's), of the bytes so far */
    uint8_t *raw, *trial, *scratch;
    uint8_t *inners[2], *outers[2]; /* two sets while a unit is written (pipe) */
    uint8_t *inner, *outer;         /* the set being filled */
    int cur;
    cz_agg_pipe *pipe;    /* the write stage's thread; NULL: the sink is called here */
    int (*ready)(void *arg, const void *p, size_t len); /* opts.ready */
    void *ready_arg;
    agg_wgroup *g;
    uint32_t ngroups, npass2;
    cz_agg_member *m;     /* members of the group being written */
    cz_span *spans;       /* a raw unit's pieces, in the variables' memory */
    size_t nspans, spans_cap;
    uint8_t hdr[CZ_FRAME_HDR]; /* a raw unit's frame header */
    uint8_t *vpick;       /* per variable (index into v): the codec sampling_pays
                           * modelled on its prefix, CZ_NCODECS if none; or NULL */
    cz_agg_memo *memo;    /* opts.memo, may be NULL */
    cz_agg_var *vown;     /* a copy of the variables when some are lent frames (V then
                           * points here), and the buffers those decoded own (agg_lend.c) */
    uint8_t **vbuf;
    uint32_t modelled;    /* codecs the model sampled for this file */
} agg_writer;

/* LEN bytes at P to W's sink, in file order (after every unit posted; agg.c). */
int agg_emit(agg_writer *w, const void *p, size_t len, cn_err *err);
/* The file's header for RAW bytes of variables into H (AGG_HDR bytes), and
 * the table and trailer after DATA_SIZE bytes of groups, emitted
 * (agg_table.c). */
void agg_put_header(const agg_writer *w, uint64_t raw, uint8_t *h);
int agg_write_table(agg_writer *w, uint64_t data_size, cn_err *err);
/* Write W's variables by W's scheme, RAW bytes in all, to its sink (agg.c). */
int agg_write_scheme(agg_writer *w, uint64_t raw, cn_err *err);
/* Bytes [P, P + LEN) of a variable's data, there to be read (opts.ready). */
int agg_ready(const agg_writer *w, const void *p, uint64_t len, cn_err *err);
/* Scheme auto: set w->scheme by sampling, or aware when sampling cannot pay
 * (*SAMPLED: the bytes sampled, 0 then). agg_auto.c. */
int agg_pick_scheme(agg_writer *w, uint64_t raw, uint64_t *sampled, cn_err *err);
/* With a time model, for group G of one variable of its own type: the codec
 * sampling_pays modelled for it, or the memo's, or the model's on its first
 * chunk SRC (FILL bytes), kept in the memo if there is one; else -1.
 * agg_memo_at: a file written at BPS (the memo emptied if its picks were
 * made at another). agg_auto.c. */
int agg_modelled(agg_writer *w, const agg_wgroup *g, const uint8_t *src, size_t fill);
void agg_memo_at(cz_agg_memo *m, double bps);
/* The model of the work of writing W's chunks to a file at w->bps. */
cz_env agg_model_env(const agg_writer *w);
/* Does a second zstd pass that makes ILEN bytes OLEN save more write time
 * than its CPU work costs (by the model; always, without one)? */
bool agg_pass2_pays(const agg_writer *w, size_t ilen, size_t olen);

/* Variables lent as level 1's frames (cz_agg_var.frames; agg_lend.c). Setup: each
 * checked (CAIRN_EINVAL); when any of V[0..N-1] is, W's own copy of them (w->v
 * points at it). Plan (after the
 * groups are planned): each group lent whole stays lent, the other lent variables
 * are decoded into buffers of W's own. Write: a group lent whole, its variables'
 * frames as they are. Free: the copy and the buffers. */
int agg_lend_setup(agg_writer *w, const cz_agg_var *v, size_t n, cn_err *err);
int agg_lend_plan(agg_writer *w, cn_err *err);
int agg_write_lent(agg_writer *w, agg_wgroup *g, cn_err *err);
void agg_lend_free(agg_writer *w);

#endif /* CAIRN_AGG_IMPL_H */
