/*
 * veloc_ckpt.c - VeloC's checkpoint phase over cairn_checkpoint.
 *
 * VELOC_Checkpoint_begin(NAME, VERSION) opens the phase (all ranks agree);
 * VELOC_Checkpoint_mem / _selective choose the regions; VELOC_Route_file
 * routes this rank's file of the checkpoint, "<NAME>-<rank>-<VERSION>.dat"
 * (as VeloC, whatever the original name; in a restart phase the restored
 * copy, which the first call of the phase, on every rank, brings back);
 * VELOC_Checkpoint_end(SUCCESS)
 * writes it: if every rank passed SUCCESS = 1, cairn generation VERSION,
 * labelled NAME, holding the chosen regions and the routed file, at the
 * level the VeloC settings give (choose_level). The regions are read at
 * VELOC_Checkpoint_end, not at VELOC_Checkpoint_mem.
 * Levels: 4 when persistent is set (cairn raises the generation to the
 * highest of levels 3 and 2 the job can do first); else 3 when erasure
 * coding is on; else 1. With persistent_interval / ec_interval > 0 those
 * levels come only when cairn_need_checkpoint says their interval (ckpt.
 * every_4 / every_3 and every_2, in seconds) has passed: level 3, or 2 on a
 * job too small for level 3. A job too small for level 3
 * (cairn refuses it with CAIRN_ECONFIG, changing nothing) gets level 2,
 * or 1, from then on, said once.
 */
#include "veloc_layer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool inited(const char *call)
{
    if (vl_state_get()->ctx)
        return true;
    fprintf(stderr, "veloc: %s: VeloC is not initialized\n", call);
    return false;
}

VELOC_CAIRN_EXPORT int VELOC_Route_file(const char *original, char *routed)
{
    vl_state *s = vl_state_get();
    if (!inited("VELOC_Route_file"))
        return VELOC_FAILURE;
    if (!original || !*original || !routed) {
        vl_err("VELOC_Route_file: %s", !routed ? "no buffer for the routed path (NULL)"
                                               : "no original file name");
        return VELOC_FAILURE;
    }
    if (s->phase == VL_IDLE) {
        vl_err("VELOC_Route_file('%s'): only inside a checkpoint or a restart phase", original);
        return VELOC_FAILURE;
    }
    if (s->phase == VL_RESTART && vl_restore_files() != 0) /* collective, the first time */
        return VELOC_FAILURE;
    char name[CAIRN_NAME_MAX + 1];
    vl_route_name(name, sizeof name, s->name, s->rank, s->version);
    int rc = cairn_route_file(s->ctx, name, routed, VELOC_MAX_NAME);
    if (rc == 0 && s->phase == VL_RESTART) /* the restored copy: read it, no route */
        rc = cairn_unroute_file(s->ctx, name);
    if (rc)
        return vl_cairn_fail(false, "VELOC_Route_file", rc);
    if (s->phase == VL_CKPT)
        s->routed = true;
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint_begin(const char *name, int version)
{
    vl_state *s = vl_state_get();
    if (!inited("VELOC_Checkpoint_begin"))
        return VELOC_FAILURE;
    bool ok = vl_name_ok("VELOC_Checkpoint_begin", name);
    if (ok && version < 0)
        vl_err("VELOC_Checkpoint_begin('%s'): version %d is negative", name, version);
    if (ok && s->phase != VL_IDLE)
        vl_err("VELOC_Checkpoint_begin('%s'): a %s phase is open: end it first", name,
               s->phase == VL_CKPT ? "checkpoint" : "restart");
    ok = ok && version >= 0 && s->phase == VL_IDLE;
    if (!vl_all(ok))
        return VELOC_FAILURE;
    s->phase = VL_CKPT;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->version = version;
    s->mem = s->routed = false;
    s->sel_n = 0;
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint_selective(int mode, int *ids, int id_count)
{
    vl_state *s = vl_state_get();
    if (!inited("VELOC_Checkpoint_selective"))
        return VELOC_FAILURE;
    if (s->phase != VL_CKPT) {
        vl_err("VELOC_Checkpoint_mem: call VELOC_Checkpoint_begin first");
        return VELOC_FAILURE;
    }
    bool *sel = calloc((size_t)s->nregions + 1, sizeof *sel);
    int *copy = id_count > 0 ? malloc((size_t)id_count * sizeof *copy) : NULL;
    int n = 0, rc = !sel || (id_count > 0 && !copy) ? -2 : vl_select(mode, ids, id_count, sel);
    for (int i = 0; rc == 0 && i < s->nregions; i++)
        n += sel[i];
    free(sel);
    if (rc || n == 0 || id_count < 0) {
        free(copy);
        vl_err("VELOC_Checkpoint_mem: %s", rc == -2 ? "out of memory"
                                           : rc || id_count < 0
                                               ? "bad selection (mode 0-2, ids, count >= 0)"
                                               : "no protected region selected");
        return VELOC_FAILURE;
    }
    if (id_count > 0)
        memcpy(copy, ids, (size_t)id_count * sizeof *copy);
    free(s->sel_ids);
    s->sel_ids = copy;
    s->sel_n = id_count;
    s->sel_mode = mode;
    s->mem = true;
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint_mem(void)
{
    return VELOC_Checkpoint_selective(VELOC_CKPT_ALL, NULL, 0);
}

/* The level of the checkpoint now being written (collective); 0 on error. */
static int choose_level(vl_state *s)
{
    const vl_config *c = &s->cfg;
    bool pfs = c->persistent && c->pfs_interval >= 0;
    int due = 0;
    if ((pfs && c->pfs_interval > 0) || (c->ec && c->ec_interval > 0)) {
        int rc = cairn_need_checkpoint(s->ctx, &due);
        if (rc) {
            vl_cairn_fail(true, "VELOC_Checkpoint_end: cairn_need_checkpoint", rc);
            return 0;
        }
    }
    if (pfs && (c->pfs_interval == 0 || due >= CAIRN_LEVEL_PFS))
        return CAIRN_LEVEL_PFS;
    if (c->ec && c->ec_interval == 0)
        return s->max_node_level;
    if (c->ec && due >= CAIRN_LEVEL_PARTNER) /* 2: level 3 is not possible here */
        return due < s->max_node_level ? due : s->max_node_level;
    return CAIRN_LEVEL_LOCAL;
}

/* cairn_checkpoint at LEVEL; levels 3 and 2 step down once the job refuses them. */
static int write_generation(vl_state *s, int level)
{
    for (;;) {
        int rc = cairn_label(s->ctx, s->name);
        if (rc)
            return vl_cairn_fail(false, "VELOC_Checkpoint_end: cairn_label", rc);
        rc = cairn_checkpoint(s->ctx, s->version, level);
        if (rc == CAIRN_ECONFIG && (level == CAIRN_LEVEL_ERASURE || level == CAIRN_LEVEL_PARTNER)) {
            vl_err0("level %d is not possible here (%s): erasure-coded checkpoints get level %d "
                    "from now on", level, cairn_errmsg(s->ctx), level - 1);
            s->max_node_level = --level;
            continue;
        }
        if (rc == 0)
            return VELOC_SUCCESS;
        vl_cairn_fail(true, "VELOC_Checkpoint_end", rc);
        if (s->routed) { /* a refused checkpoint keeps its routes: not for the next one */
            char route[CAIRN_NAME_MAX + 1];
            vl_route_name(route, sizeof route, s->name, s->rank, s->version);
            (void)cairn_unroute_file(s->ctx, route);
        }
        return VELOC_FAILURE;
    }
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint_end(int success)
{
    vl_state *s = vl_state_get();
    if (!inited("VELOC_Checkpoint_end"))
        return VELOC_FAILURE;
    if (s->phase != VL_CKPT) {
        vl_err("VELOC_Checkpoint_end: no checkpoint phase is open");
        return VELOC_FAILURE;
    }
    s->phase = VL_IDLE;
    s->tested[0] = '\0'; /* what VELOC_Restart_test said may change now */
    char route[CAIRN_NAME_MAX + 1];
    vl_route_name(route, sizeof route, s->name, s->rank, s->version);
    bool *sel = calloc((size_t)s->nregions + 1, sizeof *sel);
    bool ok = sel && success && (!s->mem || vl_select(s->sel_mode, s->sel_ids, s->sel_n, sel) == 0);
    if (sel && success && !ok)
        vl_err("VELOC_Checkpoint_end: out of memory");
    ok = ok && vl_sync_protect(sel) == 0;
    free(sel);
    if (!vl_all(ok)) {
        if (s->routed)
            (void)cairn_unroute_file(s->ctx, route);
        vl_err0("checkpoint '%s' version %d not written: a rank ended it with success = 0 or "
                "could not prepare it", s->name, s->version);
        return VELOC_FAILURE;
    }
    int level = choose_level(s);
    if (level == 0) {
        if (s->routed)
            (void)cairn_unroute_file(s->ctx, route);
        return VELOC_FAILURE;
    }
    return write_generation(s, level);
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint_wait(void)
{
    if (!inited("VELOC_Checkpoint_wait"))
        return VELOC_FAILURE;
    if (vl_state_get()->phase == VL_CKPT) {
        vl_err("VELOC_Checkpoint_wait: end the open checkpoint first (VELOC_Checkpoint_end)");
        return VELOC_FAILURE;
    }
    return VELOC_SUCCESS; /* VELOC_Checkpoint_end returned once it was complete */
}

VELOC_CAIRN_EXPORT int VELOC_Backend_ready(void)
{
    return vl_state_get()->ctx ? 1 : VELOC_FAILURE;
}

VELOC_CAIRN_EXPORT int VELOC_Checkpoint(const char *name, int version)
{
    if (VELOC_Checkpoint_wait() != VELOC_SUCCESS ||
        VELOC_Checkpoint_begin(name, version) != VELOC_SUCCESS)
        return VELOC_FAILURE;
    int mem = VELOC_Checkpoint_mem(); /* end even so: the ranks agree on the outcome */
    int end = VELOC_Checkpoint_end(mem == VELOC_SUCCESS);
    return mem == VELOC_SUCCESS && end == VELOC_SUCCESS ? VELOC_SUCCESS : VELOC_FAILURE;
}
