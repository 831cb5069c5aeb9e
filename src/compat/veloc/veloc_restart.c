/*
 * veloc_restart.c - VeloC's restart calls over cairn's restart queries.
 *
 * VELOC_Restart_test(NAME, V): cairn_restart_query with V as the highest id
 * (0: any), stepping below generations of other names (labels), until one
 * labelled NAME: its version, or VELOC_FAILURE (nothing, or only a
 * checkpoint that cannot be restored: the reason is printed).
 * VELOC_Restart_begin(NAME, V): generation V must be restorable and be
 * NAME's (the query, unless VELOC_Restart_test just said so). Nothing is
 * read yet. Memory is restored by VELOC_Recover_selective / _mem: the
 * chosen regions, protected as the application gave them, all at once by
 * cairn_restart for VELOC_RECOVER_ALL (which also puts the routed file
 * back), else one cairn_restart_var each, in id order; a region the
 * checkpoint stores otherwise (CAIRN_EMISMATCH) is described by
 * cairn_var_query and protected as stored (larger regions are fine, as in
 * VeloC), and one it does not hold is left as it is. The routed file comes
 * back at the first VELOC_Route_file of the phase (vl_restore_files) unless
 * a full recovery brought it already. VELOC_Recover_size is
 * cairn_var_query. Every call here is collective: the ranks name the same
 * checkpoint, regions and ids.
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
    s->phase = VL_RESTART;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->version = version;
    s->files = false;
    return VELOC_SUCCESS;
}

static int by_id(const void *a, const void *b)
{
    const vl_region *x = *(vl_region *const *)a, *y = *(vl_region *const *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The regions chosen by MODE and IDS, in id order, into TAKE; -1 said why. */
static int choose(vl_state *s, int mode, const int *ids, int id_count, vl_region **take, int *n)
{
    bool *sel = calloc((size_t)s->nregions + 1, sizeof *sel);
    int rc = !sel ? -2 : id_count < 0 ? -1 : vl_select(mode, ids, id_count, sel);
    if (rc)
        vl_err("VELOC_Recover_mem: %s", rc == -2 ? "out of memory"
                                        : "bad selection (mode 0-2, ids, count >= 0)");
    for (int k = 0; rc == 0 && mode == VELOC_RECOVER_SOME && k < id_count; k++)
        if (!vl_region_find(ids[k])) {
            vl_err("VELOC_Recover_selective: region %d is not protected", ids[k]);
            rc = -1;
        }
    *n = 0;
    for (int i = 0; rc == 0 && i < s->nregions; i++)
        if (sel[i])
            take[(*n)++] = &s->regions[i];
    free(sel);
    qsort(take, (size_t)*n, sizeof *take, by_id);
    return rc ? -1 : 0;
}

/*
 * Collective: protect region R as generation s->version stores it for this
 * rank. 1 if the checkpoint does not hold it (then it is not protected),
 * 0 if it is now protected so, VELOC_FAILURE said why.
 */
static int protect_stored(vl_state *s, vl_region *r)
{
    char name[32];
    cairn_var_info info;
    vl_var_name(name, sizeof name, r->id);
    int rc = cairn_var_query(s->ctx, s->version, name, &info);
    if (rc == CAIRN_ENOENT) /* agreed: no rank or not every rank holds it */
        return vl_all(vl_unprotect_region(r) == 0) ? 1 : VELOC_FAILURE;
    if (rc)
        return vl_cairn_fail(true, "VELOC_Recover_mem", rc);
    bool ok = info.bytes <= r->count * r->base;
    if (!ok)
        vl_err("VELOC_Recover_mem: region %d is %zu bytes; checkpoint '%s' version %d holds %zu",
               r->id, r->count * r->base, s->name, s->version, info.bytes);
    else if ((rc = cairn_protect(s->ctx, name, r->ptr, info.type, info.count, info.ndims,
                                 info.ndims ? info.dims : NULL)) != 0)
        ok = vl_cairn_fail(false, "VELOC_Recover_mem", rc) == 0;
    if (ok) {
        r->in_cairn = true;
        r->cptr = r->ptr;
        r->ctype = info.type;
        r->ccount = info.count;
    }
    return vl_all(ok) ? 0 : VELOC_FAILURE;
}

/* VELOC_RECOVER_ALL: one cairn_restart of the regions TAKE (every region). */
static int recover_all(vl_state *s, vl_region **take, int n)
{
    long got;
    bool ok = true;
    for (int k = 0; k < n; k++)
        ok = ok && vl_protect_region(take[k]) == 0;
    if (!vl_all(ok))
        return VELOC_FAILURE;
    int rc = n > 0 ? cairn_restart(s->ctx, s->version, &got) : 0;
    if (rc == CAIRN_EMISMATCH) { /* stored otherwise, or not at all: as stored */
        int kept = 0;
        for (int k = 0; k < n; k++) {
            int q = protect_stored(s, take[k]);
            if (q < 0)
                return VELOC_FAILURE;
            kept += q == 0;
        }
        rc = kept > 0 ? cairn_restart(s->ctx, s->version, &got) : 0;
        n = kept;
    }
    if (rc)
        return vl_cairn_fail(true, "VELOC_Recover_mem", rc);
    s->files = s->files || n > 0;
    return VELOC_SUCCESS;
}

/* SOME / REST: one cairn_restart_var per region of TAKE, in id order. */
static int recover_each(vl_state *s, vl_region **take, int n)
{
    for (int k = 0; k < n; k++) {
        char name[32];
        long got;
        vl_var_name(name, sizeof name, take[k]->id);
        if (!vl_all(vl_protect_region(take[k]) == 0))
            return VELOC_FAILURE;
        int rc = cairn_restart_var(s->ctx, s->version, name, &got);
        if (rc == CAIRN_EMISMATCH) {
            int q = protect_stored(s, take[k]);
            if (q < 0)
                return VELOC_FAILURE;
            rc = q == 1 ? 0 : cairn_restart_var(s->ctx, s->version, name, &got);
        }
        if (rc)
            return vl_cairn_fail(true, "VELOC_Recover_selective", rc);
    }
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Recover_selective(int mode, int *ids, int id_count)
{
    vl_state *s = vl_state_get();
    bool ok = phase_ok("VELOC_Recover_mem", VL_RESTART);
    if (!s->ctx)
        return VELOC_FAILURE;
    vl_region **take = calloc((size_t)s->nregions + 1, sizeof *take);
    int n = 0;
    if (ok && !take)
        vl_err("VELOC_Recover_mem: out of memory");
    ok = ok && take && choose(s, mode, ids, id_count, take, &n) == 0;
    int rc = !vl_all(ok)                 ? VELOC_FAILURE
             : mode == VELOC_RECOVER_ALL ? recover_all(s, take, n)
                                         : recover_each(s, take, n);
    free(take);
    return rc;
}

VELOC_CAIRN_EXPORT int VELOC_Recover_mem(void)
{
    return VELOC_Recover_selective(VELOC_RECOVER_ALL, NULL, 0);
}

int vl_restore_files(void)
{
    vl_state *s = vl_state_get();
    if (s->files)
        return 0;
    long got;
    bool *none = calloc((size_t)s->nregions + 1, sizeof *none);
    bool ok = none && vl_sync_protect(none) == 0;
    free(none);
    if (!vl_all(ok))
        return VELOC_FAILURE;
    int rc = cairn_restart(s->ctx, s->version, &got); /* a checkpoint of files only */
    if (rc == CAIRN_ESTATE) {
        /* It holds regions too: restore one of them into scratch memory, not
         * the application's, so that cairn_restart may bring the files. */
        vl_region **take = calloc((size_t)s->nregions + 1, sizeof *take);
        int n = 0;
        if (!vl_all(take && choose(s, VELOC_RECOVER_ALL, NULL, 0, take, &n) == 0))
            n = -1;
        for (int k = 0; k < n && rc == CAIRN_ESTATE; k++) {
            vl_region stand = *take[k];
            cairn_var_info info;
            char name[32];
            vl_var_name(name, sizeof name, stand.id);
            int q = cairn_var_query(s->ctx, s->version, name, &info);
            if (q == CAIRN_ENOENT)
                continue;
            if (q) {
                rc = q;
                break;
            }
            stand.ptr = malloc(info.bytes ? info.bytes : 1);
            stand.count = info.bytes;
            stand.base = 1;
            stand.in_cairn = false;
            if (!vl_all(stand.ptr != NULL) || protect_stored(s, &stand) != 0) {
                rc = CAIRN_ENOMEM;
            } else {
                rc = cairn_restart(s->ctx, s->version, &got);
                (void)vl_unprotect_region(&stand);
            }
            free(stand.ptr);
        }
        free(take);
        if (rc == CAIRN_ESTATE)
            vl_err0("VELOC_Route_file: checkpoint '%s' version %d holds memory regions this run "
                    "has not protected; protect one (VELOC_Mem_protect) or restore the memory "
                    "(VELOC_Recover_mem) first", s->name, s->version);
    }
    if (rc && rc != CAIRN_ESTATE)
        return vl_cairn_fail(true, "VELOC_Route_file", rc);
    if (rc)
        return VELOC_FAILURE;
    s->files = true;
    return 0;
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
        return vl_cairn_fail(true, "VELOC_Recover_size", rc);
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
