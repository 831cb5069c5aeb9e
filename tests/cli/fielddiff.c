/*
 * fielddiff.c - compare two raw files of doubles (heat --out / --snap):
 * prints "MAXABS RANGE" where MAXABS is the largest |a - b| and RANGE is
 * max - min of the first file. Exit 0, or 2 if they cannot be compared.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        return NULL;
    long len = ftell(f);
    double *d = len > 0 && len % 8 == 0 ? malloc((size_t)len) : NULL;
    *n = d ? (size_t)len / 8 : 0;
    if (d && (fseek(f, 0, SEEK_SET) != 0 || fread(d, 8, *n, f) != *n)) {
        free(d);
        d = NULL;
    }
    fclose(f);
    return d;
}

int main(int argc, char **argv)
{
    size_t na = 0, nb = 0;
    double *a = argc == 3 ? load(argv[1], &na) : NULL, *b = a ? load(argv[2], &nb) : NULL;
    if (!a || !b || na != nb) {
        fprintf(stderr, "usage: fielddiff REF RUN (raw doubles of equal size)\n");
        return 2;
    }
    double lo = a[0], hi = a[0], diff = 0;
    for (size_t i = 0; i < na; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
        diff = fabs(a[i] - b[i]) > diff ? fabs(a[i] - b[i]) : diff;
    }
    printf("%.6e %.6e\n", diff, hi - lo);
    free(a);
    free(b);
    return 0;
}
