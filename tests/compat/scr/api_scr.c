/*
 * api_scr.c - the SCR API's rules, one call at a time, as an SCR program
 * sees them (scr.h and MPI only). Run by run_scr.sh in a directory of its
 * own (SCR's prefix), twice:
 *
 *   api_scr first   before SCR_Init: SCR_Route_file gives the name back,
 *                   SCR_Config sets, queries and unsets; then calls out of
 *                   order fail on every rank; bad flags, names differing
 *                   between ranks and a checkpoint name too long for a label
 *                   are refused; an output-only dataset lands under its names
 *                   (two files of one dataset with the same last component
 *                   refused); one invalid on a rank leaves nothing; the
 *                   default-named checkpoint "scr.dataset.3" is stored; one
 *                   whose routed file was never written fails; the
 *                   unsupported calls fail; SCR_Finalize discards an open one.
 *   api_scr second  SCR_Have_restart names scr.dataset.3, its files restore
 *                   bit-exact, a file it does not hold does not route, and
 *                   after SCR_Complete_restart no restart is offered again.
 * Every check is agreed by all ranks; rank 0 prints "PASS mode" or "FAIL mode:
 * what" and the exit status is 0 only on PASS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi.h"
#include "scr.h"

static int rank, failed;
static char what[512];

/* Record check DESC: COND must hold on every rank. */
static void expect(int cond, const char *desc)
{
    int all = 0;
    MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all && !failed) {
        failed = 1;
        snprintf(what, sizeof what, "%s", desc);
    }
    if (!cond)
        printf("%d: check failed: %s\n", rank, desc);
}

static int put(const char *file, const char *text)
{
    FILE *f = fopen(file, "w");
    int ok = f && fputs(text, f) >= 0;
    return f && fclose(f) == 0 && ok;
}

static int holds(const char *file, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return f && strcmp(buf, text) == 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void first(void)
{
    char file[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME], text[64];
    expect(SCR_Route_file("a/b.txt", file) == SCR_SUCCESS && strcmp(file, "a/b.txt") == 0,
           "SCR_Route_file before SCR_Init gives the name back");
    const char *set = SCR_Config("SCR_CACHE_SIZE=3");
    expect(set && strcmp(set, "3") == 0, "SCR_Config sets, returning the value set");
    char *v = (char *)SCR_Config("SCR_CACHE_SIZE");
    expect(v && strcmp(v, "3") == 0, "SCR_Config queries what it set");
    free(v);
    SCR_Configf("SCR_CACHE_SIZE=%s", "");
    expect(SCR_Config("SCR_CACHE_SIZE") == NULL, "SCR_Configf(\"KEY=\") unsets");
    expect(SCR_Config("SCR_NO_SUCH_KEY=1") == NULL, "an unknown key is refused");
    expect(SCR_Init() == SCR_SUCCESS, "SCR_Init");
    expect(SCR_Init() == SCR_FAILURE, "a second SCR_Init fails");
    expect(SCR_Config("SCR_FLUSH=3") == NULL, "SCR_Config after SCR_Init sets nothing");

    expect(SCR_Complete_output(1) == SCR_FAILURE, "SCR_Complete_output outside a phase fails");
    expect(SCR_Complete_restart(1) == SCR_FAILURE, "SCR_Complete_restart outside a phase fails");
    expect(SCR_Start_restart(NULL) == SCR_FAILURE,
           "SCR_Start_restart without a restart offered fails");
    int flag = 0;
    expect(SCR_Need_checkpoint(&flag) == SCR_SUCCESS && flag == 1,
           "SCR_Need_checkpoint with no interval configured says 1");
    expect(SCR_Start_output("x", SCR_FLAG_NONE) == SCR_FAILURE, "SCR_FLAG_NONE is refused");
    expect(SCR_Start_output("x", 4) == SCR_FAILURE, "an unknown flag is refused");
    expect(SCR_Start_output(rank == 0 ? "a" : "b", SCR_FLAG_CHECKPOINT) == SCR_FAILURE,
           "names differing between ranks are refused on every rank");
    memset(name, 'n', 64);
    name[64] = '\0';
    expect(SCR_Start_output(name, SCR_FLAG_CHECKPOINT) == SCR_FAILURE,
           "a checkpoint name of 64 bytes is refused (a cairn label holds 63)");

    /* dataset 1: output only, a long name, files under their names */
    memset(name, 'o', 100);
    name[100] = '\0';
    expect(SCR_Start_output(name, SCR_FLAG_OUTPUT) == SCR_SUCCESS, "an output-only dataset");
    int flag2 = 0;
    expect(SCR_Have_restart(&flag2, NULL) == SCR_FAILURE, "SCR_Have_restart in an output phase");
    expect(SCR_Start_output("nested", SCR_FLAG_OUTPUT) == SCR_FAILURE, "a nested output phase");
    char same1[64], same2[64], again[SCR_MAX_FILENAME];
    snprintf(same1, sizeof same1, "d1/same.%d", rank);
    snprintf(same2, sizeof same2, "d2/same.%d", rank);
    snprintf(text, sizeof text, "output of rank %d\n", rank);
    expect(SCR_Route_file(same1, file) == SCR_SUCCESS && put(file, text), "route and write");
    expect(SCR_Route_file(same1, again) == SCR_SUCCESS && strcmp(file, again) == 0,
           "routing a name twice gives the same path");
    expect(SCR_Route_file(same2, again) == SCR_FAILURE,
           "a second file with the same last component is refused");
    expect(SCR_Complete_output(1) == SCR_SUCCESS, "SCR_Complete_output of the output");
    expect(holds(same1, text) && !exists(same2), "the output file is under its name");

    /* dataset 2: invalid on rank 1, nothing left */
    char bad[64];
    snprintf(bad, sizeof bad, "bad/r%d.txt", rank);
    expect(SCR_Start_output("bad-out", SCR_FLAG_OUTPUT) == SCR_SUCCESS, "a second output");
    expect(SCR_Route_file(bad, file) == SCR_SUCCESS && put(file, "x"), "route and write it");
    expect(SCR_Complete_output(rank != 1) == SCR_FAILURE,
           "valid 0 on rank 1: SCR_Complete_output fails on every rank");
    expect(!exists(bad) && !exists(file), "and none of its files is left");

    /* dataset 3: the default-named checkpoint */
    char state[64];
    snprintf(state, sizeof state, "ckpt/state.%d", rank);
    snprintf(text, sizeof text, "state of rank %d\n", rank);
    expect(SCR_Start_checkpoint() == SCR_SUCCESS, "SCR_Start_checkpoint");
    expect(SCR_Route_file(state, file) == SCR_SUCCESS && put(file, text), "route, write");
    expect(SCR_Complete_checkpoint(1) == SCR_SUCCESS, "SCR_Complete_checkpoint");

    /* dataset 4: a routed file never written */
    expect(SCR_Start_checkpoint() == SCR_SUCCESS, "another checkpoint");
    expect(SCR_Route_file("never-written", file) == SCR_SUCCESS, "route a file");
    expect(SCR_Complete_checkpoint(1) == SCR_FAILURE, "never written: the checkpoint fails");

    expect(SCR_Delete("scr.dataset.3") == SCR_FAILURE, "SCR_Delete is not supported");
    expect(SCR_Drop("scr.dataset.3") == SCR_FAILURE, "SCR_Drop is not supported");
    flag = 1;
    expect(SCR_Should_exit(&flag) == SCR_SUCCESS && flag == 0, "SCR_Should_exit says 0");
    expect(strncmp(SCR_Get_version(), "cairn-scr ", 10) == 0, "SCR_Get_version");

    /* dataset 5: left open; SCR_Finalize discards it */
    expect(SCR_Start_output("open", SCR_FLAG_CHECKPOINT) == SCR_SUCCESS, "an open checkpoint");
    expect(SCR_Route_file("open-file", file) == SCR_SUCCESS && put(file, "open"), "written");
    expect(SCR_Finalize() == SCR_SUCCESS, "SCR_Finalize inside an output phase");
    expect(!exists(file), "the open dataset's file is gone");
}

static void second(void)
{
    char file[SCR_MAX_FILENAME], name[SCR_MAX_FILENAME] = "", text[64], state[64];
    int flag = 0;
    expect(SCR_Init() == SCR_SUCCESS, "SCR_Init");
    expect(SCR_Have_restart(&flag, name) == SCR_SUCCESS && flag == 1 &&
               strcmp(name, "scr.dataset.3") == 0,
           "SCR_Have_restart names scr.dataset.3");
    memset(name, 0, sizeof name);
    expect(SCR_Start_restart(name) == SCR_SUCCESS && strcmp(name, "scr.dataset.3") == 0,
           "SCR_Start_restart loads it and names it");
    snprintf(state, sizeof state, "ckpt/state.%d", rank);
    snprintf(text, sizeof text, "state of rank %d\n", rank);
    expect(SCR_Route_file(state, file) == SCR_SUCCESS && holds(file, text),
           "its file routes to its restored copy, bit-exact");
    expect(SCR_Route_file("never-written", file) == SCR_FAILURE,
           "a file it does not hold does not route");
    expect(SCR_Complete_restart(1) == SCR_SUCCESS, "SCR_Complete_restart");
    expect(SCR_Have_restart(&flag, NULL) == SCR_SUCCESS && flag == 0,
           "after a restart no restart is offered again");
    expect(SCR_Finalize() == SCR_SUCCESS, "SCR_Finalize");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc == 2 ? argv[1] : "";
    if (strcmp(mode, "first") == 0)
        first();
    else if (strcmp(mode, "second") == 0)
        second();
    else
        failed = 1, snprintf(what, sizeof what, "usage: api_scr first|second");
    if (rank == 0) {
        if (failed)
            printf("FAIL %s: %s\n", mode, what);
        else
            printf("PASS %s\n", mode);
    }
    MPI_Finalize();
    return failed;
}
