/*
 * fuzz_layout.c - libFuzzer target for the layout record's parser
 * (cn_layout_find in src/common/layout.c), read back by a restart onto
 * another rank count from every stored rank file.
 *
 * A record that parses must re-encode to exactly the input bytes, and every
 * variable it names must be found with the same description, or the target
 * aborts. A refused record must say why (a negative code and a message).
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAX_VARS 64

int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    return cn_layout_find(data, size, NULL, NULL, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cn_err err = {0};
    if (cn_layout_find(data, size, NULL, NULL, &err) != 0) {
        if (err.code >= 0 || !err.msg[0])
            abort();
        return 0;
    }
    /* Valid: walk it again by hand to list the names, find each, re-encode. */
    uint32_t n = cn_get_u32(data + 4);
    if (n > MAX_VARS)
        return 0;
    char names[MAX_VARS][CAIRN_NAME_MAX + 1];
    const char *np[MAX_VARS];
    cn_block b[MAX_VARS];
    size_t at = 8;
    for (uint32_t i = 0; i < n; i++) {
        size_t nl = cn_get_u16(data + at);
        memcpy(names[i], data + at + 2, nl);
        names[i][nl] = '\0';
        np[i] = names[i];
        at += 2 + nl + 4 + 9 * 8;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0)
                return 0; /* a duplicate name: find gives the first */
    }
    for (uint32_t i = 0; i < n; i++)
        if (cn_layout_find(data, size, names[i], &b[i], &err) != 0)
            abort();
    uint8_t *out = NULL;
    size_t len = 0;
    if (cn_layout_encode(np, b, n, &out, &len, &err) != 0 || len != size ||
        memcmp(out, data, size) != 0)
        abort();
    free(out);
    return 0;
}
