/*
 * fuzz_config.c - libFuzzer target for cairn's configuration file reader
 * (cn_config_load in config.c: libinih through config.c's line reader, then
 * every key's checks and the rules between keys).
 *
 * Each input is written to a file and loaded as the INI file of a job with
 * no CAIRN_* variable set. The loader must keep its contract, or the target
 * aborts: 0, or a negative code with a message; and after a
 * refusal the caller sees the defaults, never a mix of defaults and values
 * read before the bad line. A file that loads must load again to the same
 * settings.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* No CAIRN_* variable may decide what the file says. */
static void clean_env(void)
{
    fuzz_unsetenv("CAIRN_");
}

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    char path[128];
    cn_config c;
    clean_env();
    if (fuzz_file("cairn.ini", data, size, path, sizeof path) != 0)
        return cn_fail(err, CAIRN_EIO, "fuzz: cannot write the input to a file");
    return cn_config_load(&c, path, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cn_config defaults;
    static int have_defaults;
    char path[128];
    cn_err err = {0};
    clean_env();
    if (!have_defaults) {
        if (cn_config_load(&defaults, NULL, &err) != 0)
            abort();
        have_defaults = 1;
    }
    if (fuzz_file("cairn.ini", data, size, path, sizeof path) != 0)
        return 0;
    cn_config *c = malloc(2 * sizeof *c); /* on the heap: AddressSanitizer sees its edges */
    if (!c)
        return 0;
    int rc = cn_config_load(&c[0], path, &err);
    if (rc == 0) {
        cn_err again = {0};
        if (cn_config_load(&c[1], path, &again) != 0 || memcmp(&c[0], &c[1], sizeof *c) != 0)
            abort();
    } else if (rc > 0 || err.code != rc || !err.msg[0] ||
               memcmp(&c[0], &defaults, sizeof defaults) != 0) {
        abort();
    }
    free(c);
    return 0;
}
