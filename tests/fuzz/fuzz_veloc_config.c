/*
 * fuzz_veloc_config.c - libFuzzer target for the VeloC layer's config file
 * reader (src/compat/veloc/veloc_config.c: vl_config_load and the cairn INI
 * text it builds).
 *
 * veloc_config.c is compiled into this target (included below), as the
 * layer builds it but without MPI: it calls none. Each input is written to a
 * file and read as VELOC_Init reads it, with no CAIRN_* variable set. The
 * layer must keep its contract, or the target aborts: a refusal comes with a
 * message naming the file and line (the layer prints it on rank 0's stderr:
 * fuzz_parse catches it there); a config it accepts gives an INI text that
 * cairn's own loader (cn_config_load) accepts, or a message says why not.
 */
#include "../../src/compat/veloc/veloc_config.c"

#include <fcntl.h>

#include "common/common.h"
#include "fuzz.h"

/* Read PATH as VELOC_Init does on rank RANK (rank 0 prints the refusal),
 * then load the INI text it made as cairn_init would. 0, or a negative code
 * with ERR (only the code when the layer refused: its message is on stderr). */
static int read_all(const char *path, int rank, cn_err *err)
{
    char ini_path[128];
    cn_config cfg;
    vl_config *c = malloc(sizeof *c);
    if (!c)
        return cn_fail(err, CAIRN_ENOMEM, "fuzz: out of memory");
    fuzz_unsetenv("CAIRN_");
    int rc = vl_config_load(path, c, rank) != 0 ? CAIRN_ECONFIG : 0;
    if (rc == 0 && fuzz_file("cairn.ini", (const uint8_t *)c->ini, strlen(c->ini), ini_path,
                             sizeof ini_path) != 0)
        rc = cn_fail(err, CAIRN_EIO, "fuzz: cannot write the cairn settings to a file");
    else if (rc == 0)
        rc = cn_config_load(&cfg, ini_path, err);
    free(c);
    return rc;
}

/* As read_all on rank 0, with the layer's refusal taken from its stderr. */
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    char path[128], said[128];
    if (fuzz_file("veloc.cfg", data, size, path, sizeof path) != 0 ||
        fuzz_file("stderr", (const uint8_t *)"", 0, said, sizeof said) != 0)
        return cn_fail(err, CAIRN_EIO, "fuzz: cannot write the input to a file");
    fflush(stderr);
    int keep = dup(2), to = open(said, O_WRONLY | O_APPEND);
    if (keep < 0 || to < 0 || dup2(to, 2) < 0)
        abort();
    close(to);
    int rc = read_all(path, 0, err);
    fflush(stderr);
    dup2(keep, 2);
    close(keep);
    if (rc == CAIRN_ECONFIG && err->code != rc) { /* the layer's own refusal */
        char msg[CN_MSG_MAX] = "";
        FILE *f = fopen(said, "r");
        size_t n = f ? fread(msg, 1, sizeof msg - 1, f) : 0;
        if (f)
            fclose(f);
        msg[n] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        if (!msg[0] || !strstr(msg, path))
            abort(); /* a refusal must say why, naming the file */
        cn_fail(err, rc, "%s", msg);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    cn_err err = {0};
    if (fuzz_file("veloc.cfg", data, size, path, sizeof path) != 0)
        return 0;
    /* rank 1: the layer's messages stay quiet, as on every rank but 0 */
    int rc = read_all(path, 1, &err);
    if (rc != 0 && rc != CAIRN_ECONFIG && (err.code != rc || !err.msg[0]))
        abort();
    return 0;
}
