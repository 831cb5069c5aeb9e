/*
 * scr_jobid.c - the job id cairn-scr files a job's checkpoints under, by
 * SCR's rules: SCR_JOB_ID, else the scheduler's job id (Slurm, LSF, PBS,
 * Flux, Cobalt, looked up in that order as SCR's scr_env does), else a
 * default. SCR's default is the fixed "defjobid"; cairn-scr's default adds
 * the prefix's hash ("scr-defjobid-<16 hex digits>"), so that two programs
 * run by one user without any job id in different prefixes never share (and
 * prune) one another's node-local checkpoints. No MPI: the cairn CLI links
 * this file to find an SCR job from its prefix (`cairn ... --scr PREFIX`).
 * Owns nothing; the caller's buffer receives the id.
 */
#include "scr_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cscr_job_id(const char *value, const char *prefix, char *out, size_t len,
                const char **source)
{
    static const char *const sched[] = {"SLURM_JOB_ID", "SLURM_JOBID", "LSB_JOBID",
                                        "PBS_JOBID",    "FLUX_JOB_ID", "COBALT_JOBID"};
    if (!value || !*value) {
        value = getenv("SCR_JOB_ID");
        if (value && !*value)
            value = NULL;
    }
    if (value) {
        *source = "SCR_JOB_ID";
        return snprintf(out, len, "%s", value) < (int)len;
    }
    for (size_t i = 0; i < sizeof sched / sizeof sched[0]; i++) {
        const char *v = getenv(sched[i]);
        if (v && *v) {
            *source = sched[i];
            return snprintf(out, len, "%s", v) < (int)len;
        }
    }
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the prefix */
    for (const char *p = prefix ? prefix : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    *source = "no SCR_JOB_ID and no scheduler job id: SCR's defjobid, with the prefix's hash";
    return snprintf(out, len, "scr-defjobid-%016llx", (unsigned long long)h) < (int)len;
}
