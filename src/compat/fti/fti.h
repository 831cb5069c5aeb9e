/*
 * fti.h - FTI's application interface (the Fault Tolerance Interface,
 * leobago/fti, 1.x), implemented over cairn by libcairn-fti.
 *
 * An FTI application compiles against this header and links with
 * `pkg-config --cflags --libs cairn-fti` instead of FTI: its source does not
 * change. The header installs as <prefix>/include/cairn/fti/fti.h, so it never
 * shadows a real FTI. The calls below keep FTI's signatures, return codes and
 * restart flow; docs/fti.md in cairn's source lists how FTI's configuration file is
 * mapped to cairn's settings and what differs:
 *   - FTI_Init reads FTI's configuration file (ckpt_dir, glbl_dir, node_size,
 *     group_size, ckpt_l1..ckpt_l4, verbosity, keep_last_ckpt, [restart]
 *     failure / exec_id, ...) and hands cairn the equivalent settings; CAIRN_*
 *     environment variables still win. head = 1 runs as head = 0 (warned).
 *   - Protected variable ID is cairn variable "fti-<ID>".
 *   - FTI_GetStoredSize, FTI_Realloc and FTI_RecoverVar are collective here
 *     (local in FTI): call them on every rank of FTI_COMM_WORLD, as FTI's
 *     examples do.
 *   - Not provided (link errors, not silent stubs): FTI_BitFlip, FTI_InitICP /
 *     AddVarICP / FinalizeICP, FTI_SendFile / GetStageDir / GetStageStatus,
 *     FTI_InitComplexType / AddSimpleField / AddComplexField, the HDF5 calls
 *     (FTI_InitGroup, FTI_DefineDataset, ...), FTI_setIDFromString /
 *     getIDFromString, FTI_GetConfig.
 */
#ifndef CAIRN_FTI_H
#define CAIRN_FTI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTI_BUFS 256 /* FTI's buffer size (its limit on paths and ids) */

/* Return codes. */
#define FTI_SCES 0  /* success */
#define FTI_DONE 1  /* FTI_Checkpoint / FTI_Snapshot: a checkpoint was taken */
#define FTI_NSCS -1 /* failure (the message is printed by rank 0) */
#define FTI_NREC -2 /* a restart was expected but nothing could be recovered */

/* Verbosity levels of FTI's configuration file (verbosity = 1..3). */
#define FTI_DBUG 1
#define FTI_INFO 2
#define FTI_WARN 3
#define FTI_EROR 4

/* A data type: ID and size in bytes of one element. The basic types below
 * have IDs 0-10; FTI_InitType gives user types IDs from 11 up. */
typedef struct FTIT_type {
    int id;
    int size;
} FTIT_type;

/* The application's communicator after FTI_Init: the one given to FTI_Init
 * (no rank is set aside, as FTI's head = 0). */
extern MPI_Comm FTI_COMM_WORLD;

extern FTIT_type FTI_CHAR; /* char */
extern FTIT_type FTI_SHRT; /* short */
extern FTIT_type FTI_INTG; /* int */
extern FTIT_type FTI_LONG; /* long */
extern FTIT_type FTI_UCHR; /* unsigned char */
extern FTIT_type FTI_USHT; /* unsigned short */
extern FTIT_type FTI_UINT; /* unsigned int */
extern FTIT_type FTI_ULNG; /* unsigned long */
extern FTIT_type FTI_SFLT; /* float */
extern FTIT_type FTI_DBLE; /* double */
extern FTIT_type FTI_LDBE; /* long double */

/* Collective. Read CONFIGFILE (FTI's format; NULL: cairn's defaults and
 * CAIRN_* variables only) and open cairn over GLOBALCOMM. FTI_SCES; FTI_NREC
 * when the file says this is a restart (failure = 1 or 2) but nothing can be
 * recovered (the run then starts afresh, under a new execution id); FTI_NSCS
 * on a bad file or when cairn cannot start (nothing is changed). */
int FTI_Init(const char *configFile, MPI_Comm globalComm);

/* 0: a fresh start; 1: a checkpoint will be recovered (by FTI_Recover or the
 * first FTI_Snapshot); 2: the same, from the checkpoint keep_last_ckpt kept.
 * Back to 0 once FTI_Recover has restored it. */
int FTI_Status(void);

/* Local. Make TYPE a new data type of SIZE bytes per element (stored as
 * opaque bytes). FTI_SCES, FTI_NSCS if SIZE < 1. */
int FTI_InitType(FTIT_type *type, int size);

/* Local. Protect COUNT elements of TYPE at PTR under ID (again: replace). */
int FTI_Protect(int id, void *ptr, long count, FTIT_type type);

/* Collective. Write checkpoint ID at LEVEL (1 local, 2 partner copy, 3
 * Reed-Solomon, 4 parallel file system; 8, FTI's differential level 4, is
 * level 4). FTI_DONE, or FTI_NSCS with the reason printed. */
int FTI_Checkpoint(int id, int level);

/* Collective. On a restart, the first call recovers every protected variable
 * (FTI_SCES; or FTI_NREC, said once, and the run goes on from its own start,
 * its memory unchanged); otherwise count one iteration and, when the
 * interval of a level (ckpt_l1..ckpt_l4) has passed, checkpoint at the
 * highest such level (FTI_DONE) or return FTI_SCES (FTI_NSCS on failure). */
int FTI_Snapshot(void);

/* Collective. Restore every protected variable from the checkpoint
 * FTI_Status announced (if none: the newest one this run wrote). FTI_SCES,
 * FTI_NREC (sizes do not match, data lost; memory unchanged), FTI_NSCS. */
int FTI_Recover(void);

/* Collective. On a restart (FTI_Status() != 0), restore protected variable
 * ID only; otherwise do nothing. FTI_SCES, FTI_NREC, FTI_NSCS. */
int FTI_RecoverVar(int id);
int FTI_RecoverVarInit(void);     /* FTI_SCES: nothing to prepare */
int FTI_RecoverVarFinalize(void); /* FTI_SCES: nothing to close */

/* Collective. Bytes variable ID holds in the newest checkpoint this run
 * wrote, or else in the one a restart recovers; 0 if none holds it. */
long FTI_GetStoredSize(int id);

/* Collective. On a restart, resize PTR (realloc) to variable ID's stored
 * size and protect it there; returns the new pointer (PTR unchanged when
 * this is no restart; NULL if realloc fails). */
void *FTI_Realloc(int id, void *ptr);

/* Collective. Close cairn; the run's last checkpoint stays on disk. The
 * configuration file then says failure = 0 (a next run starts afresh), or 2
 * with keep_last_ckpt = 1 (a next run recovers it). FTI_SCES or FTI_NSCS. */
int FTI_Finalize(void);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_FTI_H */
