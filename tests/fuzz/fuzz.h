/*
 * fuzz.h - what a fuzz target (tests/fuzz/fuzz_*.c) tells the corpus replay
 * (replay.c) besides LLVMFuzzerTestOneInput: its parser's verdict on a seed.
 *
 * A target whose corpus has seeds named valid-* or bad-* defines fuzz_parse:
 * run the real parser (and checker) over INPUT exactly as given, without the
 * resealing the fuzzing entry point may do, and return 0 if it is accepted,
 * else the parser's negative code with its message in ERR. The replay then
 * requires every valid-* seed to be accepted and every bad-* seed to be
 * refused for the reason its name gives (replay.c, "Seed names").
 * Targets with neither kind of seed need not define it.
 */
#ifndef CAIRN_FUZZ_H
#define CAIRN_FUZZ_H

#include "common/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err);

#endif /* CAIRN_FUZZ_H */
