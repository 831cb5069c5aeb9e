/*
 * replay.c - run a libFuzzer target's LLVMFuzzerTestOneInput over saved
 * inputs without libFuzzer, so the test suite replays the corpus with any
 * compiler (and under the sanitizers in `make asan`).
 *
 *   replay_fuzz_ckpt DIR|FILE...     prints "replay: N inputs, J judged by name, M misjudged"
 *
 * Each input is read into a buffer of exactly its size, so an over-read is
 * seen by AddressSanitizer. A target that crashes or aborts fails the run;
 * an unreadable argument exits 2.
 *
 * Seed names. Besides being replayed, a seed whose file name starts with
 * "valid-" must be accepted by the target's parser (fuzz_parse, fuzz.h), and
 * one named "bad-WORD-WORD...[--NOTE]" must be refused with a message that
 * contains every WORD (case-insensitive; NOTE, after "--", only tells
 * variants apart): bad-magic must fail naming the magic, bad-table-checksum
 * with "table checksum mismatch", not at some earlier check. Every other
 * seed is only replayed. A failed expectation prints one line naming the
 * seed and the message, and the run exits 1. CAIRN_REPLAY_VERBOSE=1 prints
 * every judged seed's verdict.
 */
#include "fuzz.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Defined by targets that judge seeds (fuzz.h); NULL in the others. */
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err) __attribute__((weak));

static long judged, misjudged;

/* Does MSG contain WORD (LEN bytes), ignoring case? */
static bool has_word(const char *msg, const char *word, size_t len)
{
    for (; *msg; msg++) {
        size_t i = 0;
        while (i < len && msg[i] && tolower((unsigned char)msg[i]) == tolower((unsigned char)word[i]))
            i++;
        if (i == len)
            return true;
    }
    return false;
}

/* Check the verdict of fuzz_parse on seed NAME (its bytes BUF, LEN). */
static void judge(const char *name, const uint8_t *buf, size_t len)
{
    bool valid = strncmp(name, "valid-", 6) == 0, bad = strncmp(name, "bad-", 4) == 0;
    if (!valid && !bad)
        return;
    judged++;
    if (!fuzz_parse) {
        printf("replay: %s: this target has no fuzz_parse to judge it\n", name);
        misjudged++;
        return;
    }
    cn_err err = {0};
    int rc = fuzz_parse(buf, len, &err);
    if (valid && rc != 0) {
        printf("replay: %s: refused (%d): %s\n", name, rc, err.msg);
        misjudged++;
        return;
    }
    if (getenv("CAIRN_REPLAY_VERBOSE")) /* what each judged seed got */
        printf("replay: %s: %d %s\n", name, rc, err.msg);
    if (valid)
        return;
    if (rc == 0 || err.code != rc || !err.msg[0]) {
        printf("replay: %s: accepted (%d), expected a refusal with a message\n", name, rc);
        misjudged++;
        return;
    }
    const char *w = name + 4, *end = strstr(w, "--");
    end = end ? end : w + strlen(w);
    while (w < end) {
        const char *dash = memchr(w, '-', (size_t)(end - w));
        size_t n = (size_t)((dash ? dash : end) - w);
        if (n > 0 && !has_word(err.msg, w, n)) {
            printf("replay: %s: refused, but the message does not say '%.*s': %s\n", name,
                   (int)n, w, err.msg);
            misjudged++;
            return;
        }
        w += n + 1;
    }
}

/* Run the target on file PATH; returns 0, or -1 if it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        if (f)
            fclose(f);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    int rc = (buf && fread(buf, 1, len, f) == len) ? 0 : -1;
    fclose(f);
    if (rc == 0) {
        LLVMFuzzerTestOneInput(buf, len);
        const char *slash = strrchr(path, '/');
        judge(slash ? slash + 1 : path, buf, len);
    }
    free(buf);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every regular file in directory DIR (not recursive), in name order. */
static int replay_dir(const char *dir, long *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown)
                abort();
            names = grown;
        }
        size_t len = strlen(dir) + strlen(de->d_name) + 2;
        if (!(names[n] = malloc(len)))
            abort();
        snprintf(names[n++], len, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0) {
                fprintf(stderr, "replay: cannot read %s\n", names[i]);
                rc = -1;
            } else {
                (*count)++;
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
        return 2;
    }
    long count = 0;
    int status = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st = {0};
        int rc;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = replay_dir(argv[i], &count);
        else if ((rc = replay_file(argv[i])) == 0)
            count++;
        if (rc != 0) {
            fprintf(stderr, "replay: cannot read %s%s\n", argv[i],
                    S_ISDIR(st.st_mode) ? " (or a file in it)" : "");
            status = 2;
        }
    }
    printf("replay: %ld inputs, %ld judged by name, %ld misjudged\n", count, judged, misjudged);
    return status ? status : misjudged ? 1 : 0;
}
