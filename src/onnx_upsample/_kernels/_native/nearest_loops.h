/* The nearest kernel's row loops that vector moves speed up, one table per instruction set
 * (nearest_loops.inc, built by isa_base.c and isa_avx2.c): the repeat by 2 of 1-, 2-, 4-
 * and 8-byte elements (one row, two rows, a plane) where the SIMD backend has 16-byte
 * moves, and with 32-byte moves (AVX2) also the gather of 4- and 8-byte positions by lane
 * permutes and the repeat by 2 of 3-byte pixels by byte shuffles. A loop the table lacks
 * (NULL) is done by the scalar loops of nearest_rows.c. The loops move bytes and compute
 * nothing, so every variant writes the same output.
 */
#ifndef ONNX_UPSAMPLE_NEAREST_LOOPS_H
#define ONNX_UPSAMPLE_NEAREST_LOOPS_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

/* x's n bytes (n >= 8, a multiple of unit), each `unit`-byte element twice, into a and,
 * when b is not NULL, into b as well (the next output row, reading the same input row). */
typedef void (*twice_fn)(const char *x, char *a, char *b, size_t n, int unit);

/* The shape of a plane's x2-by-x2 upsample (twice_plane_fn): input rows `step` bytes apart,
 * of n bytes each (n >= 8, elements of `unit` bytes), output rows `row` bytes apart. */
typedef struct {
    size_t step, row, n;
    int unit;
} PlaneShape;
/* `pairs` input rows from x: each element of a row twice into two output rows from out,
 * the next input row into the next two. */
typedef void (*twice_plane_fn)(const char *x, char *out, int64_t pairs, const PlaneShape *shape);

/* A gathered row of 4- or 8-byte positions (w bytes), 32 output bytes (a chunk) at a time:
 * chunk c's positions all read within the 32 input bytes from position start[c], and
 * dwords[8c .. 8c+7] say which 4-byte word of them each output word takes. */
typedef void (*chunks_fn)(const char *x, char *out, const int64_t *start,
                          const int32_t *dwords, int64_t chunks, size_t w);

/* n three-byte items (RGB pixels, n >= 16), each twice. */
typedef void (*rgb_twice_fn)(const char *x, char *out, int64_t n);

typedef struct {
    twice_fn twice;             /* NULL: the scalar loops */
    twice_plane_fn twice_plane;
    chunks_fn chunks;           /* NULL: gathers go through the table */
    rgb_twice_fn rgb_twice;
} NearestLoops;

extern const NearestLoops nearest_loops_base;
#if HAVE_AVX2_VARIANT
extern const NearestLoops nearest_loops_avx2;
#endif

static inline const NearestLoops *nearest_loops(Isa isa)
{
#if HAVE_AVX2_VARIANT
    if (isa == ISA_AVX2)
        return &nearest_loops_avx2;
#endif
    (void)isa;
    return &nearest_loops_base;
}

#endif
