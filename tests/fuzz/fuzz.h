/*
 * fuzz.h - what a fuzz target (tests/fuzz/fuzz_*.c) tells the corpus replay
 * (replay.c) besides LLVMFuzzerTestOneInput: its parser's verdict on a seed.
 *
 * A target whose corpus has seeds named valid-* or bad-* defines fuzz_parse:
 * run the real parser (and checker) over INPUT exactly as given, without the
 * resealing the fuzzing entry point may do, and return 0 if it is accepted,
 * else the parser's negative code with its message in ERR. The replay then
 * requires every valid-* seed to be accepted and every bad-* seed to be
 * refused for the reason its name gives (replay.c, "Seed names").
 * Targets with neither kind of seed need not define it.
 *
 * fuzz_file() is for parsers that read a named file (configuration readers):
 * it puts the input into a file of this process's own and gives its path;
 * fuzz_unsetenv() clears the environment variables such a reader also reads.
 */
#ifndef CAIRN_FUZZ_H
#define CAIRN_FUZZ_H

#include "common/common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err);

/* The directory fuzz_file writes in, made at first use (in /dev/shm, else
 * /tmp) and removed at exit with the files in it (fuzz_file makes no
 * subdirectory). "" if it cannot be made. */
static inline const char *fuzz_dir(void);
static inline void fuzz_dir_remove(void)
{
    const char *dir = fuzz_dir();
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(dir);
}
static inline const char *fuzz_dir(void)
{
    static char path[64];
    if (!path[0]) {
        snprintf(path, sizeof path, "/dev/shm/cairn-fuzz.XXXXXX");
        if (!mkdtemp(path)) {
            snprintf(path, sizeof path, "/tmp/cairn-fuzz.XXXXXX");
            if (!mkdtemp(path))
                return path[0] = '\0', "";
        }
        atexit(fuzz_dir_remove);
    }
    return path;
}

/* Write DATA (SIZE bytes) to the file NAME of fuzz_dir(), replacing it; its
 * path in PATH (LEN bytes). 0, or -1 (the input cannot be tried: skip it). */
static inline int fuzz_file(const char *name, const uint8_t *data, size_t size, char *path,
                            size_t len)
{
    const char *dir = fuzz_dir();
    if (!*dir || snprintf(path, len, "%s/%s", dir, name) >= (int)len)
        return -1;
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Unset every environment variable whose name starts with PREFIX ("CAIRN_"). */
static inline void fuzz_unsetenv(const char *prefix)
{
    extern char **environ;
    size_t n = strlen(prefix);
    for (char **e = environ; e && *e;) {
        char name[256];
        size_t len = strcspn(*e, "=");
        if (strncmp(*e, prefix, n) != 0 || len >= sizeof name) {
            e++;
            continue;
        }
        memcpy(name, *e, len);
        name[len] = '\0';
        unsetenv(name);
        e = environ; /* unsetenv may have moved the entries: start again */
    }
}

/* TRY(DATA) as given, then again with its last 8 bytes resealed as the XXH3-64
 * of all before (the records whose checksum ends them: manifests, PFS
 * indexes, delta and node records), so that the fuzzer reaches the fields
 * behind the checksum. The body of such a target's LLVMFuzzerTestOneInput. */
static inline int fuzz_resealed(const uint8_t *data, size_t size,
                                void (*try)(const uint8_t *, size_t))
{
    try(data, size);
    if (size < 8)
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    cn_put_u64(fixed + size - 8, cn_hash(fixed, size - 8));
    try(fixed, size);
    free(fixed);
    return 0;
}

#endif /* CAIRN_FUZZ_H */
