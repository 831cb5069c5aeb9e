/*
 * cli_json.c - the JSON documents of `--json` (docs/json.md), built with
 * jansson: a document's head (schema, schema_version), strings that may hold
 * any byte, and printing one document on stdout.
 *
 * jansson escapes quotes, backslashes and control characters; it refuses
 * bytes that are not UTF-8, so cli_json_bytes replaces each such byte with
 * U+FFFD and, when it had to, adds KEY_hex: every byte of the value in
 * lowercase hex, so a path is never lost. The caller owns what it builds;
 * cli_json_print frees the document.
 */
#include "tools/tools.h"

#include <stdlib.h>
#include <string.h>

json_t *cli_json_doc(const char *schema)
{
    json_t *d = json_object();
    if (!d) {
        cli_error(NULL, "out of memory");
        exit(CLI_EXIT_ERROR);
    }
    json_object_set_new(d, "schema", json_string(schema));
    json_object_set_new(d, "schema_version", json_integer(CLI_JSON_VERSION));
    return d;
}

/* Length of the valid UTF-8 sequence at S (N bytes left), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    unsigned cp = c & (0xff >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void cli_json_bytes(json_t *o, const char *key, const char *value)
{
    const unsigned char *s = (const unsigned char *)value;
    size_t n = strlen(value), at = 0, k = 0;
    char *clean = cli_alloc(3 * n + 1);
    bool replaced = false;
    while (at < n) {
        size_t len = utf8_len(s + at, n - at);
        if (len) {
            memcpy(clean + k, s + at, len);
            k += len, at += len;
        } else {
            memcpy(clean + k, "\xef\xbf\xbd", 3); /* U+FFFD */
            k += 3, at++;
            replaced = true;
        }
    }
    json_object_set_new(o, key, json_stringn(clean, k));
    free(clean);
    if (replaced) {
        char *hex = cli_alloc(2 * n + 1), hkey[64];
        for (size_t i = 0; i < n; i++)
            snprintf(hex + 2 * i, 3, "%02x", s[i]);
        snprintf(hkey, sizeof hkey, "%s_hex", key);
        json_object_set_new(o, hkey, json_string(hex));
        free(hex);
    }
}

json_t *cli_json_int_or_null(bool known, int64_t v)
{
    return known ? json_integer(v) : json_null();
}

int cli_json_print(json_t *doc)
{
    int rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0 || putchar('\n') == EOF || fflush(stdout) != 0) {
        cli_error(NULL, "could not write the JSON document");
        return CLI_EXIT_ERROR;
    }
    return CLI_EXIT_OK;
}
