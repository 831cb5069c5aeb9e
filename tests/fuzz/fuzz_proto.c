/*
 * fuzz_proto.c - libFuzzer target for the daemon line protocol parsers
 * (cn_req_parse and cn_rep_parse in proto.c).
 *
 * Each input is one line without its '\n', tried as a request and as a
 * reply. A line that parses must format back to exactly the input bytes plus
 * the '\n' (the protocol is canonical), or the target aborts; a refused line
 * must come with CAIRN_EFORMAT and a message.
 */
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* RC and the formatted line OUT (N bytes) against the input. */
static void check(int rc, const cn_err *err, const char *out, int n, const uint8_t *data,
                  size_t size)
{
    if (rc == 0) {
        if (n < 1 || (size_t)n != size + 1 || memcmp(out, data, size) != 0 || out[size] != '\n' ||
            out[n] != '\0')
            abort();
    } else if (rc != CAIRN_EFORMAT || err->code != CAIRN_EFORMAT || !err->msg[0]) {
        abort();
    }
}

/* A line is valid if it parses as a request or as a reply; a refusal
 * carries both parsers' messages. */
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    cn_req q;
    cn_rep r;
    cn_err req = {0}, rep = {0};
    if (cn_req_parse((const char *)data, size, &q, &req) == 0 ||
        cn_rep_parse((const char *)data, size, &r, &rep) == 0)
        return 0;
    return cn_fail(err, CAIRN_EFORMAT, "request: %.500s; reply: %.500s", req.msg, rep.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    char out[CN_PROTO_LINE];
    cn_err err = {0};
    cn_req q;
    int rc = cn_req_parse(line, size, &q, &err);
    check(rc, &err, out, rc == 0 ? cn_req_format(&q, out) : 0, data, size);
    cn_rep r;
    cn_err_clear(&err);
    rc = cn_rep_parse(line, size, &r, &err);
    check(rc, &err, out, rc == 0 ? cn_rep_format(&r, out) : 0, data, size);
    return 0;
}
