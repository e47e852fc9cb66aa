/* The row loops of the nearest kernel, chosen by element size and instruction set: a row
 * segment repeated (an integer scale on the row axis), gathered through a table of input
 * positions, or gathered as 32-byte chunks (AVX2). The scalar loops are nearest_scalar.h's,
 * the vector ones nearest_isa.h's. Included once, by nearest.c.
 */
#ifndef ONNX_UPSAMPLE_NEAREST_ROWS_H
#define ONNX_UPSAMPLE_NEAREST_ROWS_H

#include "nearest_scalar.h"

/* Vector row loops (nearest_isa.h): the repeat by 2 in SSE2, the x86-64 baseline, and in
 * AVX2, which also has the chunked gather and the RGB repeat; chosen at run time like the
 * linear kernel's. */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_VECTOR_ROWS 1
#define ISA base
#define WIDE 0
#include "nearest_isa.h"
#undef WIDE
#undef ISA
#ifdef HAVE_AVX2_TARGET
#define HAVE_AVX2_ROWS 1
#include <immintrin.h>
AVX2_TARGET_BEGIN
#define ISA avx2
#define WIDE 1
#include "nearest_isa.h"
#undef WIDE
#undef ISA
AVX2_TARGET_END
#endif
#endif

typedef void (*twice_fn)(const char *restrict x, char *restrict a, char *restrict b,
                         size_t n, int unit);

typedef void (*twice_rows_fn)(const char *x, size_t step, char *out, size_t row,
                              int64_t pairs, size_t n, int unit);
typedef void (*chunks_fn)(const char *x, char *out, const int64_t *start,
                          const int32_t *dwords, int64_t chunks, size_t w);

typedef struct {
    twice_fn twice;         /* NULL: the scalar loops (no SSE2) */
    twice_rows_fn twice_rows;
    chunks_fn chunks;       /* NULL: gathers go through the table (no AVX2) */
    void (*rgb_twice)(const char *x, char *out, int64_t n); /* 3-byte items, n >= 16 */
} RowOps;

/* The vector row loops of the job's instruction set. */
static RowOps row_ops(int isa)
{
    RowOps ops = {NULL, NULL, NULL, NULL};
#ifdef HAVE_AVX2_ROWS
    if (isa == 1) {
        ops.twice = repeat_twice_avx2;
        ops.twice_rows = repeat_twice_rows_avx2;
        ops.chunks = gather_chunks_avx2;
        ops.rgb_twice = rgb_twice_avx2;
        return ops;
    }
#endif
    (void)isa;
#ifdef HAVE_VECTOR_ROWS
    ops.twice = repeat_twice_base;
    ops.twice_rows = repeat_twice_rows_base;
#endif
    return ops;
}

/* A segment's gather as 32-byte chunks (gather_chunks): chunk c makes positions
 * [c * per, c * per + per) from the input positions start[c] + dwords / (w / 4); a last
 * chunk, when the segment is not a whole number of them, ends on its last position. */
typedef struct {
    chunks_fn run;          /* NULL: gather through the table */
    int64_t *start;
    int32_t *dwords;
    int64_t per;            /* positions per chunk: 32 / w */
    size_t w;               /* bytes per position: 4 or 8 */
} ChunkPlan;

/* Scratch bytes of a plan for segments of up to `segment` positions. */
static size_t chunk_plan_bytes(int64_t segment)
{
    return ((size_t)(segment / 4 + 1) * (sizeof(int64_t) + 8 * sizeof(int32_t)) + 63) / 64 * 64;
}

/* Fill the plan for a segment of n positions reading `table` (input positions below
 * `limit`, the row's input length); 0 (and no plan) where some chunk's positions do not
 * fit in one 32-byte load (a scale >= 1 reads at most `per` inputs for `per` outputs: only
 * a rounding of the rule that skips an input could). */
static int plan_chunks(ChunkPlan *plan, const int64_t *table, int64_t n, int64_t limit)
{
    const int64_t per = plan->per, words = (int64_t)plan->w / 4;
    if (n < per || limit < per)
        return 0;
    for (int64_t c = 0; c * per < n; c++) {
        int64_t j = c * per < n - per ? c * per : n - per;
        int64_t first = table[j] < limit - per ? table[j] : limit - per;
        for (int64_t k = 0; k < per; k++) {
            int64_t t = table[j + k] - first;
            if (t < 0 || t >= per)
                return 0;
            for (int64_t d = 0; d < words; d++)
                plan->dwords[8 * c + k * words + d] = (int32_t)(t * words + d);
        }
        plan->start[c] = first;
    }
    return 1;
}

/* Two output rows `stride` bytes apart from one input row of n elements, each twice. */
static void repeat_two_rows(twice_fn twice, const char *x, char *out, size_t stride,
                            int64_t n, int unit)
{
    char *second = out + stride;
    if (twice && (size_t)n * (size_t)unit >= 8) {
        twice(x, out, second, (size_t)n * (size_t)unit, unit);
        return;
    }
    switch (unit) {
    case 1: repeat_two_rows_uint8_t(x, out, second, n); return;
    case 2: repeat_two_rows_uint16_t(x, out, second, n); return;
    case 4: repeat_two_rows_uint32_t(x, out, second, n); return;
    default: repeat_two_rows_uint64_t(x, out, second, n); return;
    }
}


static void repeat_row(const RowOps *ops, const char *x, char *out, int64_t n, int64_t k,
                       int64_t block, int unit)
{
    const int64_t size = block * unit; /* bytes of one position, repeated as one word */
    if (k == 2 && ops->twice && (size == 1 || size == 2 || size == 4 || size == 8)
        && n * size >= 8) {
        ops->twice(x, out, NULL, (size_t)(n * size), (int)size);
        return;
    }
    if (block == 1) {
        switch (unit) {
        case 1: repeat_uint8_t(x, out, n, k); return;
        case 2: repeat_uint16_t(x, out, n, k); return;
        case 4: repeat_uint32_t(x, out, n, k); return;
        default: repeat_uint64_t(x, out, n, k); return;
        }
    }
    size_t bytes = (size_t)(block * unit);
    switch (bytes) {
    case 2: repeat_block_2(x, out, n, k); return;
    case 3:
        if (k == 2 && ops->rgb_twice && n >= 16)
            ops->rgb_twice(x, out, n);
        else if (k == 2)
            repeat_rgb_twice(x, out, n);
        else
            repeat_block_3(x, out, n, k);
        return;
    case 4: repeat_block_4(x, out, n, k); return;
    case 6: repeat_block_6(x, out, n, k); return;
    case 8: repeat_block_8(x, out, n, k); return;
    case 12: repeat_block_12(x, out, n, k); return;
    case 16: repeat_block_16(x, out, n, k); return;
    default: break;
    }
    for (int64_t i = 0; i < n; i++) {
        const char *src = x + (size_t)i * bytes;
        char *dst = out + (size_t)(i * k) * bytes;
        for (int64_t t = 0; t < k; t++)
            memcpy(dst + (size_t)t * bytes, src, bytes);
    }
}

static void gather_row(const char *x, char *out, const int64_t *table, int64_t n,
                       int64_t block, int unit)
{
    if (block == 1) {
        switch (unit) {
        case 1: gather_uint8_t(x, out, table, n); return;
        case 2: gather_uint16_t(x, out, table, n); return;
        case 4: gather_uint32_t(x, out, table, n); return;
        default: gather_uint64_t(x, out, table, n); return;
        }
    }
    size_t bytes = (size_t)(block * unit);
    switch (bytes) {
    case 2: gather_block_2(x, out, table, n); return;
    case 3: gather_block_3(x, out, table, n); return;
    case 4: gather_block_4(x, out, table, n); return;
    case 6: gather_block_6(x, out, table, n); return;
    case 8: gather_block_8(x, out, table, n); return;
    case 12: gather_block_12(x, out, table, n); return;
    case 16: gather_block_16(x, out, table, n); return;
    default: break;
    }
    for (int64_t j = 0; j < n; j++)
        memcpy(out + (size_t)j * bytes, x + (size_t)table[j] * bytes, bytes);
}

/* Positions [p, q) of a segment of n (p a multiple of the plan's chunk) gathered from the
 * input row x into `out`: whole chunks by vector moves where the plan exists, the last one
 * overlapping the one before where the piece ends the segment, the rest through `table`. */
static void gather_piece(const ChunkPlan *plan, const char *x, char *out, const int64_t *table,
                         int64_t p, int64_t q, int64_t n, int64_t block, int unit)
{
    int64_t done = p;
    if (plan->run && q - p >= plan->per) {
        const int64_t per = plan->per, c0 = p / per, c1 = q / per;
        plan->run(x, out, plan->start + c0, plan->dwords + 8 * c0, c1 - c0, plan->w);
        done = c1 * per;
        if (done < q && q == n) {
            plan->run(x, out + (size_t)(n - per - p) * plan->w, plan->start + c1,
                      plan->dwords + 8 * c1, 1, plan->w);
            done = q;
        }
    }
    if (done < q)
        gather_row(x, out + (size_t)(done - p) * (size_t)(block * unit), table + done, q - done,
                   block, unit);
}

#endif
