/*
 * scr_where.h - for tools, without MPI: where a cairn-scr program keeps its
 * checkpoints (scr_where.c). The cairn CLI includes this (`cairn ls --scr
 * PREFIX`, src/tools/cli_compat.c); the layer's contract is scr_impl.h.
 */
#ifndef CAIRN_SCR_WHERE_H
#define CAIRN_SCR_WHERE_H

#include <stddef.h>

/* The cairn settings (INI text: store.base from SCR_CACHE_BASE, pfs.dir the
 * prefix, job.id by SCR's rules) of a cairn-scr program run with SCR prefix
 * PREFIX and this environment, as SCR_Init finds them. 1, or 0 with WHY. */
int cscr_tool_ini(const char *prefix, char *ini, size_t len, char *why, size_t wlen);

#endif /* CAIRN_SCR_WHERE_H */
