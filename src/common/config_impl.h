/*
 * config_impl.h - what config.c (loading, checking, the reference) and
 * config_keys.c (the table of every setting) share: the shape of a row.
 * Internal to src/common.
 */
#ifndef CAIRN_CONFIG_IMPL_H
#define CAIRN_CONFIG_IMPL_H

#include "common/common.h"

#include <stddef.h>

enum kind { K_STR, K_INT, K_SIZE, K_ENUM, K_EVERY, K_DURATION };

typedef struct key_def {
    const char *section, *name, *env;
    enum kind kind;
    long long min, max;       /* K_INT, K_SIZE: inclusive range */
    const char *const *words; /* K_ENUM: NULL-terminated; a word's index is its value */
    const char *def;          /* default, as text */
    size_t off, size;         /* the field: char[size] (K_STR), uint32_t (K_SIZE), cn_interval
                               * (K_EVERY), double seconds (K_DURATION), else int */
    /* Rule beyond kind and range: NULL if text V / number N is fine, else the problem. */
    const char *(*check)(const char *v, long long n);
    const char *doc;
} key_def;

/* Every setting, one row each (config_keys.c). */
extern const key_def cn_config_keys[];
extern const size_t cn_config_nkeys;

#endif /* CAIRN_CONFIG_IMPL_H */
