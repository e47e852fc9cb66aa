/* Step 1 of a linear work item (linear.h): its segment of the row axis, positions [j0, j1),
 * and their taps, laid out once as flat per-element tables (an offset into an input row, a
 * float32 weight) for the corner rows and the sums to read. */
#ifndef ONNX_UPSAMPLE_LINEAR_TAPS_H
#define ONNX_UPSAMPLE_LINEAR_TAPS_H

#include <stddef.h>
#include <stdint.h>

#include "linear_job.h"
#include "linear_sum.h"

typedef struct {
    int64_t j0, j1;
    int64_t width;            /* elements: (j1 - j0) * block */
    int64_t stride;           /* elements from one tap's table to the next's: segment * block */
    int taps;                 /* row taps times block taps: 1, 2 or 4 (taps_per_element) */
    int64_t *off;             /* per tap: each element's offset into an input row */
    const float *weights[MAX_TAPS];  /* per tap: each element's float32 weight */
    uint32_t *last;           /* an identity block: all bits set where the element is in the
                               * last channel, else 0 (and LAST_MARK_PAD more, unused) */
    /* an integer scale k on the row axis (job->row_repeat, j0 a multiple of k): input rows
     * are expanded by repeating each position k times instead of a gather */
    int repeat;
    int64_t repeat_n;         /* with a repeat: the segment's input positions */
    size_t repeat_from;       /* with a repeat: the segment's first input byte in a row */
    size_t tap_offset;        /* elements from one tap's expanded row to the next's */
} Segment;

/* The scratch tables a segment's taps are laid out in. */
typedef struct {
    int64_t *off;
    float *weights;
    uint32_t *last;
} TapTables;

/* The segment's taps, into `tables`; the segment's j0 and j1 are set. */
void segment_taps(const LinearJob *job, const TapTables *tables, Segment *seg);

/* The end of the prefix of [0, width) over which every tap's weights repeat every `lanes`
 * elements (w[f] == w[f - lanes], bit for bit), for the vector sums. */
int64_t periodic_end(const Segment *seg, int64_t lanes);

#endif
