/*
 * veloc_layer.h - the internal contract of libcairn-veloc (VeloC's API over
 * cairn): the one state object of the VeloC client, the parsed VeloC
 * configuration, and the functions the layer's files share (prefix vl_).
 *
 * VeloC has one client per process, so the layer keeps one static state
 * (veloc_init.c owns it; every file reaches it through vl_state()). It holds
 * the cairn context, a duplicate of the application's communicator for the
 * layer's own agreements (success flags, levels), the table of protected
 * regions (pointers borrowed from the application, never freed here) and the
 * current phase. Uses include/cairn.h only.
 */
#ifndef VELOC_LAYER_H
#define VELOC_LAYER_H

#include <cairn.h>
#include <limits.h>
#include <stdbool.h>

#include "veloc.h"
#include "veloc_config.h"

#define VL_NAME_MAX CAIRN_LABEL_MAX /* a VeloC name is a cairn label */

/* One protected region, and how cairn currently protects it. */
typedef struct vl_region {
    int id;
    void *ptr;
    size_t count, base; /* VeloC's: COUNT elements of BASE bytes */
    bool in_cairn;      /* protected in the cairn context as below */
    void *cptr;
    cairn_type ctype;
    size_t ccount;
} vl_region;

enum vl_phase { VL_IDLE, VL_CKPT, VL_RESTART };

typedef struct vl_state {
    cairn_ctx *ctx;          /* NULL: not initialized */
    MPI_Comm comm;           /* the layer's duplicate of the application's */
    int rank;
    vl_config cfg;
    vl_region *regions;
    int nregions, cap;
    enum vl_phase phase;
    char name[VL_NAME_MAX + 1]; /* the phase's checkpoint */
    int version;
    bool mem;                /* checkpoint: VELOC_Checkpoint_mem/selective called */
    int sel_mode;            /* ... with this selection */
    int *sel_ids, sel_n;
    bool routed;             /* checkpoint: this rank routed its file */
    int max_node_level;      /* highest of levels 3, 2, 1 the job accepted for ec */
    bool files;              /* restart: the routed files are back */
    char tested[VL_NAME_MAX + 1]; /* VELOC_Restart_test's last answer, "" once stale: */
    int tested_version;           /* ... restorable, NAME's (Restart_begin skips a query) */
} vl_state;

vl_state *vl_state_get(void);


/* Messages: every rank (vl_err) or rank 0 only (vl_err0, for agreed errors). */
void vl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vl_err0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A failed cairn call WHAT with code RC, agreed by all ranks when ALL. */
int vl_cairn_fail(bool all, const char *what, int rc);

/* 1 if every rank passes OK (the layer's communicator). */
bool vl_all(bool ok);
/* VeloC's name rule, plus cairn's label length; prints why not. */
bool vl_name_ok(const char *call, const char *name);
/* The route name of this rank's file of checkpoint NAME, VERSION. */
void vl_route_name(char *out, size_t len, const char *name, int rank, int version);
/* The cairn variable name of region ID. */
void vl_var_name(char *out, size_t len, int id);
vl_region *vl_region_find(int id);
/* Make cairn protect R as the application gave it, or not at all. */
int vl_protect_region(vl_region *r);
int vl_unprotect_region(vl_region *r);
/* Make cairn protect exactly the regions SELECTED says (a bool per region). */
int vl_sync_protect(const bool *selected);
/* Restart phase: put this rank's routed file back (collective, once). */
int vl_restore_files(void);
/* Region selection of a VeloC mode and id list into SELECTED; -1 on bad mode. */
int vl_select(int mode, const int *ids, int n, bool *selected);

#endif /* VELOC_LAYER_H */
