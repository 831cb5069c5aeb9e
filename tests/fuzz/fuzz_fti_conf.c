/*
 * fuzz_fti_conf.c - libFuzzer target for the FTI layer's configuration file
 * reader (src/compat/fti/fti_conf.c: cfti_conf_read, the cairn settings
 * cfti_conf_ini makes of it, and cfti_conf_mark, which rewrites the file's
 * [restart] state).
 *
 * fti_conf.c is compiled into this target (included below), as the layer
 * builds it but without MPI: it calls none. Each input is written to a file
 * (config.fti) and read as FTI_Init reads it. The layer must keep its
 * contracts, or the target aborts: a refusal comes with a message naming the
 * file; a configuration it accepts gives cairn settings that cairn's own
 * loader (cn_config_load) accepts, or a message saying why not; and once
 * cfti_conf_mark has recorded a restart in the file, the file still reads,
 * now with that restart state, and the same cairn settings otherwise.
 */
#include "../../src/compat/fti/fti_conf.c"

#include "common/common.h"
#include "fuzz.h"

/* No CAIRN_* variable may decide what the settings say. */
static void clean_env(void)
{
    fuzz_unsetenv("CAIRN_");
}

/* Read PATH as FTI_Init does, then load the cairn settings made of it with
 * job id "fuzz" as cairn_init would. 0, or a negative code with ERR. */
static int read_all(const char *path, cfti_conf *c, char *ini, size_t ini_len, cn_err *err)
{
    char msg[CFTI_MSG_MAX] = "", ini_path[128];
    cn_config cfg;
    cfti_conf_defaults(c);
    if (cfti_conf_read(path, c, msg, sizeof msg) != 0 ||
        cfti_conf_ini(c, "fuzz", ini, ini_len, msg, sizeof msg) != 0) {
        if (!msg[0])
            abort(); /* a refusal without a message */
        return cn_fail(err, CAIRN_ECONFIG, "%s", msg);
    }
    if (fuzz_file("cairn.ini", (const uint8_t *)ini, strlen(ini), ini_path, sizeof ini_path) != 0)
        return cn_fail(err, CAIRN_EIO, "fuzz: cannot write the cairn settings to a file");
    return cn_config_load(&cfg, ini_path, err);
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    char path[128], ini[CFTI_INI_MAX];
    cfti_conf c;
    clean_env();
    if (fuzz_file("config.fti", data, size, path, sizeof path) != 0)
        return cn_fail(err, CAIRN_EIO, "fuzz: cannot write the input to a file");
    return read_all(path, &c, ini, sizeof ini, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], *ini = malloc(2 * CFTI_INI_MAX), msg[CFTI_MSG_MAX];
    cfti_conf *c = malloc(2 * sizeof *c);
    cn_err err = {0};
    clean_env();
    if (!ini || !c || fuzz_file("config.fti", data, size, path, sizeof path) != 0) {
        free(ini), free(c);
        return 0;
    }
    int rc = read_all(path, &c[0], ini, CFTI_INI_MAX, &err);
    if (rc != 0 && (err.code != rc || !err.msg[0]))
        abort();
    if (rc == 0) { /* record a restart, as FTI_Checkpoint does, and read the file again */
        if (cfti_conf_mark(path, 1, "fuzz-exec.1", msg, sizeof msg) != 0 ||
            read_all(path, &c[1], ini + CFTI_INI_MAX, CFTI_INI_MAX, &err) != 0 ||
            c[1].failure != 1 || strcmp(c[1].exec_id, "fuzz-exec.1") != 0)
            abort();
        c[1].failure = c[0].failure;
        memcpy(c[1].exec_id, c[0].exec_id, sizeof c[1].exec_id);
        if (memcmp(&c[0], &c[1], sizeof *c) != 0 || strcmp(ini, ini + CFTI_INI_MAX) != 0)
            abort();
    }
    free(ini), free(c);
    return 0;
}
