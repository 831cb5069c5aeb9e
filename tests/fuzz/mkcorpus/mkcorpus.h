/*
 * mkcorpus.h - what the parts of the seed generator (tests/fuzz/mkcorpus.c)
 * share: where seeds go, how a failure ends it, and each part's seeds.
 *   mkcorpus.c          main, --previous, put/die/reseal_tail
 *   mkcorpus/ckpt.c     rank files (fuzz_ckpt)
 *   mkcorpus/meta.c     node manifests, parity files, layout records
 *   mkcorpus/pfs.c      HDF5 maps, split HDF5 in aggregated files, PFS
 *                       indexes, node records, delta records
 */
#ifndef CAIRN_MKCORPUS_H
#define CAIRN_MKCORPUS_H

#include "common/common.h"
#include "compress/compress.h"
#include "incr/incr.h"
#include "levels/pfs/pfs.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write seed NAME of fuzz target TARGET (under the output directory). */
void put(const char *target, const char *name, const uint8_t *buf, size_t len);
/* Print WHAT (and ERR's message) and end the program with status 1. */
_Noreturn void die(const char *what, const cn_err *err);
/* Reseal a record whose last 8 bytes are the XXH3-64 of all before. */
void reseal_tail(uint8_t *b, size_t len);

void ckpt_seeds(void);
void manifest_seeds(void);
void parity_seeds(void);
void layout_seeds(void);
void h5map_seeds(void);
void agg_h5_seeds(void);
void pindex_seeds(void);
void pnode_seeds(void);
void pdelta_seeds(void);

#endif
