/*
 * veloc_config.h - VeloC's config file as the VeloC layer maps it onto cairn
 * settings (veloc_config.c), without MPI: the layer (veloc_layer.h includes
 * this) and the cairn CLI (`cairn ls --veloc FILE`, src/tools/cli_compat.c)
 * share it, so both find a job where the other put it.
 */
#ifndef VELOC_CONFIG_H
#define VELOC_CONFIG_H

#include <limits.h>
#include <stdbool.h>

#define VL_INI_MAX 16384             /* the generated cairn settings */

/* The VeloC config file, mapped (veloc_config.c). */
typedef struct vl_config {
    bool persistent;   /* persistent = given: level 4 is possible */
    bool ec;           /* erasure coding for some checkpoints (ec_interval >= 0) */
    long ec_interval;  /* seconds; 0 every checkpoint */
    long pfs_interval; /* seconds; 0 every checkpoint; < 0 never */
    char scratch[PATH_MAX]; /* VeloC's scratch when it is cairn's store.base: VELOC_Init
                               creates it if missing; "" otherwise */
    char ini[VL_INI_MAX]; /* the cairn INI text handed to cairn_init */
} vl_config;

/* Parse VeloC config file PATH into CFG; 0, or -1 after printing why (on
 * stderr, when RANK is 0). CFG->ini is what VELOC_Init hands cairn_init. */
int vl_config_load(const char *path, vl_config *cfg, int rank);

#endif /* VELOC_CONFIG_H */
