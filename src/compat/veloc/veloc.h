/*
 * veloc.h - VeloC's C API (ECP-VeloC/VELOC include/veloc.h) over cairn, the
 * libcairn-veloc layer: an application written for VeloC builds against this
 * header (pkg-config cairn-veloc) and checkpoints with cairn unchanged.
 *
 * The calls, their arguments and the constants are VeloC's. What each call
 * does with cairn, the configuration keys understood and the calls not
 * supported are in docs/veloc.md in cairn's source. In short:
 * - a checkpoint (NAME, VERSION) is cairn generation VERSION labelled NAME,
 *   of one cairn job (job.id, default "veloc"); VERSION increases across
 *   all names of a run;
 * - the config file's keys (scratch, persistent, mode, ec_interval,
 *   persistent_interval, scratch_versions, max_versions, failure_domain,
 *   and any cairn key written "section.key") become cairn's settings;
 *   CAIRN_* environment variables still win;
 * - failures print the reason on stderr ("veloc: ...") and return
 *   VELOC_FAILURE.
 * The layer owns nothing of the application's memory: protected regions
 * stay the application's and must stay valid while protected.
 */
#ifndef __VELOC_H
#define __VELOC_H

#include <stddef.h>
#include <string.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define VELOC_CAIRN_EXPORT __attribute__((visibility("default")))
#else
#define VELOC_CAIRN_EXPORT
#endif

#ifndef VELOC_SUCCESS
#define VELOC_SUCCESS (0)
#endif
#ifndef VELOC_FAILURE
#define VELOC_FAILURE (-1)
#endif

#define VELOC_MAX_NAME (1024)

#define VELOC_RECOVER_ALL (0)
#define VELOC_RECOVER_SOME (1)
#define VELOC_RECOVER_REST (2)

#define VELOC_CKPT_ALL (0)
#define VELOC_CKPT_SOME (1)
#define VELOC_CKPT_REST (2)

/* Init / Finalize. VELOC_Init is collective over COMM; CFG_FILE holds
 * "key = value" lines. VELOC_Init_single (no communicator) is not supported:
 * VELOC_FAILURE. VELOC_Finalize is collective; DRAIN waits for nothing more
 * (a checkpoint is complete when VELOC_Checkpoint_end returns). */
VELOC_CAIRN_EXPORT int VELOC_Init(MPI_Comm comm, const char *cfg_file);
VELOC_CAIRN_EXPORT int VELOC_Init_single(unsigned int id, const char *cfg_file);
VELOC_CAIRN_EXPORT int VELOC_Finalize(int drain);

/* Memory registration (local). ID labels the region; COUNT elements of
 * BASE_SIZE bytes at PTR. Protecting an ID again replaces it; COUNT = 0
 * unprotects it. */
VELOC_CAIRN_EXPORT int VELOC_Mem_protect(int id, void *ptr, size_t count, size_t base_size);
VELOC_CAIRN_EXPORT int VELOC_Mem_unprotect(int id);

/* File registration (inside a checkpoint or restart phase): ROUTED
 * (VELOC_MAX_NAME bytes) receives the path of this rank's file of the
 * current checkpoint, the same whatever ORIGINAL names, as in VeloC. Local,
 * but a restart phase's first call is collective: it brings the file back. */
VELOC_CAIRN_EXPORT int VELOC_Route_file(const char *original, char *routed);

/* Checkpoint phase: begin (collective), mem or selective (local), end
 * (collective; writes the checkpoint). VELOC_Checkpoint = wait + begin +
 * mem + end(1). */
VELOC_CAIRN_EXPORT int VELOC_Checkpoint_begin(const char *name, int version);
VELOC_CAIRN_EXPORT int VELOC_Checkpoint_selective(int mode, int *ids, int id_count);
VELOC_CAIRN_EXPORT int VELOC_Checkpoint_mem(void);
VELOC_CAIRN_EXPORT int VELOC_Checkpoint_end(int success);
VELOC_CAIRN_EXPORT int VELOC_Checkpoint_wait(void);
VELOC_CAIRN_EXPORT int VELOC_Backend_ready(void);
VELOC_CAIRN_EXPORT int VELOC_Checkpoint(const char *name, int version);

/* Restart (collective, all of them): VELOC_Restart_test returns the newest
 * version of checkpoint NAME not above VERSION (0: any) that can be
 * restored, else VELOC_FAILURE. VELOC_Recover_size gives the bytes region ID
 * holds in the checkpoint (-1: none). VELOC_Restart = begin + recover_mem +
 * end(1). */
VELOC_CAIRN_EXPORT int VELOC_Restart_test(const char *name, int version);
VELOC_CAIRN_EXPORT int VELOC_Restart_begin(const char *name, int version);
VELOC_CAIRN_EXPORT int VELOC_Recover_selective(int mode, int *ids, int id_count);
VELOC_CAIRN_EXPORT int VELOC_Recover_size(int id);
VELOC_CAIRN_EXPORT int VELOC_Recover_mem(void);
VELOC_CAIRN_EXPORT int VELOC_Restart_end(int success);
VELOC_CAIRN_EXPORT int VELOC_Restart(const char *name, int version);

#ifdef __cplusplus
}
#endif

#endif /* __VELOC_H */
