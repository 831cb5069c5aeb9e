/*
 * scr_conffile.c - SCR's configuration file format, read: one "KEY=VALUE"
 * per line, blanks around both ignored, '#' starts a comment, $NAME and
 * ${NAME} in a value replaced by the environment's value (empty if unset),
 * one pair of surrounding double quotes dropped. Multi-item lines (CKPT=,
 * STORE=, GROUPS= descriptors) are refused, naming the file and line; so is
 * a line that is not KEY=VALUE, and one longer than 4094 bytes (never read
 * as two lines). What the keys mean is scr_conf.c's: each
 * simple pair goes to the caller's function. Allocates nothing that
 * outlives a call but cscr_expand's result, which the caller frees.
 */
#include "scr_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Multi-item entries of SCR's files (descriptors): not supported. */
static const char *const DESCRIPTORS[] = {"CKPT", "STORE", "GROUPS", NULL};

int cscr_is_descriptor(const char *name, size_t len)
{
    for (int i = 0; DESCRIPTORS[i]; i++)
        if (strlen(DESCRIPTORS[i]) == len && strncmp(DESCRIPTORS[i], name, len) == 0)
            return 1;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

char *cscr_expand(const char *value)
{
    size_t n = strlen(value);
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
        value++, n -= 2;
    size_t cap = n + 1, len = 0;
    char *out = malloc(cap);
    for (size_t i = 0; out && i < n; i++) {
        const char *add = value + i;
        size_t addlen = 1;
        char var[256];
        if (value[i] == '$' && i + 1 < n) {
            int brace = value[i + 1] == '{';
            size_t j = i + 1 + (size_t)brace, k = j;
            while (k < n && (isalnum((unsigned char)value[k]) || value[k] == '_'))
                k++;
            if (k > j && k - j < sizeof var && (!brace || (k < n && value[k] == '}'))) {
                memcpy(var, value + j, k - j);
                var[k - j] = '\0';
                add = getenv(var) ? getenv(var) : "";
                addlen = strlen(add);
                i = k - 1 + (size_t)brace;
            }
        }
        if (len + addlen + 1 > cap) {
            char *bigger = realloc(out, cap = 2 * (len + addlen + 1));
            if (!bigger)
                free(out);
            out = bigger;
        }
        if (out)
            memcpy(out + len, add, addlen), len += addlen;
    }
    if (out)
        out[len] = '\0';
    return out;
}

int cscr_conffile_read(const char *path, cscr_kv_fn fn, void *arg, char *why, size_t wlen)
{
    FILE *fp = fopen(path, "re");
    if (!fp) {
        snprintf(why, wlen, "configuration file %s: %s", path, strerror(errno));
        return 0;
    }
    char line[4096];
    int ok = 1;
    for (int no = 1; ok && fgets(line, sizeof line, fp); no++) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && getc(fp) != EOF) {
            /* not split into two lines, the second read as a KEY=VALUE of its own */
            snprintf(why, wlen, "%s:%d: line longer than %zu bytes", path, no, sizeof line - 2);
            ok = 0;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(line), *eq = strchr(s, '=');
        if (!*s)
            continue;
        size_t klen = eq ? (size_t)(eq - s) : 0;
        while (klen && isspace((unsigned char)s[klen - 1]))
            klen--;
        if (!eq || !klen) {
            snprintf(why, wlen, "%s:%d: expected KEY=VALUE", path, no);
            ok = 0;
        } else if (cscr_is_descriptor(s, klen)) {
            snprintf(why, wlen, "%s:%d: %.*s descriptors are not supported by cairn-scr (one "
                     "redundancy scheme per job: SCR_COPY_TYPE, SCR_SET_SIZE, SCR_CACHE_BASE)",
                     path, no, (int)klen, s);
            ok = 0;
        } else {
            char *v = cscr_expand(trim(eq + 1));
            if (!v)
                snprintf(why, wlen, "%s:%d: out of memory", path, no);
            ok = v && fn(s, klen, v, path, no, arg, why, wlen);
            free(v);
        }
    }
    if (ok && ferror(fp)) {
        snprintf(why, wlen, "configuration file %s: read error", path);
        ok = 0;
    }
    fclose(fp);
    return ok;
}
