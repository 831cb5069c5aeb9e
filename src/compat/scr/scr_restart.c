/*
 * scr_restart.c - SCR's restart phase: SCR_Have_restart, SCR_Start_restart,
 * SCR_Route_file inside it, SCR_Complete_restart, and SCR_Current.
 *
 * SCR_Have_restart asks cairn what a restart would do (cairn_restart_query,
 * limited to generations <= cscr.bound) and names the generation by its
 * label, the dataset's name. SCR_Start_restart restores exactly that
 * generation (cairn_restart): its files come back in the staging directory,
 * where SCR_Route_file finds them by their last path component, as they
 * were routed. SCR_Complete_restart agrees on VALID; if any rank says 0 the
 * bound drops below the generation, so the next SCR_Have_restart offers the
 * next older one, as SCR loads its next most recent checkpoint. Either way
 * the restored copies are removed (the application may no longer read them,
 * and none may reach a later checkpoint); after a good restart the next
 * checkpoint follows the restored one, so newer generations (an abandoned
 * timeline) are set aside by cairn. SCR_Current (and SCR_CURRENT) set the
 * bound to the newest restorable generation carrying the given name.
 */
#include "scr_impl.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Bound the restart to the newest restorable generation named NAME. */
static int choose(const char *call, const char *name)
{
    cairn_restart_plan plan;
    for (long bound = CAIRN_LATEST;;) {
        int rc = cairn_restart_query(cscr.ctx, bound, &plan);
        if (rc != 0) {
            cscr_say("%s: %s", call, cairn_errmsg(cscr.ctx));
            return 0;
        }
        if (plan.status == CAIRN_RESTART_READY && strcmp(plan.label, name) == 0) {
            cscr.bound = plan.id;
            cscr.restart_done = 0;
            cscr_debug(1, "%s: '%s' is generation %ld", call, name, plan.id);
            return 1;
        }
        if (plan.id <= 0)
            break;
        bound = plan.id - 1;
    }
    cscr_say("%s: no checkpoint named '%s' can be restored", call, name);
    return 0;
}

CSCR_API int SCR_Current(const char *name)
{
    if (!cscr_enter("SCR_Current", CSCR_IDLE))
        return SCR_FAILURE;
    int ok = cscr_agree(name && *name, "SCR_Current: no name");
    if (ok)
        ok = choose("SCR_Current", name);
    cscr.current_done = 1;
    return ok ? SCR_SUCCESS : SCR_FAILURE;
}

CSCR_API int SCR_Have_restart(int *flag, char *name)
{
    if (flag)
        *flag = 0;
    if (!cscr_enter("SCR_Have_restart", CSCR_IDLE))
        return SCR_FAILURE;
    cscr.have_id = -1;
    if (!cscr.current_done && cscr.conf.current[0]) {
        cscr.current_done = 1;
        if (!choose("SCR_CURRENT", cscr.conf.current))
            return SCR_FAILURE;
    }
    if (cscr.restart_done)
        return SCR_SUCCESS;
    cairn_restart_plan plan;
    int rc = cairn_restart_query(cscr.ctx, cscr.bound, &plan);
    if (rc != 0) {
        cscr_say("SCR_Have_restart: %s", cairn_errmsg(cscr.ctx));
        return SCR_FAILURE;
    }
    if (plan.status == CAIRN_RESTART_UNUSABLE)
        cscr_say("SCR_Have_restart: a checkpoint exists but cannot be restored (%s: %s); none "
                 "is offered", cairn_strerror(plan.code), cairn_errmsg(cscr.ctx));
    if (plan.status != CAIRN_RESTART_READY)
        return SCR_SUCCESS;
    cscr.have_id = plan.id;
    if (plan.label[0])
        snprintf(cscr.have_name, sizeof cscr.have_name, "%s", plan.label);
    else
        snprintf(cscr.have_name, sizeof cscr.have_name, "scr.dataset.%ld", plan.id);
    if (flag)
        *flag = 1;
    if (name)
        snprintf(name, SCR_MAX_FILENAME, "%s", cscr.have_name);
    cscr_debug(1, "restart available: '%s' (generation %ld, level %d%s)", cscr.have_name,
               plan.id, plan.level, plan.rebuild ? ", after a rebuild" : "");
    return SCR_SUCCESS;
}

CSCR_API int SCR_Start_restart(char *name)
{
    if (!cscr_enter("SCR_Start_restart", CSCR_IDLE))
        return SCR_FAILURE;
    if (!cscr_agree(cscr.have_id >= 0, "SCR_Start_restart: SCR_Have_restart offered no "
                                       "checkpoint"))
        return SCR_FAILURE;
    long got = -1;
    int rc = cairn_restart(cscr.ctx, cscr.have_id, &got);
    cscr.restored = rc == 0;
    cscr.phase = CSCR_RESTART; /* even on failure: SCR_Complete_restart(0) follows */
    if (name)
        snprintf(name, SCR_MAX_FILENAME, "%s", cscr.have_name);
    if (rc != 0) {
        cscr_say("SCR_Start_restart: checkpoint '%s' (generation %ld): %s", cscr.have_name,
                 cscr.have_id, cairn_errmsg(cscr.ctx));
        return SCR_FAILURE;
    }
    if (!cscr_bypass_load()) { /* its bypass files are not as they were written */
        cscr.restored = 0;
        return SCR_FAILURE;
    }
    return SCR_SUCCESS;
}

int cscr_route_restart(const char *name, char *file)
{
    char dir[SCR_MAX_FILENAME];
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (cscr.restored && cscr_bypass_route(name, file)) /* SCR_CACHE_BYPASS: in the prefix */
        return access(file, R_OK) == 0 ? SCR_SUCCESS : SCR_FAILURE;
    if (strcmp(base, CSCR_RECORD) == 0 || !cscr_staging_dir(dir, sizeof dir))
        return SCR_FAILURE;
    if (snprintf(file, SCR_MAX_FILENAME, "%s/%s", dir, base) >= SCR_MAX_FILENAME)
        return SCR_FAILURE;
    if (!cscr.restored || !*base || access(file, R_OK) != 0) {
        cscr_debug(1, "SCR_Route_file('%s'): checkpoint '%s' holds no such file", name,
                   cscr.have_name);
        return SCR_FAILURE;
    }
    return SCR_SUCCESS;
}

CSCR_API int SCR_Complete_restart(int valid)
{
    if (!cscr_enter("SCR_Complete_restart", CSCR_RESTART))
        return SCR_FAILURE;
    int ok = cscr_agree(valid && cscr.restored, "");
    cscr_staging_empty();
    cscr_bypass_forget();
    cscr.phase = CSCR_IDLE;
    long id = cscr.have_id;
    cscr.have_id = -1;
    if (ok) {
        cscr.restart_done = 1;
        cscr.next_id = id + 1;
        cscr.dataset = id;
        cscr_debug(1, "restarted from '%s' (generation %ld)", cscr.have_name, id);
        return SCR_SUCCESS;
    }
    cscr_say("restart from '%s' (generation %ld) failed on some rank: the next "
             "SCR_Have_restart offers an older checkpoint", cscr.have_name, id);
    if (id <= 0)
        cscr.restart_done = 1; /* nothing older */
    else
        cscr.bound = id - 1;
    return SCR_FAILURE;
}
