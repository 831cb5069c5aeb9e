/*
 * levels.h - the contract of src/levels: where a rank's checkpoint lands and
 * how it is read back, level by level. No MPI here: the api layer decides
 * what is written where and agrees across ranks; levels move bytes.
 *
 *   local.c   level 1: one checkpoint file per rank in a node-local generation
 *             directory, written with plain write() or through libpmem, made
 *             durable and renamed into place (atomic commit of the file).
 */
#ifndef CAIRN_LEVELS_H
#define CAIRN_LEVELS_H

#include "common/common.h"

/* One thing to store: a protected variable or a routed file's contents. */
typedef struct lvl_src {
    const char *name;
    uint8_t kind;                  /* enum cn_kind */
    uint8_t type;                  /* cairn_type */
    uint8_t ndims;
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;                /* elements */
    double error_bound;
    const void *ptr;               /* the bytes (borrowed for the call) */
    uint64_t size;                 /* count * type size */
} lvl_src;

/* What a committed rank file looks like, for the node manifest. */
typedef struct lvl_written {
    uint64_t file_size;
    uint64_t header_sum;
} lvl_written;

/*
 * Write the rank file NAME in the generation directory GENFD (path GEN_PATH,
 * used for libpmem and messages): header fields from PROTO (level,
 * generation, rank, nranks, node, nnodes, block_size, job), entries from
 * SRC[0..N-1], data checksummed per block as it is copied. IO is CN_IO_WRITE
 * or CN_IO_PMEM, optionally ORed with LVL_IO_HASH_THREAD to checksum in a
 * second thread (worth it only when this rank has a core to spare). The file appears under NAME only complete and durable; on
 * failure no NAME or NAME.tmp is left behind and an existing NAME is kept.
 */
#define LVL_IO_HASH_THREAD 0x100

int lvl_local_write(int genfd, const char *gen_path, const char *name, const cn_header *proto,
                    const lvl_src *src, uint32_t n, int io, lvl_written *out, cn_err *err);

/*
 * Decide how CN_IO_AUTO writes in directory DIR_PATH: CN_IO_PMEM if libpmem
 * maps a file there as real persistent memory, else CN_IO_WRITE (measured
 * faster on tmpfs and page-cache file systems; see README, "Level 1").
 */
int lvl_local_probe_io(const char *dir_path);

#endif /* CAIRN_LEVELS_H */
