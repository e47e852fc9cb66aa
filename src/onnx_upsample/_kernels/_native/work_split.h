/* How a kernel call's work is cut into pool items (both kernels): the output's rows split
 * into n_blocks ranges, each row's positions into n_segments segments of `segment`
 * positions; each (block, segment) pair is one item. */
#ifndef ONNX_UPSAMPLE_WORK_SPLIT_H
#define ONNX_UPSAMPLE_WORK_SPLIT_H

#include <stdint.h>

/* The first of `total` rows that block b of n_blocks starts at: rows split as evenly as
 * possible, with no product that could overflow (b * total could, for a caller's numbers). */
static inline int64_t block_start(int64_t b, int64_t total, int64_t n_blocks)
{
    int64_t share = total / n_blocks, extra = total % n_blocks;
    return b * share + (b < extra ? b : extra);
}

/* Item `item`'s rows [*r0, *r1) of `total` and segment index (item % n_segments). */
static inline int64_t item_rows(int64_t item, int64_t total, int64_t n_blocks,
                                int64_t n_segments, int64_t *r0, int64_t *r1)
{
    const int64_t b = item / n_segments;
    *r0 = block_start(b, total, n_blocks);
    *r1 = block_start(b + 1, total, n_blocks);
    return item % n_segments;
}

/* Segment s's positions [*j0, *j1) of a row of row_len; 0 where it is empty. */
static inline int segment_range(int64_t s, int64_t segment, int64_t row_len, int64_t *j0,
                                int64_t *j1)
{
    *j0 = s * segment;
    *j1 = *j0 + segment < row_len ? *j0 + segment : row_len;
    return *j0 < *j1;
}

#endif
