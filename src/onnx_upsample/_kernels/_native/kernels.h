/* The Upsample kernels on the canonical form built by onnx_upsample._kernels._layout.
 *
 * The output is `rows` x (`row_len` * `block`) elements. A row is one multi-index of the
 * outer axes; along it runs the row axis, and each row-axis position holds `block`
 * contiguous elements. Every axis is described by an AxisRule (axis_rule.h): the kernels
 * compute the input index (nearest) or taps (linear) an output index reads, per row for the
 * outer axes and per work item for the row axis, instead of reading tables as long as the
 * output's axes. `axes[0 .. n_outer-1]` are the outer axes, `axes[n_outer]` the row axis.
 * Work is split into n_blocks ranges of rows times n_segments ranges of the row axis; each
 * (block, segment) pair is one pool item.
 */
#ifndef ONNX_UPSAMPLE_KERNELS_H
#define ONNX_UPSAMPLE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "axis_rule.h"
#include "linear_types.h"

/* The first of `total` rows that block b of n_blocks starts at: rows split as evenly as
 * possible, with no product that could overflow (b * total could, for a caller's numbers). */
static inline int64_t block_start(int64_t b, int64_t total, int64_t n_blocks)
{
    int64_t share = total / n_blocks, extra = total % n_blocks;
    return b * share + (b < extra ? b : extra);
}

/* Outer axes at most (the canonical form merges neighbouring copy axes, and rank is at
 * most 64 in numpy). */
#define MAX_OUTER 64
/* Most axes a linear call interpolates (2**k corners per output): the kernels' tables are
 * sized for it, and the argument checks refuse more (Python reads it as MAX_INTERP). */
#define MAX_INTERP 20

enum { ROW_COPY = 0, ROW_REPEAT = 1, ROW_GATHER = 2 };

typedef struct {
    const char *x;            /* input, C-contiguous, in `unit`-byte words */
    char *out;
    int unit;                 /* 1, 2, 4 or 8 */
    int64_t rows, row_len, block;
    int n_outer;
    const AxisRule *axes;     /* n_outer + 1: the outer axes, then the row axis */
    int row_kind;
    int64_t repeat, n_blocks, n_segments, segment;
    int stream;               /* write with streaming stores (stream.h) */
    int isa;                  /* 0 baseline, 1 AVX2 (the vector row loops, nearest_isa.h) */
    void **scratch;           /* per worker, made on first use: the gathered row's positions,
                               * then the streaming buffer */
} NearestJob;

int nearest_item(void *job, int64_t item, int worker);

typedef struct {
    const char *x;
    char *out;                /* rows [row_base, row_base + out_rows) of the output, row
                               * positions [col_first, col_first + out_row_len) of each */
    int src, dst;             /* element type codes (linear_types.h) */
    int acc_double;           /* src accumulates in double (linear_types[src].acc_bytes) */
    const float *lut;         /* float32 value of each 16-bit pattern (T_HALF) */
    int64_t rows, row_len, block, row_base, out_rows, col_first, out_row_len;
    int64_t block_in;         /* input elements per row position */
    int n_outer, n_interp;
    const AxisRule *axes;     /* n_outer + 1: the outer axes, then the row axis */
    int row_blend;            /* the row axis interpolates (2 taps) */
    int64_t row_repeat;       /* k when the row's low tap of j is j / k (rule_repeat), else 0 */
    int block_blend;          /* the block holds a short interpolated axis (channels last) */
    const int64_t *blk_lo, *blk_hi;   /* input offsets inside a row position */
    const float *blk_w_lo, *blk_w_hi;
    /* d > 0 where the blended block is an identity (block_identity): then the row's taps are
     * read as for a copied block, and the sum adds each element's other channel tap itself */
    int64_t identity;
    int64_t n_blocks, n_segments, segment;
    int64_t segment_base;     /* the call's first segment (col_first / segment) */
    double low_bound, high_bound;     /* saturation of integer results */
    int isa;                  /* 0 baseline, 1 AVX2 */
    int stream;               /* write with streaming stores (stream.h) */
    void **scratch;           /* one buffer per worker, allocated on first use */
    size_t scratch_bytes;
} LinearJob;

/* d when a blended block's taps (block elements, block_in of them in the input) are an
 * identity: the whole of an axis at scale 1, times d parts per element (2 for complex
 * numbers, else 1). Element c < block - d blends itself (weight 1) and the next channel's
 * element c + d (weight 0); each of the last d blends itself twice (0.5 and 0.5). Else 0. */
static inline int64_t block_identity(const int64_t *lo, const int64_t *hi, const float *w_lo,
                                     const float *w_hi, int64_t block, int64_t block_in)
{
    int64_t d = 0;
    while (d < block && w_lo[block - 1 - d] == 0.5f)
        d++;
    if (d == 0 || block != block_in || block % d)
        return 0;
    for (int64_t c = 0; c < block; c++) {
        int last = c >= block - d;
        if (lo[c] != c || hi[c] != (last ? c : c + d) || w_lo[c] != (last ? 0.5f : 1.0f)
            || w_hi[c] != (last ? 0.5f : 0.0f))
            return 0;
    }
    return d;
}

int linear_item(void *job, int64_t item, int worker);
size_t linear_scratch_bytes(const LinearJob *job);
size_t linear_direct_cache_bytes(void);
size_t linear_scratch_per_element(int taps, int n_interp, int acc_double, int stream);

#endif
