/*
 * veloc_restart.c - VeloC's restart calls over cairn's restart queries.
 *
 * VELOC_Restart_test(NAME, V): cairn_restart_query with V as the highest id
 * (0: any), stepping below generations of other names (labels), until one
 * labelled NAME: its version, or VELOC_FAILURE (nothing, or only a
 * checkpoint that cannot be restored: the reason is printed).
 * VELOC_Restart_begin(NAME, V): generation V must be restorable and be
 * NAME's; cairn_restart with no region protected then verifies it (after
 * rebuilding lost nodes or staging it in from the PFS) and puts this rank's
 * routed file back, where VELOC_Route_file finds it. Memory is not touched
 * until VELOC_Recover_selective / _mem: each chosen region present in the
 * checkpoint is protected with the stored type and count (the region may be
 * larger, as in VeloC) and restored, all at once by cairn_restart for
 * VELOC_RECOVER_ALL, else one cairn_restart_var each, in id order.
 * VELOC_Recover_size is cairn_var_query. Every call here is collective:
 * the ranks name the same checkpoint, regions and ids.
 */
#include "veloc_layer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool phase_ok(const char *call, enum vl_phase want)
{
    vl_state *s = vl_state_get();
    if (!s->ctx) {
        fprintf(stderr, "veloc: %s: VeloC is not initialized\n", call);
        return false;
    }
    if (s->phase != want) {
        vl_err("%s: %s", call, want == VL_RESTART ? "call VELOC_Restart_begin first"
                               : s->phase == VL_CKPT ? "a checkpoint phase is open"
                                                     : "a restart phase is open");
        return false;
    }
    return true;
}

VELOC_CAIRN_EXPORT int VELOC_Restart_test(const char *name, int version)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Restart_test", VL_IDLE) && vl_name_ok("VELOC_Restart_test", name);
    if (ok && version < 0)
        vl_err("VELOC_Restart_test('%s'): version %d is negative", name, version);
    if (!s->ctx || !vl_all(ok && version >= 0))
        return VELOC_FAILURE;
    s->tested[0] = '\0';
    long max = version == 0 ? CAIRN_LATEST : version;
    for (;;) {
        cairn_restart_plan plan;
        int rc = cairn_restart_query(s->ctx, max, &plan);
        if (rc)
            return vl_cairn_fail(true, "VELOC_Restart_test", rc);
        if (plan.status == CAIRN_RESTART_UNUSABLE)
            vl_err0("VELOC_Restart_test('%s'): a checkpoint exists but cannot be restored: "
                    "%s: %s", name, cairn_strerror(plan.code), cairn_errmsg(s->ctx));
        if (plan.status != CAIRN_RESTART_READY || plan.id > INT_MAX)
            return VELOC_FAILURE;
        if (strcmp(plan.label, name) == 0) {
            snprintf(s->tested, sizeof s->tested, "%s", name);
            s->tested_version = (int)plan.id;
            return (int)plan.id;
        }
        if (plan.id == 0)
            return VELOC_FAILURE;
        max = plan.id - 1; /* another name's: look below it */
    }
}

VELOC_CAIRN_EXPORT int VELOC_Restart_begin(const char *name, int version)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Restart_begin", VL_IDLE) && vl_name_ok("VELOC_Restart_begin", name);
    if (ok && version < 0)
        vl_err("VELOC_Restart_begin('%s'): version %d is negative", name, version);
    if (!s->ctx || !vl_all(ok && version >= 0))
        return VELOC_FAILURE;
    cairn_restart_plan plan = {.status = CAIRN_RESTART_READY, .id = version};
    snprintf(plan.label, sizeof plan.label, "%s", name);
    int rc = 0; /* VELOC_Restart_test just said so: no second query */
    if ((strcmp(s->tested, name) != 0 || s->tested_version != version) &&
        (rc = cairn_restart_query(s->ctx, version, &plan)) != 0)
        return vl_cairn_fail(true, "VELOC_Restart_begin", rc);
    s->tested[0] = '\0';
    if (plan.status == CAIRN_RESTART_NONE)
        vl_err0("VELOC_Restart_begin('%s', %d): there is no checkpoint", name, version);
    else if (plan.status == CAIRN_RESTART_UNUSABLE)
        vl_err0("VELOC_Restart_begin('%s', %d): the checkpoint cannot be restored: %s: %s", name,
                version, cairn_strerror(plan.code), cairn_errmsg(s->ctx));
    else if (plan.id != version)
        vl_err0("VELOC_Restart_begin('%s', %d): no such version can be restored; the newest "
                "below it is version %ld of '%s'", name, version, plan.id, plan.label);
    else if (strcmp(plan.label, name) != 0)
        vl_err0("VELOC_Restart_begin('%s', %d): version %d is a checkpoint of '%s'", name,
                version, version, plan.label);
    if (plan.status != CAIRN_RESTART_READY || plan.id != version || strcmp(plan.label, name))
        return VELOC_FAILURE;
    bool *none = calloc((size_t)s->nregions + 1, sizeof *none);
    ok = none && vl_sync_protect(none) == 0;
    free(none);
    if (!vl_all(ok))
        return VELOC_FAILURE;
    long got = -1;
    rc = cairn_restart(s->ctx, version, &got); /* verify, rebuild; routed files back */
    if (rc)
        return vl_cairn_fail(true, "VELOC_Restart_begin", rc);
    s->phase = VL_RESTART;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->version = version;
    return VELOC_SUCCESS;
}

static int by_id(const void *a, const void *b)
{
    const vl_region *x = *(vl_region *const *)a, *y = *(vl_region *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Protect region R in cairn as the checkpoint stores it; 0, or -1 said why. */
static int protect_stored(vl_state *s, vl_region *r, const cairn_var_info *info)
{
    char name[32];
    vl_var_name(name, sizeof name, r->id);
    if (info->bytes > r->count * r->base) {
        vl_err("VELOC_Recover_mem: region %d is %zu bytes; checkpoint '%s' version %d holds %zu",
               r->id, r->count * r->base, s->name, s->version, info->bytes);
        return -1;
    }
    int rc = cairn_protect(s->ctx, name, r->ptr, info->type, info->count, info->ndims,
                           info->ndims ? info->dims : NULL);
    if (rc)
        return vl_cairn_fail(false, "VELOC_Recover_mem", rc);
    r->in_cairn = true;
    r->cptr = r->ptr;
    r->ctype = info->type;
    r->ccount = info->count;
    return 0;
}

VELOC_CAIRN_EXPORT int VELOC_Recover_selective(int mode, int *ids, int id_count)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Recover_mem", VL_RESTART);
    if (!s->ctx)
        return VELOC_FAILURE;
    int n = s->nregions;
    bool *sel = calloc((size_t)n + 1, sizeof *sel);
    vl_region **take = calloc((size_t)n + 1, sizeof *take);
    if (ok && (!sel || !take || id_count < 0 || vl_select(mode, ids, id_count, sel) != 0)) {
        vl_err("VELOC_Recover_mem: %s", !sel || !take ? "out of memory"
                                        : "bad selection (mode 0-2, ids, count >= 0)");
        ok = false;
    }
    for (int k = 0; ok && mode == VELOC_RECOVER_SOME && k < id_count; k++)
        if (!vl_region_find(ids[k])) {
            vl_err("VELOC_Recover_selective: region %d is not protected", ids[k]);
            ok = false;
        }
    int ntake = 0;
    for (int i = 0; ok && i < n; i++)
        if (sel[i])
            take[ntake++] = &s->regions[i];
    qsort(take, (size_t)ntake, sizeof *take, by_id);
    int rc = vl_all(ok) ? 0 : VELOC_FAILURE;
    /* Unprotect everything in cairn, then protect what the checkpoint holds. */
    memset(sel, 0, ((size_t)n + 1) * sizeof *sel);
    if (rc == 0 && !vl_all(vl_sync_protect(sel) == 0))
        rc = VELOC_FAILURE;
    int kept = 0;
    for (int k = 0; rc == 0 && k < ntake; k++) {
        char name[32];
        cairn_var_info info;
        vl_var_name(name, sizeof name, take[k]->id);
        int q = cairn_var_query(s->ctx, s->version, name, &info);
        if (vl_all(q == CAIRN_ENOENT))
            continue; /* not in the checkpoint: left as it is, as in VeloC */
        if (q && q != CAIRN_ENOENT)
            vl_cairn_fail(false, "VELOC_Recover_mem", q);
        else if (q)
            vl_err("VELOC_Recover_mem: region %d is in the checkpoint of other ranks only",
                   take[k]->id);
        if (!vl_all(q == 0 && protect_stored(s, take[k], &info) == 0))
            rc = VELOC_FAILURE;
        take[kept++] = take[k];
    }
    long got;
    if (rc == 0 && kept > 0 && mode == VELOC_RECOVER_ALL &&
        (rc = cairn_restart(s->ctx, s->version, &got)) != 0)
        rc = vl_cairn_fail(true, "VELOC_Recover_mem", rc);
    for (int k = 0; rc == 0 && mode != VELOC_RECOVER_ALL && k < kept; k++) {
        char name[32];
        vl_var_name(name, sizeof name, take[k]->id);
        if ((rc = cairn_restart_var(s->ctx, s->version, name, &got)) != 0)
            rc = vl_cairn_fail(true, "VELOC_Recover_selective", rc);
    }
    free(sel);
    free(take);
    return rc == 0 ? VELOC_SUCCESS : VELOC_FAILURE;
}

VELOC_CAIRN_EXPORT int VELOC_Recover_mem(void)
{
    return VELOC_Recover_selective(VELOC_RECOVER_ALL, NULL, 0);
}

VELOC_CAIRN_EXPORT int VELOC_Recover_size(int id)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Recover_size", VL_RESTART);
    if (!s->ctx || !vl_all(ok))
        return VELOC_FAILURE;
    char name[32];
    cairn_var_info info;
    vl_var_name(name, sizeof name, id);
    int rc = cairn_var_query(s->ctx, s->version, name, &info);
    if (rc == CAIRN_ENOENT)
        return VELOC_FAILURE; /* VeloC: -1, no region ID in the checkpoint */
    if (rc)
        return vl_cairn_fail(false, "VELOC_Recover_size", rc);
    if (info.bytes > INT_MAX) {
        vl_err("VELOC_Recover_size(%d): %zu bytes do not fit an int", id, info.bytes);
        return VELOC_FAILURE;
    }
    return (int)info.bytes;
}

VELOC_CAIRN_EXPORT int VELOC_Restart_end(int success)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Restart_end", VL_RESTART);
    if (ok)
        s->phase = VL_IDLE;
    if (!s->ctx || !vl_all(ok && success)) {
        vl_err0("restart from checkpoint '%s' version %d: a rank ended it with success = 0 or "
                "out of a restart phase", s->name, s->version);
        return VELOC_FAILURE;
    }
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Restart(const char *name, int version)
{
    if (VELOC_Restart_begin(name, version) != VELOC_SUCCESS)
        return VELOC_FAILURE;
    int mem = VELOC_Recover_mem(); /* end even so: the ranks agree on the outcome */
    int end = VELOC_Restart_end(mem == VELOC_SUCCESS);
    return mem == VELOC_SUCCESS && end == VELOC_SUCCESS ? VELOC_SUCCESS : VELOC_FAILURE;
}
