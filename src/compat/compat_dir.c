/*
 * compat_dir.c - the private directory a compatibility layer makes when
 * missing (SCR's cache, VeloC's scratch; compat_dir.h). Owns nothing past
 * the call: the descriptor it checks through is closed on return.
 */
#include "compat_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool compat_private_dir(const char *dir, const char *who, const char *what, bool *created,
                        char *why, size_t wlen)
{
    struct stat st;
    *created = false;
    if (!dir || !*dir || stat(dir, &st) == 0)
        return true;
    if (errno != ENOENT || dir[0] != '/' || strlen(dir) >= PATH_MAX) {
        snprintf(why, wlen, "%s: %s %.1000s: %s", who, what, dir,
                 dir[0] != '/' ? "not an absolute path" : strerror(errno));
        return false;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = strchr(path + 1, '/');; p = strchr(p + 1, '/')) {
        if (p)
            *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            snprintf(why, wlen, "%s: cannot create the %s %.1000s: %s", who, what, path,
                     strerror(errno));
            return false;
        }
        if (!p)
            break;
        *p = '/';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), e = errno;
    bool ok = fd >= 0 && fstat(fd, &st) == 0;
    if (!ok)
        snprintf(why, wlen, "%s: %s %.1000s: %s", who, what, dir,
                 lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) ? "a symlink; refusing to follow it"
                                                             : strerror(e));
    else if (st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(why, wlen, "%s: %s %.1000s is owned by uid %u with mode %03o; it must be this "
                 "user's (uid %u), mode 0700", who, what, dir, (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 0777), (unsigned)geteuid());
        ok = false;
    }
    *created = ok;
    if (fd >= 0)
        close(fd);
    return ok;
}
