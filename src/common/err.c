/*
 * err.c - error codes and messages.
 *
 * cairn_strerror() names both cairn's pinned codes (generated from
 * CAIRN_ERROR_LIST in cairn.h, so the table cannot drift) and -errno values.
 * cn_fail() records a code and a detailed message in a caller-owned cn_err;
 * nothing here allocates.
 */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

CAIRN_EXPORT const char *cairn_strerror(int rc)
{
    switch (rc) {
    case CAIRN_OK:
        return "success";
#define CN_X_CASE(name, value, msg)                                                               \
    case name:                                                                                    \
        return msg;
        CAIRN_ERROR_LIST(CN_X_CASE)
#undef CN_X_CASE
    default:
        break;
    }
    if (rc < 0 && rc > -4096)
        return strerror(-rc);
    return "unknown error";
}

void cn_err_clear(cn_err *err)
{
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

static int vfail(cn_err *err, int code, const char *suffix, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (suffix && n >= 0 && (size_t)n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", suffix);
    return code;
}

int cn_fail(cn_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, NULL, fmt, ap);
    va_end(ap);
    return code;
}

int cn_fail_errno(cn_err *err, int errno_value, const char *fmt, ...)
{
    int code = (errno_value == ENOSPC || errno_value == EDQUOT) ? CAIRN_ENOSPC
               : errno_value > 0                                 ? -errno_value
                                                                 : CAIRN_EIO;
    va_list ap;
    va_start(ap, fmt);
    vfail(err, code, strerror(errno_value), fmt, ap);
    va_end(ap);
    return code;
}

size_t cairn_type_size(cairn_type type)
{
    switch (type) {
    case CAIRN_BYTE:
    case CAIRN_INT8:
    case CAIRN_UINT8:
        return 1;
    case CAIRN_INT16:
    case CAIRN_UINT16:
        return 2;
    case CAIRN_INT32:
    case CAIRN_UINT32:
    case CAIRN_FLOAT:
        return 4;
    case CAIRN_INT64:
    case CAIRN_UINT64:
    case CAIRN_DOUBLE:
        return 8;
    }
    return 0;
}

const char *cn_type_name(int type)
{
    static const char *const names[] = {"byte",   "int8",  "uint8",  "int16", "uint16", "int32",
                                        "uint32", "int64", "uint64", "float", "double"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "unknown";
}

void cn_err_prefix(cn_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[CN_MSG_MAX], old[CN_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t pl = strnlen(prefix, sizeof prefix - 1);
    memcpy(err->msg, prefix, pl);
    size_t ol = strnlen(old, sizeof old - 1 - pl);
    memcpy(err->msg + pl, old, ol);
    err->msg[pl + ol] = '\0';
}
