/*
 * fti_more.c - the rest of FTI 1.6's calls: FTI_GetConfig, FTI's
 * incremental checkpoint (FTI_InitICP, FTI_AddVarICP, FTI_FinalizeICP), and
 * the calls cairn does not honour, each of which says why once per process
 * (cfti_once) and returns FTI_NSCS (FTI_GetDatasetSpan: NULL).
 *
 * iCP: FTI writes each variable as FTI_AddVarICP names it, so the checkpoint
 * holds the value the variable had at that call. Here FTI_AddVarICP copies
 * it, and FTI_FinalizeICP protects the copies in the variables' place for
 * one FTI_Checkpoint, then the variables again: the same checkpoint,
 * restored bit for bit by FTI_Recover. Owns those copies until then.
 */
#include "fti_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

FTI_EXPORT FTIT_allConfiguration FTI_GetConfig(const char *configFile, MPI_Comm globalComm)
{
    FTIT_allConfiguration a;
    memset(&a, 0, sizeof a);
    cfti_conf c;
    char msg[CFTI_MSG_MAX];
    cfti_conf_defaults(&c);
    if (!configFile || cfti_conf_read_quiet(configFile, &c, msg, sizeof msg) != 0) {
        cfti_once("FTI_GetConfig", "%s", configFile ? msg : "no configuration file named");
        return a;
    }
    FTIT_configuration *f = &a.configuration;
    f->stagingEnabled = c.staging, f->dcpEnabled = c.dcp, f->keepL4Ckpt = c.keep_l4;
    f->keepHeadsAlive = c.keep_heads, f->dcpMode = c.dcp_mode, f->dcpBlockSize = c.dcp_block;
    snprintf(f->cfgFile, FTI_BUFS, "%s", configFile);
    f->saveLastCkpt = c.keep_last, f->verbosity = c.verbosity;
    f->blockSize = c.block_kb * 1024, f->transferSize = c.transfer_mb * 1024 * 1024;
    f->ckptTag = c.ckpt_tag, f->stageTag = c.stage_tag, f->finalTag = c.final_tag;
    f->generalTag = c.general_tag, f->test = c.local_test, f->l3WordSize = FTI_WORD;
    f->ioMode = c.ckpt_io >= 1 && c.ckpt_io <= 6 ? c.ckpt_io + 1000 : FTI_IO_POSIX;
    f->h5SingleFileEnable = c.h5_enable, f->h5SingleFileKeep = c.h5_keep;
    snprintf(f->h5SingleFileDir, FTI_BUFS, "%s", c.h5_dir[0] ? c.h5_dir : c.glbl_dir);
    snprintf(f->h5SingleFilePrefix, FTI_BUFS, "%s", c.h5_prefix[0] ? c.h5_prefix : "VPR-h5");
    snprintf(f->localDir, FTI_BUFS, "%s", c.ckpt_dir);
    snprintf(f->glbalDir, FTI_BUFS, "%s", c.glbl_dir);
    snprintf(f->metadDir, FTI_BUFS, "%s", c.meta_dir);
    f->cHostBufSize = c.gpu_bufsize > 0 ? (size_t)c.gpu_bufsize : 0;
    FTIT_execution *e = &a.execution;
    snprintf(e->id, FTI_BUFS, "%s", c.failure ? c.exec_id : "");
    e->reco = c.failure, e->syncIterMax = c.max_sync, e->globalComm = globalComm;
    FTIT_topology *t = &a.topology;
    MPI_Comm_size(globalComm, &t->nbProc);
    MPI_Comm_rank(globalComm, &t->myRank);
    t->splitRank = t->myRank;
    t->nodeSize = c.node_size, t->nbHeads = c.head < 0 ? 0 : c.head;
    t->nbApprocs = t->nodeSize - t->nbHeads, t->groupSize = c.group_size < 1 ? 1 : c.group_size;
    t->nbNodes = t->nodeSize > 0 ? t->nbProc / t->nodeSize : 0;
    for (int l = 1; l <= 4; l++) {
        a.checkpoint[l].ckptIntv = c.ckpt_l[l] == 0 ? -1 : c.ckpt_l[l];
        a.checkpoint[l].isInline = l == 1 ? 1 : c.inline_l[l];
        a.checkpoint[l].ckptCnt = 1;
    }
    a.checkpoint[4].ckptDcpIntv = c.dcp_l4;
    FTIT_injection *in = &a.injection;
    in->rank = c.inj_rank, in->index = c.inj_index, in->position = c.inj_position;
    in->number = c.inj_number, in->frequency = c.inj_frequency;
    return a;
}

/* ---- iCP ---- */

static struct {
    int on, active, id, level;
    void **copy; /* per protected variable (cfti.vars order), NULL: not added */
    int ncopy;
} icp;

static void icp_clear(void)
{
    for (int i = 0; i < icp.ncopy; i++)
        free(icp.copy[i]);
    free(icp.copy);
    memset(&icp, 0, sizeof icp);
}

FTI_EXPORT int FTI_InitICP(int id, int level, bool activate)
{
    if (!cfti.ctx) {
        cfti_once("FTI_InitICP", "FTI is not initialized");
        return FTI_NSCS;
    }
    if (icp.on) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_InitICP(%d): checkpoint %d is still "
                "open (FTI_FinalizeICP first)\n", cfti.rank, id, icp.id);
        return FTI_NSCS;
    }
    icp.copy = calloc((size_t)cfti.nvars + 1, sizeof *icp.copy);
    if (!icp.copy)
        return FTI_NSCS;
    icp.ncopy = cfti.nvars;
    icp.on = 1, icp.active = activate, icp.id = id, icp.level = level;
    return FTI_SCES;
}

FTI_EXPORT int FTI_AddVarICP(int varID)
{
    if (!icp.on) {
        cfti_once("FTI_AddVarICP", "no checkpoint is open (FTI_InitICP first)");
        return FTI_NSCS;
    }
    if (!icp.active)
        return FTI_SCES;
    cfti_var *v = cfti_var_find(varID);
    int k = v ? (int)(v - cfti.vars) : -1;
    if (k < 0 || k >= icp.ncopy) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_AddVarICP(%d): the variable was not "
                "protected when FTI_InitICP was called\n", cfti.rank, varID);
        return FTI_NSCS;
    }
    size_t bytes = v->elems * cairn_type_size(v->ctype);
    void *c = malloc(bytes ? bytes : 1);
    if (!c)
        return FTI_NSCS;
    memcpy(c, v->ptr, bytes);
    free(icp.copy[k]);
    icp.copy[k] = c;
    return FTI_SCES;
}

FTI_EXPORT int FTI_FinalizeICP(void)
{
    if (!icp.on) {
        cfti_once("FTI_FinalizeICP", "no checkpoint is open (FTI_InitICP first)");
        return FTI_NSCS;
    }
    if (!icp.active) {
        icp_clear();
        return FTI_SCES;
    }
    int missing = -1;
    for (int i = 0; i < icp.ncopy && missing < 0; i++)
        if (!icp.copy[i] || cfti.nvars != icp.ncopy)
            missing = cfti.vars[i].id;
    int ok = missing < 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, cfti.comm);
    if (!ok) {
        if (missing >= 0)
            fprintf(stderr, "cairn-fti: warning: rank %d: FTI_FinalizeICP: variable %d was not "
                    "added (FTI_AddVarICP): checkpoint %d not taken\n", cfti.rank, missing,
                    icp.id);
        icp_clear();
        return FTI_NSCS;
    }
    char name[32];
    for (int i = 0; i < icp.ncopy; i++) {
        cfti_name(cfti.vars[i].id, name);
        cairn_protect(cfti.ctx, name, icp.copy[i], cfti.vars[i].ctype, cfti.vars[i].elems, 0,
                      NULL);
    }
    int rc = FTI_Checkpoint(icp.id, icp.level);
    for (int i = 0; i < icp.ncopy; i++) {
        cfti_name(cfti.vars[i].id, name);
        cairn_protect(cfti.ctx, name, cfti.vars[i].ptr, cfti.vars[i].ctype, cfti.vars[i].elems,
                      0, NULL);
    }
    icp_clear();
    return rc == FTI_DONE ? FTI_SCES : FTI_NSCS;
}

/* ---- not honoured ---- */

#define NOT_HONOURED(call, why) cfti_once(call, "not supported: %s", why)

FTI_EXPORT int FTI_BitFlip(int datasetID)
{
    (void)datasetID;
    NOT_HONOURED("FTI_BitFlip", "no bit-flip injection in cairn (its checksums would catch the "
                 "flips in a checkpoint; in memory they are the application's)");
    return FTI_NSCS;
}

#define STAGING "no staging area: copy the file to the parallel file system yourself, or "     \
                "route it into a checkpoint (cairn_route_file)"

FTI_EXPORT int FTI_GetStageDir(char *stageDir, int maxLen)
{
    (void)stageDir, (void)maxLen;
    NOT_HONOURED("FTI_GetStageDir", STAGING);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_GetStageStatus(int ID)
{
    (void)ID;
    NOT_HONOURED("FTI_GetStageStatus", STAGING);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_SendFile(const char *lpath, const char *rpath)
{
    (void)lpath, (void)rpath;
    NOT_HONOURED("FTI_SendFile", STAGING);
    return FTI_NSCS;
}

#define GLOBAL_DS "no HDF5 global datasets (FTI's restart on another process count); cairn's " \
                  "is cairn_protect_block"

FTI_EXPORT int FTI_DefineGlobalDataset(int id, int rank, FTIT_hsize_t *dimLength,
                                       const char *name, FTIT_H5Group *h5group, fti_id_t tid)
{
    (void)id, (void)rank, (void)dimLength, (void)name, (void)h5group, (void)tid;
    NOT_HONOURED("FTI_DefineGlobalDataset", GLOBAL_DS);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_AddSubset(int id, int rank, FTIT_hsize_t *offset, FTIT_hsize_t *count,
                             int did)
{
    (void)id, (void)rank, (void)offset, (void)count, (void)did;
    NOT_HONOURED("FTI_AddSubset", GLOBAL_DS);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_RecoverDatasetDimension(int did)
{
    (void)did;
    NOT_HONOURED("FTI_RecoverDatasetDimension", GLOBAL_DS);
    return FTI_NSCS;
}

FTI_EXPORT FTIT_hsize_t *FTI_GetDatasetSpan(int did, int rank)
{
    (void)did, (void)rank;
    NOT_HONOURED("FTI_GetDatasetSpan", GLOBAL_DS);
    return NULL;
}

FTI_EXPORT int FTI_GetDatasetRank(int did)
{
    (void)did;
    NOT_HONOURED("FTI_GetDatasetRank", GLOBAL_DS);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_UpdateGlobalDataset(int id, int rank, FTIT_hsize_t *dimLength)
{
    (void)id, (void)rank, (void)dimLength;
    NOT_HONOURED("FTI_UpdateGlobalDataset", GLOBAL_DS);
    return FTI_NSCS;
}

FTI_EXPORT int FTI_UpdateSubset(int id, int rank, FTIT_hsize_t *offset, FTIT_hsize_t *count,
                                int did)
{
    (void)id, (void)rank, (void)offset, (void)count, (void)did;
    NOT_HONOURED("FTI_UpdateSubset", GLOBAL_DS);
    return FTI_NSCS;
}

/* ---- the Fortran module's C side (src/compat/fti/fti_mod.f90) ---- */

/* FTI_Init for Fortran: COMM is a Fortran handle, and gets FTI_COMM_WORLD's. */
FTI_EXPORT int FTI_Init_fort_wrapper(const char *configFile, MPI_Fint *comm)
{
    int rc = FTI_Init(configFile, MPI_Comm_f2c(*comm));
    if (rc == FTI_SCES || rc == FTI_NREC)
        *comm = MPI_Comm_c2f(FTI_COMM_WORLD);
    return rc;
}

/* FTI_SetAttribute for Fortran: NAME (NUL-terminated, or NULL) and/or NDIMS
 * dimensions COUNTS, as FLAG says. */
FTI_EXPORT int FTI_SetAttribute_fort_wrapper(int id, const char *name, int ndims,
                                             const int64_t *counts, int flag)
{
    FTIT_attribute a;
    memset(&a, 0, sizeof a);
    if (name)
        snprintf(a.name, sizeof a.name, "%s", name);
    if (ndims < 0 || ndims > 32 || (ndims > 0 && !counts))
        return FTI_NSCS;
    a.dim.ndims = ndims;
    for (int d = 0; d < ndims; d++)
        a.dim.count[d] = counts[d];
    return FTI_SetAttribute(id, a, (FTIT_attributeFlag)flag);
}
