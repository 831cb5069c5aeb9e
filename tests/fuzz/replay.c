/*
 * replay.c - run a libFuzzer target's LLVMFuzzerTestOneInput over saved
 * inputs without libFuzzer, so the test suite replays the corpus with any
 * compiler (and under the sanitizers in `make asan`).
 *
 *   replay_fuzz_ckpt DIR|FILE...     prints "replay: N inputs"
 *
 * Each input is read into a buffer of exactly its size, so an over-read is
 * seen by AddressSanitizer. A target that crashes or aborts fails the run;
 * an unreadable argument exits 2.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    if (rc == 0)
        LLVMFuzzerTestOneInput(buf, len);
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
    printf("replay: %ld inputs\n", count);
    return status;
}
