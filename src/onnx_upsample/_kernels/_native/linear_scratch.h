/* Step 0 of a linear work item (linear.h): one worker's scratch. Its layout, the one
 * formula of its size per segment element (bounded by describe_linear.c, used by Python to
 * size segments), and how many slots the corner cache (corner_cache.h) has and whether it
 * finds its rows by number.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_SCRATCH_H
#define ONNX_UPSAMPLE_LINEAR_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "linear_job.h"

/* Bytes after each cached row: the identity sums read an element's next channel there
 * (read, never used, past the row's last element). */
#define SLOT_PAD 64

/* Elements of the last-channel mark past a segment's width: the vector loops read the mark a
 * vector at a time. */
#define LAST_MARK_PAD 8

/* Bytes a worker's corner cache may take where it finds its rows by number (cache_slots),
 * beyond the scratch per element: counted per thread by _resources.py. */
#define DIRECT_CACHE_BYTES ((size_t)1 << 19)

/* Layout of one worker's scratch, for segments of the job's `segment` positions: each
 * table's offset, and the corner cache's shape. */
typedef struct {
    size_t off, weights, last, cache, acc, stage, keys, ages, plain, factors, factors2, total;
    size_t slots;             /* the corner cache's slots */
    size_t slot_bytes;        /* one slot: each tap's table of the segment, then SLOT_PAD */
    int direct;               /* rows found by number (cache_slots) */
    int64_t row_len;          /* direct: the elements of an input row (a row's number is its
                               * offset over row_len) */
} ScratchLayout;

ScratchLayout scratch_layout(const LinearJob *job);

/* Scratch bytes per segment element, beyond the direct cache (DIRECT_CACHE_BYTES). */
size_t linear_scratch_per_element(int taps, int n_interp, int acc_double, int stream);

#endif
