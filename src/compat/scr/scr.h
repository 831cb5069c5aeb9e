/*
 * scr.h - SCR's C API (LLNL Scalable Checkpoint/Restart, v3 interface) over
 * cairn: the header an SCR application includes, unchanged, to be built
 * against libcairn-scr instead of libscr (pkg-config module cairn-scr).
 *
 * The application checkpoints FILES: between SCR_Start_output and
 * SCR_Complete_output each rank asks SCR_Route_file where to write each of
 * its files; the dataset then becomes one cairn generation (labelled with
 * the dataset's name) at the level SCR_COPY_TYPE names. On restart,
 * SCR_Have_restart names the newest checkpoint cairn can restore,
 * SCR_Start_restart restores its files, SCR_Route_file gives each one's
 * path, and SCR_Complete_restart(0) on any rank makes the next
 * SCR_Have_restart name the next older checkpoint. docs/scr.md in cairn's
 * source has the configuration mapping (SCR_COPY_TYPE, SCR_PREFIX,
 * SCR_FLUSH, ...) and what differs from SCR.
 *
 * Every call but SCR_Route_file and SCR_Get_version is collective over
 * MPI_COMM_WORLD and returns the same value on every rank. Calls return
 * SCR_SUCCESS or SCR_FAILURE; the reason is printed to stderr ("cairn-scr:").
 * Not supported (they return SCR_FAILURE and change nothing): SCR_Delete,
 * SCR_Drop, and SCR_Config/SCR_Configf after SCR_Init; SCR_Should_exit has
 * no halt condition to report and always sets *flag to 0.
 */
#ifndef CAIRN_SCR_H
#define CAIRN_SCR_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of SCR's API this header follows (SCR_Get_version names cairn-scr). */
#define SCR_MAJOR_VERSION "3"
#define SCR_MINOR_VERSION "0"
#define SCR_PATCH_VERSION "0"
#define SCR_VERSION "v3.0.0"

#define SCR_SUCCESS (0)
#define SCR_FAILURE (1)

/* Size of the buffers SCR_Route_file, SCR_Have_restart and SCR_Start_restart fill. */
#define SCR_MAX_FILENAME 1024

/* SCR_Start_output flags, OR'ed. */
#define SCR_FLAG_NONE (0)             /* refused by SCR_Start_output: say what the dataset is */
#define SCR_FLAG_CHECKPOINT (1 << 0)  /* the job can restart from it: a cairn generation */
#define SCR_FLAG_OUTPUT (1 << 1)      /* its files must end up under their names on the PFS */

/* Start and finish. SCR_Init reads SCR's configuration (environment, then
 * SCR_CONF_FILE or <prefix>/.scrconf) and opens cairn over MPI_COMM_WORLD. */
int SCR_Init(void);
int SCR_Finalize(void);

/* Before SCR_Init: set ("KEY=VALUE": returns the value set, owned by the
 * library, not to be freed), unset ("KEY=": NULL) or query ("KEY": the value
 * malloc'ed, the caller frees it; NULL if unset) one simple parameter; spaces
 * around KEY and VALUE do not count. NULL for what is refused. After
 * SCR_Init only queries work. */
const char *SCR_Config(const char *config);
const char *SCR_Configf(const char *format, ...);

/* Local. Where to write (in an output phase) or read (in a restart phase)
 * the file NAME; outside both, NAME is copied to FILE as it is. FILE holds
 * SCR_MAX_FILENAME bytes. */
int SCR_Route_file(const char *name, char *file);

/* Restart: is there a checkpoint (*FLAG 1 and its name in NAME, which may be
 * NULL), load it, read its files (SCR_Route_file), and say whether they were
 * good (VALID 1) on this rank. */
int SCR_Have_restart(int *flag, char *name);
int SCR_Start_restart(char *name);
int SCR_Complete_restart(int valid);

/* Checkpoint and output datasets. SCR_Start_checkpoint() is
 * SCR_Start_output(NULL, SCR_FLAG_CHECKPOINT); NAME NULL or "" means
 * "scr.dataset.<id>". Complete returns SCR_SUCCESS only if VALID was 1 on
 * every rank and the dataset is stored. */
int SCR_Need_checkpoint(int *flag);
int SCR_Start_checkpoint(void);
int SCR_Complete_checkpoint(int valid);
int SCR_Start_output(const char *name, int flags);
int SCR_Complete_output(int valid);

/* Choose the checkpoint the next SCR_Have_restart offers: the newest one
 * named NAME (collective, before any restart or output). */
int SCR_Current(const char *name);

/* Not supported: return SCR_FAILURE and change nothing. */
int SCR_Delete(const char *name);
int SCR_Drop(const char *name);

char *SCR_Get_version(void);
int SCR_Should_exit(int *flag);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_SCR_H */
