/*
 * compat_dir.h - what the compatibility layers share (compat_dir.c): the
 * private directory SCR's cache and VeloC's scratch are, made when missing.
 * Compiled into each layer's library (hidden there), over no cairn internals.
 */
#ifndef CAIRN_COMPAT_DIR_H
#define CAIRN_COMPAT_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* SCR and VeloC create their directory; so do the layers: DIR (absolute), if
 * missing, each missing component mode 0700, then checked as cairn checks
 * its own directories (not a symlink, owned by this user, no group or other
 * access). A DIR that exists is left as it is (a shared base such as
 * /dev/shm); cairn_init checks what it makes below it. WHO and WHAT name it
 * in WHY ("SCR_Init", "cache directory"). true (*CREATED: it was made), or
 * false with WHY. */
bool compat_private_dir(const char *dir, const char *who, const char *what, bool *created,
                        char *why, size_t wlen);

#endif /* CAIRN_COMPAT_DIR_H */
