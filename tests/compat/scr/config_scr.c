/*
 * config_scr.c - SCR_Config and SCR_Configf as SCR's examples/test_config.c
 * uses them, before SCR_Init: "KEY=VALUE" sets and returns the value set
 * (owned by the library: not freed), spaces around the key and the value do
 * not count, "KEY" queries (a malloc'ed copy, the caller frees it; the
 * environment first), "KEY=" unsets (NULL), NULL and "" give NULL, a key SCR
 * does not let one set gives NULL, $VAR and ${VAR} are expanded. Then
 * SCR_Init takes what was set (SCR_COPY_TYPE=SINGLE: the test script checks
 * the checkpoint this program writes is at level 1), and after it nothing
 * can be set. Only MPI and scr.h. Prints "PASS config" and exits 0, or names
 * each failed expectation and exits 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi.h"
#include "scr.h"

static int failed, rank;

static void want(const char *what, const char *got, const char *expected)
{
    int ok = (!got && !expected) || (got && expected && strcmp(got, expected) == 0);
    if (!ok) {
        failed = 1;
        fprintf(stderr, "%d: %s: got '%s', expected '%s'\n", rank, what, got ? got : "(null)",
                expected ? expected : "(null)");
    }
}

static void set(const char *cfg, const char *expected) /* the returned value is not freed */
{
    want(cfg ? cfg : "(null)", SCR_Config(cfg), expected);
}

static void get(const char *cfg, const char *expected) /* the returned copy is freed */
{
    const char *v = SCR_Config(cfg);
    want(cfg ? cfg : "(null)", v, expected);
    free((void *)v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    set("SCR_DEBUG=1", "1"); /* spaces around the key and the value do not count */
    set("SCR_DEBUG =1", "1");
    set("SCR_DEBUG= 1", "1");
    set("SCR_DEBUG  = 1 ", "1");
    get("SCR_DEBUG", "1");
    set("SCR_DEBUG=0", "0");
    get(" SCR_DEBUG ", "0");
    set("SCR_CACHE_SIZE=4", "4");
    set("SCR_CACHE_SIZE=", NULL); /* unset */
    get("SCR_CACHE_SIZE", NULL);
    get("SCR_NO_SUCH_PARAMETER", NULL);
    get(NULL, NULL);
    get("", NULL);
    set("SCR_DB_NAME=dbname1", NULL); /* not a parameter one can set */
    setenv("SCR_HALT_SECONDS", "77", 1); /* the environment is read too */
    get("SCR_HALT_SECONDS", "77");
    unsetenv("SCR_HALT_SECONDS");
    setenv("CONFIG_SCR_A", "value a", 1);
    set("SCR_JOB_NAME=${CONFIG_SCR_A}:$CONFIG_SCR_A", "value a:value a");
    get("SCR_JOB_NAME", "value a:value a");
    char flush[32];
    snprintf(flush, sizeof flush, "%d", 7);
    want("SCR_Configf(\"SCR_FLUSH=%d\", 7)", SCR_Configf("SCR_FLUSH=%d", 7), flush);
    set("SCR_FLUSH=0", "0");
    set("SCR_COPY_TYPE =SINGLE", "SINGLE");

    if (SCR_Init() != SCR_SUCCESS) {
        printf("Failed initializing SCR\n");
        return 1;
    }
    set("SCR_COPY_TYPE=PARTNER", NULL); /* after SCR_Init nothing is set */
    get("SCR_COPY_TYPE", "SINGLE");     /* ... and queries still answer */

    char file[SCR_MAX_FILENAME], name[64];
    int ok = SCR_Start_output("cfg.1", SCR_FLAG_CHECKPOINT) == SCR_SUCCESS;
    snprintf(name, sizeof name, "cfg.1/rank_%d.dat", rank);
    ok = ok && SCR_Route_file(name, file) == SCR_SUCCESS;
    int fd = ok ? open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600) : -1;
    ok = fd >= 0 && write(fd, &rank, sizeof rank) == (ssize_t)sizeof rank;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (SCR_Complete_output(ok) != SCR_SUCCESS) {
        failed = 1;
        fprintf(stderr, "%d: the checkpoint cfg.1 failed\n", rank);
    }
    SCR_Finalize();
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !failed)
        printf("PASS config\n");
    MPI_Finalize();
    return failed;
}
