/* The description of a linear kernel's call (LinearJob), which every step of its work items
 * reads (linear.h is the kernel; linear_taps.h, corner_cache.h and linear_blend.h its
 * steps). */
#ifndef ONNX_UPSAMPLE_LINEAR_JOB_H
#define ONNX_UPSAMPLE_LINEAR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "axis_rule.h"
#include "cpu.h"

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
    /* An identity block (the whole of an axis at scale 1, which ORT's rank-3 kernel
     * interpolates: an (H, W, C) image's channels; see linear_sum.h): the elements from one
     * channel to the next (2 for complex numbers, else 1); 0 for any other block. The row's
     * taps are then read as for a copied block, and the sums add each element's other
     * channel tap themselves. */
    int64_t identity_step;
    int64_t n_blocks, n_segments, segment;
    int64_t segment_base;     /* the call's first segment (col_first / segment) */
    double low_bound, high_bound;     /* saturation of integer results */
    Isa isa;                  /* the loops' instruction set (linear_io.h, linear_sum.h) */
    int stream;               /* write with streaming stores (stream.h) */
    void **scratch;           /* one buffer per worker, allocated on first use */
} LinearJob;

/* Taps per output element: the row axis' (1, or AXIS_TAPS where it interpolates) times the
 * block's (AXIS_TAPS where it interpolates, but for an identity block, read as copied). */
static inline int taps_per_element(const LinearJob *job)
{
    return (job->row_blend ? AXIS_TAPS : 1)
        * (job->block_blend && !job->identity_step ? AXIS_TAPS : 1);
}

#endif
