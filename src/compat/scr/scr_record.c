/*
 * scr_record.c - the bypass record of cairn-scr: what a checkpoint written
 * with SCR_CACHE_BYPASS=1 keeps in cairn. Its files are not in cairn (SCR's
 * bypass: they are written at their own paths in the prefix, and a file may
 * be shared by several ranks); each rank's record, a file of the generation
 * named CSCR_RECORD, lists them so that a restart finds and checks them.
 * No MPI here (the fuzz target fuzz_scr_record.c includes this file).
 *
 * Format, text, one entry a line after the header line:
 *     cairn-scr bypass 1
 *     <size> <xxh3-64, 16 hex digits> <absolute path>   checked by this rank
 *     - - <absolute path>                               checked by another rank
 * The rank that checks a file is the lowest rank that routed it; a shared
 * file is hashed once. Sizes are decimal, paths end at the newline, hold no
 * NUL and are shorter than SCR_MAX_FILENAME. Anything else is refused whole.
 * The caller owns the buffers; nothing here allocates but cscr_file_hash's
 * stack buffer.
 */
#include "scr_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define HEADER "cairn-scr bypass 1\n"

int cscr_file_hash(const char *path, long long *size, unsigned long long *hash)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return -e;
    }
    XXH3_state_t *s = XXH3_createState();
    if (!s || XXH3_64bits_reset(s) == XXH_ERROR) {
        XXH3_freeState(s);
        close(fd);
        return -ENOMEM;
    }
    static __thread char buf[1 << 16];
    long long n = 0;
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        XXH3_64bits_update(s, buf, (size_t)got);
        n += got;
    }
    int e = got < 0 ? errno : 0;
    close(fd);
    *size = n;
    *hash = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return -e;
}

int cscr_record_line(char *out, size_t len, const char *path, int owner, long long size,
                     unsigned long long hash)
{
    int n = owner ? snprintf(out, len, "%lld %016llx %s\n", size, hash, path)
                  : snprintf(out, len, "- - %s\n", path);
    return n > 0 && (size_t)n < len;
}

const char *cscr_record_header(void) { return HEADER; }

int cscr_record_parse(const char *buf, size_t len, cscr_record_fn fn, void *arg, char *why,
                      size_t wlen)
{
    size_t hl = strlen(HEADER);
    if (len < hl || memcmp(buf, HEADER, hl) != 0) {
        snprintf(why, wlen, "not a cairn-scr bypass record (its first line must be '%.*s')",
                 (int)hl - 1, HEADER);
        return 0;
    }
    int line = 2; /* the header is line 1 */
    for (size_t at = hl; at < len; line++) {
        const char *s = buf + at, *nl = memchr(s, '\n', len - at);
        if (!nl) {
            snprintf(why, wlen, "line %d: no newline at its end", line);
            return 0;
        }
        size_t n = (size_t)(nl - s);
        at += n + 1;
        char text[SCR_MAX_FILENAME + 64];
        if (n >= sizeof text || memchr(s, '\0', n)) {
            snprintf(why, wlen, "line %d: longer than %zu bytes or holds a NUL", line,
                     sizeof text - 1);
            return 0;
        }
        memcpy(text, s, n);
        text[n] = '\0';
        char *sp1 = strchr(text, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        if (!sp2) {
            snprintf(why, wlen, "line %d: expected '<size> <hash> <path>'", line);
            return 0;
        }
        *sp1 = *sp2 = '\0';
        const char *size_s = text, *hash_s = sp1 + 1, *path = sp2 + 1;
        int owner = strcmp(size_s, "-") != 0;
        long long size = -1;
        unsigned long long hash = 0;
        char *end = NULL;
        if (owner) {
            errno = 0;
            size = strtoll(size_s, &end, 10);
            int size_ok = *size_s >= '0' && *size_s <= '9' && !*end && !errno;
            errno = 0;
            hash = strtoull(hash_s, &end, 16);
            if (!size_ok || strlen(hash_s) != 16 || *end || errno || hash_s[0] == '-' ||
                hash_s[0] == '+') {
                snprintf(why, wlen, "line %d: size must be decimal and hash 16 hex digits",
                         line);
                return 0;
            }
        } else if (strcmp(hash_s, "-") != 0) {
            snprintf(why, wlen, "line %d: '- -' or '<size> <hash>' before the path", line);
            return 0;
        }
        if (path[0] != '/' || strlen(path) >= SCR_MAX_FILENAME) {
            snprintf(why, wlen, "line %d: the path must be absolute and shorter than %d bytes",
                     line, SCR_MAX_FILENAME);
            return 0;
        }
        if (!fn(path, owner, size, hash, arg, why, wlen))
            return 0;
    }
    return 1;
}
