/*
 * fti.h - FTI's application interface (the Fault Tolerance Interface,
 * leobago/fti, release 1.6), implemented over cairn by libcairn-fti.
 *
 * An FTI application compiles against this header and links with
 * `pkg-config --cflags --libs cairn-fti` instead of FTI: its source does not
 * change. The header installs as <prefix>/include/cairn/fti/fti.h, so it never
 * shadows a real FTI. Every name FTI 1.6's fti.h gives a program is here with
 * FTI's signature (types, constants, type handles, functions; FTI's internal
 * helper macros and file-format structures are not). docs/fti.md in cairn's
 * source says, call by call and key by key, what each does here:
 *   - FTI_Init reads FTI's configuration file and hands cairn the equivalent
 *     settings; CAIRN_* environment variables still win.
 *   - Protected variable ID is cairn variable "fti-<ID>".
 *   - FTI_RecoverVar, FTI_GetStoredSize and FTI_Realloc are local, as in FTI:
 *     on a restart FTI_Init reads the checkpoint once (collectively) and each
 *     rank then recovers its variables in any order, or only some of them.
 *   - A call cairn cannot honour (bit flips, staging, HDF5 global datasets,
 *     ...) returns FTI_NSCS (or NULL) and says why on stderr, once per call
 *     per process.
 * The layer owns nothing of the application's memory; the structures below
 * that FTI_GetConfig fills are the caller's.
 */
#ifndef CAIRN_FTI_H
#define CAIRN_FTI_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTI_BUFS 256 /* FTI's buffer size (its limit on paths and ids) */
#define FTI_WORD 16  /* FTI's Reed-Solomon word size (informative here) */

/* Return codes. */
#define FTI_DONE 1  /* FTI_Checkpoint / FTI_Snapshot: a checkpoint was taken */
#define FTI_SCES 0  /* success */
#define FTI_NSCS -1 /* failure (the message is printed) */
#define FTI_NREC -2 /* a restart was expected but nothing could be recovered */
#define FTI_HEAD 2  /* FTI: a head process (never returned here: no heads) */

/* Staging request states (FTI_GetStageStatus). */
#define FTI_SI_FAIL 0x4
#define FTI_SI_SCES 0x3
#define FTI_SI_ACTV 0x2
#define FTI_SI_PEND 0x1
#define FTI_SI_NINI 0x0

/* Verbosity levels (the configuration's verbosity = 1..3). */
#define FTI_EROR 4
#define FTI_WARN 3
#define FTI_IDCP 5
#define FTI_INFO 2
#define FTI_DBUG 1

/* FTI's message tokens between processes and heads (informative here). */
#define FTI_BASE 990
#define FTI_CKTW 991
#define FTI_XORW 992
#define FTI_RSEW 993
#define FTI_PFSW 994
#define FTI_ENDW 995
#define FTI_REJW 996

/* FTI's I/O modes: the configuration's ckpt_io + 1000. cairn writes its own
 * format whatever the mode (docs/fti.md). */
#define FTI_IO_POSIX 1001
#define FTI_IO_MPI 1002
#define FTI_IO_FTIFF 1003
#define FTI_IO_SIONLIB 1004
#define FTI_IO_HDF5 1005
#define FTI_IO_IME 1006

#define FTI_DEFAULT_MAX_VAR_ID (100 * 1024)
#define FTI_LIMIT_MAX_VAR_ID INT_MAX

/* A data type handle: FTI_CHAR .. FTI_LDBE are 0..10; FTI_InitType and
 * FTI_InitCompositeType give new ones from 11 up. */
typedef int fti_id_t;
#define FTIT_type fti_id_t /* FTI 1.4 and before named it so */

typedef uint64_t FTIT_hsize_t; /* dimensions of HDF5 datasets */
typedef uintptr_t FTI_ADDRVAL;
typedef void *FTI_ADDRPTR;

/* Checkpoint levels (FTI_Checkpoint's LEVEL). */
typedef enum {
    FTI_L1 = 1,
    FTI_L2,
    FTI_L3,
    FTI_L4,
    FTI_L1_DCP,
    FTI_L2_DCP,
    FTI_L3_DCP,
    FTI_L4_DCP,
    FTI_L4_H5_SINGLE,
    FTI_MIN_LEVEL_ID = FTI_L1,
    FTI_MAX_LEVEL_ID = FTI_L4_H5_SINGLE
} FTIT_level;

typedef union FTIT_double {
    double value;
    float floatval[2];
    int intval[2];
    char byte[8];
} FTIT_double;

typedef union FTIT_float {
    float value;
    int intval;
    char byte[4];
} FTIT_float;

/* HDF5 group of FTI's HDF5 output (FTI_InitGroup); a name only here. */
typedef struct FTIT_H5Group {
    int id;
    char name[FTI_BUFS];
    char fullName[FTI_BUFS];
    int childrenNo;
    int childrenID[FTI_BUFS];
} FTIT_H5Group;

/* A field of a composite type (FTI_AddScalarField / FTI_AddVectorField). */
typedef struct FTIT_typeField {
    fti_id_t type;
    size_t offset;
    int rank;
    int dimLength[32];
    char name[FTI_BUFS];
} FTIT_typeField;

typedef struct FTIT_complexType {
    char name[FTI_BUFS];
    int length;
    FTIT_typeField field[FTI_BUFS];
} FTIT_complexType;

/* Descriptive attributes of a protected variable (FTI_SetAttribute). */
typedef struct FTIT_dimension {
    int ndims;
    int64_t count[32];
} FTIT_dimension;

typedef struct FTIT_attribute {
    char name[FTI_BUFS];
    FTIT_dimension dim;
} FTIT_attribute;

typedef enum FTIT_attributeFlag {
    FTI_ATTRIBUTE_NAME = 0x1,
    FTI_ATTRIBUTE_DIM = 0x2
} FTIT_attributeFlag;

/* A protected variable as FTI describes it. */
typedef struct FTIT_dataset {
    int id;
    void *ptr;
    int32_t count;
    fti_id_t type;
    int eleSize;
    int32_t size;
    int rank;
    int dimLength[32];
    char name[FTI_BUFS];
    FTIT_H5Group *h5group;
    bool isDevicePtr;
    void *devicePtr;
    FTIT_attribute attribute;
} FTIT_dataset;

/* What FTI_GetConfig reports of a configuration file (the keys FTI reads). */
typedef struct FTIT_configuration {
    bool stagingEnabled;
    bool dcpEnabled;
    bool keepL4Ckpt;
    bool keepHeadsAlive;
    int dcpMode;
    int dcpBlockSize;
    char cfgFile[FTI_BUFS];
    int saveLastCkpt;
    int verbosity;
    int blockSize;    /* bytes ([advanced] block_size is KiB) */
    int transferSize; /* bytes ([advanced] transfer_size is MiB) */
    int ckptTag, stageTag, finalTag, generalTag;
    int test;
    int l3WordSize;
    int ioMode; /* FTI_IO_* */
    bool h5SingleFileEnable;
    bool h5SingleFileKeep;
    char h5SingleFileDir[FTI_BUFS];
    char h5SingleFilePrefix[FTI_BUFS];
    char stageDir[FTI_BUFS];
    char localDir[FTI_BUFS];
    char glbalDir[FTI_BUFS];
    char metadDir[FTI_BUFS];
    char lTmpDir[FTI_BUFS];
    char gTmpDir[FTI_BUFS];
    char mTmpDir[FTI_BUFS];
    size_t cHostBufSize;
} FTIT_configuration;

typedef struct FTIT_execution {
    char id[FTI_BUFS]; /* execution id ([restart] exec_id, or a new one) */
    int ckpt;
    int reco; /* [restart] failure */
    int ckptLvel;
    int ckptIntv;
    int lastCkptLvel;
    int wasLastOffline;
    double iterTime, lastIterTime, meanIterTime, globMeanIter, totalIterTime;
    unsigned int syncIter;
    int syncIterMax;
    unsigned int minuteCnt;
    bool hasCkpt;
    bool h5SingleFile;
    unsigned int ckptCnt, ckptIcnt, ckptID, ckptNext, ckptLast;
    int32_t ckptSize;
    unsigned int nbVar, nbVarStored, nbType;
    int nbGroup;
    int metaAlloc;
    int initSCES;
    MPI_Comm globalComm;
    MPI_Comm groupComm;
    MPI_Comm nodeComm;
} FTIT_execution;

typedef struct FTIT_topology {
    int nbProc, nbNodes, myRank, splitRank, nodeSize, nbHeads, nbApprocs, groupSize;
    int sectorID, nodeID, groupID, amIaHead, headRank, headRankNode, nodeRank, groupRank;
    int right, left;
    int body[FTI_BUFS];
} FTIT_topology;

typedef struct FTIT_checkpoint {
    char dir[FTI_BUFS];
    char dcpDir[FTI_BUFS];
    char archDir[FTI_BUFS];
    char metaDir[FTI_BUFS];
    char dcpName[FTI_BUFS];
    bool isDcp, hasDcp, hasCkpt;
    int isInline;
    int ckptIntv; /* minutes; -1 never */
    int ckptCnt;
    int ckptDcpIntv;
    int ckptDcpCnt;
} FTIT_checkpoint;

typedef struct FTIT_injection {
    int rank, index, position, number, frequency, counter;
    double timer;
} FTIT_injection;

typedef struct {
    FTIT_configuration configuration;
    FTIT_execution execution;
    FTIT_topology topology;
    FTIT_checkpoint checkpoint[5]; /* levels 1..4 */
    FTIT_injection injection;
} FTIT_allConfiguration;

/* The application's communicator after FTI_Init: the one given to FTI_Init
 * (no rank is set aside: head = 1 runs as head = 0). */
extern MPI_Comm FTI_COMM_WORLD;

extern fti_id_t FTI_CHAR; /* char */
extern fti_id_t FTI_SHRT; /* short */
extern fti_id_t FTI_INTG; /* int */
extern fti_id_t FTI_LONG; /* long */
extern fti_id_t FTI_UCHR; /* unsigned char */
extern fti_id_t FTI_USHT; /* unsigned short */
extern fti_id_t FTI_UINT; /* unsigned int */
extern fti_id_t FTI_ULNG; /* unsigned long */
extern fti_id_t FTI_SFLT; /* float */
extern fti_id_t FTI_DBLE; /* double */
extern fti_id_t FTI_LDBE; /* long double */

/* Collective. Read CONFIGFILE (FTI's format; NULL: cairn's defaults and
 * CAIRN_* variables only) and open cairn over GLOBALCOMM. On a restart the
 * checkpoint is read here, once (see FTI_RecoverVar). FTI_SCES; FTI_NREC when
 * the file says restart but nothing can be recovered (the run starts afresh,
 * under a new execution id); FTI_NSCS on a bad file or when cairn cannot
 * start (nothing is changed). */
int FTI_Init(const char *configFile, MPI_Comm globalComm);

/* 0: a fresh start; 1: a checkpoint will be recovered; 2: the same, from the
 * checkpoint keep_last_ckpt kept. Back to 0 once FTI_Recover restored it. */
int FTI_Status(void);

/* Local. A new data type of SIZE opaque bytes in *TYPE. */
int FTI_InitType(fti_id_t *type, int size);
/* Local. A composite type of SIZE bytes (stored as opaque bytes); its fields
 * are checked and kept as its description. Returns the handle, FTI_NSCS. */
fti_id_t FTI_InitCompositeType(const char *name, size_t size, FTIT_H5Group *h5g);
int FTI_AddScalarField(fti_id_t id, const char *name, fti_id_t fid, size_t offset);
int FTI_AddVectorField(fti_id_t id, const char *name, fti_id_t tid, size_t offset, int ndims,
                       int *dim_sizes);

/* Local. Protect COUNT elements of type TID at PTR under ID (again: replace). */
int FTI_Protect(int id, void *ptr, int32_t count, fti_id_t tid);
/* Local. Name and shape of protected variable ID (kept; the shape of a float
 * or double variable is handed to cairn's compressors). */
int FTI_SetAttribute(int id, FTIT_attribute attribute, FTIT_attributeFlag flag);

/* Collective. Write checkpoint ID at LEVEL (1 local, 2 partner copy, 3
 * Reed-Solomon, 4 parallel file system; FTI_L1_DCP..FTI_L4_DCP the same
 * levels, incremental as incr.mode says; FTI_L4_H5_SINGLE is FTI_NSCS).
 * FTI_DONE, or FTI_NSCS with the reason printed. */
int FTI_Checkpoint(int id, int level);

/* Collective. On a restart, the first call recovers every protected
 * variable; otherwise count one iteration and checkpoint at the highest level
 * whose interval (ckpt_l1..ckpt_l4) has passed. FTI_SCES, FTI_DONE, FTI_NREC,
 * FTI_NSCS. */
int FTI_Snapshot(void);

/* Collective. Restore every protected variable from the checkpoint
 * FTI_Status announced (if none: the newest one this run wrote). FTI_SCES,
 * FTI_NREC (sizes do not match, data lost; memory unchanged), FTI_NSCS. */
int FTI_Recover(void);

/* Local, any order, any subset. On a restart restore protected variable ID
 * from the checkpoint FTI_Init read; otherwise do nothing. FTI_SCES,
 * FTI_NREC (not in the checkpoint, another size), FTI_NSCS. */
int FTI_RecoverVar(int id);
int FTI_RecoverVarInit(void);     /* FTI_SCES: the checkpoint was read at FTI_Init */
int FTI_RecoverVarFinalize(void); /* frees what was read and not recovered */

/* Local. Bytes variable ID holds in the newest checkpoint this run wrote, or
 * else in the one a restart recovers; 0 if none holds it. */
int32_t FTI_GetStoredSize(int id);

/* Local. On a restart, resize PTR (realloc) to variable ID's stored size and
 * protect it there; returns the new pointer (PTR unchanged when this is no
 * restart; NULL if realloc fails). */
void *FTI_Realloc(int id, void *ptr);

/* Collective. Close cairn; the run's last checkpoint stays on disk. */
int FTI_Finalize(void);

/* Local. FTI_GetConfig reads CONFIGFILE as FTI_Init would and reports it. */
FTIT_allConfiguration FTI_GetConfig(const char *configFile, MPI_Comm globalComm);

/* Local. An id for a name: setIDFromString gives NAME an id made from the
 * name alone (the same in every process and run, 0x40000000 and up; FTI_NSCS
 * if another name of this process has it); getIDFromString returns the id set
 * for NAME, or FTI_NSCS. */
int FTI_setIDFromString(const char *name);
int FTI_getIDFromString(const char *name);

/* Collective. FTI's incremental checkpoint (iCP): FTI_AddVarICP copies
 * variable VARID's current value at once, FTI_FinalizeICP checkpoints what
 * was added (every protected variable must be) as checkpoint ID at LEVEL. */
int FTI_InitICP(int id, int level, bool activate);
int FTI_AddVarICP(int varID);
int FTI_FinalizeICP(void);

/* Local. HDF5 names and shapes for FTI's HDF5 output (ckpt_io = 5): kept as
 * the variable's description (FTI_DefineDataset's shape is FTI_SetAttribute's
 * dimension); cairn writes its own files. */
int FTI_InitGroup(FTIT_H5Group *h5group, const char *name, FTIT_H5Group *parent);
int FTI_RenameGroup(FTIT_H5Group *h5group, const char *name);
int FTI_DefineDataset(int id, int rank, int *dimLength, const char *name, FTIT_H5Group *h5group);

/* Not honoured here: each says why once and returns FTI_NSCS (or NULL):
 * bit-flip injection, staging, and HDF5 global datasets (FTI's restart on
 * another process count; cairn's own is cairn_protect_block). */
int FTI_BitFlip(int datasetID);
int FTI_GetStageDir(char *stageDir, int maxLen);
int FTI_GetStageStatus(int ID);
int FTI_SendFile(const char *lpath, const char *rpath);
int FTI_DefineGlobalDataset(int id, int rank, FTIT_hsize_t *dimLength, const char *name,
                            FTIT_H5Group *h5group, fti_id_t tid);
int FTI_AddSubset(int id, int rank, FTIT_hsize_t *offset, FTIT_hsize_t *count, int did);
int FTI_RecoverDatasetDimension(int did);
FTIT_hsize_t *FTI_GetDatasetSpan(int did, int rank);
int FTI_GetDatasetRank(int did);
int FTI_UpdateGlobalDataset(int id, int rank, FTIT_hsize_t *dimLength);
int FTI_UpdateSubset(int id, int rank, FTIT_hsize_t *offset, FTIT_hsize_t *count, int did);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_FTI_H */
