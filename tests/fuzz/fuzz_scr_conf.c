/*
 * fuzz_scr_conf.c - libFuzzer target for the SCR layer's configuration file
 * reader (src/compat/scr/scr_conffile.c, SCR's KEY=VALUE format, and
 * scr_conf.c, which checks each parameter and turns it into CAIRN_*
 * settings).
 *
 * Both files are compiled into this target (included below), as the layer
 * builds them but without MPI: they call none; the layer's messages go
 * nowhere (cscr_say and cscr_debug below). Each input is written to a file
 * and read as SCR_Init reads it (SCR_CONF_FILE names it; no SCR_* variable is
 * set). The layer must keep its contract, or the target aborts: a refusal
 * comes with a message; a configuration it accepts sets CAIRN_* variables
 * that cairn's own loader (cn_config_load) accepts, or a message says why
 * not. Every CAIRN_* variable is unset again after each input.
 */
#include <mpi.h> /* scr_impl.h names MPI_Comm; nothing here calls MPI */

#include "../../src/compat/scr/scr_conffile.c"
#include "../../src/compat/scr/scr_conf.c"
#include "../../src/compat/scr/scr_jobid.c"

#include "common/common.h"
#include "fuzz.h"

cscr_state cscr; /* the layer's state: never initialized here (phase NONE) */
void cscr_say(const char *fmt, ...) { (void)fmt; }
void cscr_debug(int level, const char *fmt, ...) { (void)level, (void)fmt; }

/* Unset every CAIRN_* and SCR_* variable either layer reads. */
static void clean_env(void)
{
    fuzz_unsetenv("CAIRN_");
    fuzz_unsetenv("SCR_");
    unsetenv("SLURM_JOB_ID");
}

/* Read the file at PATH as SCR_Init does, then cairn's settings. */
static int read_all(const char *path, cn_err *err)
{
    char why[1024] = "";
    cscr_conf conf;
    cn_config cfg;
    clean_env();
    setenv("SCR_CONF_FILE", path, 1);
    int rc;
    if (!cscr_conf_load(&conf, why, sizeof why)) {
        if (!why[0])
            abort(); /* a refusal without a message */
        rc = cn_fail(err, CAIRN_ECONFIG, "%s", why);
    } else {
        rc = cn_config_load(&cfg, NULL, err);
    }
    clean_env();
    return rc;
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    char path[128];
    if (fuzz_file("scr.conf", data, size, path, sizeof path) != 0)
        return cn_fail(err, CAIRN_EIO, "fuzz: cannot write the input to a file");
    return read_all(path, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    cn_err err = {0};
    if (fuzz_file("scr.conf", data, size, path, sizeof path) != 0)
        return 0;
    int rc = read_all(path, &err);
    if (rc != 0 && (err.code != rc || !err.msg[0]))
        abort();
    return 0;
}
