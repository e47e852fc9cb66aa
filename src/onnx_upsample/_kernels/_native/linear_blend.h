/* Step 3 of a linear work item (linear.h): how its output rows are summed (linear_sum.h)
 * and written, one row at a time or in pairs of rows that read the same corner rows.
 *
 * Terms of weight +0, and why leaving them out changes no bit. Two ways of saving work
 * leave terms out of an output's sum: an identity block's other channel tap (weight +0 in
 * every channel but the last; SUM_IDENTITY_FAST), and the corners of weight +0 of a row that
 * falls on an input row along an outer axis (linear_collapse.h). Each term left out is +0
 * times a value; where the value is finite it is a zero of either sign, and adding a zero
 * changes no partial sum but a -0 one (to +0). Each output's sum keeps its term of the
 * largest weights (at least 0.5 on each axis: the two weights of an axis add up to 1),
 * whose weight is at least 2**-23 (at most MAX_INTERP outer axes, the row's and the block's,
 * each factor rounded). So where that term's value is plain (linear_io.h: finite, not -0,
 * +0 or of magnitude at least 2**-100) the term is +0 or of magnitude at least 2**-123, a
 * normal number: never -0. A partial sum that includes a term which is not -0 is never -0
 * (round-to-nearest gives -0 only for -0 + -0), so from that term on the partial sums are
 * the same with or without the zeros, and so is the output. Hence: integer values (never -0
 * or infinite) always, float values where every corner row of the output is plain, checked
 * as each row is expanded (corner_cache.h); rows that are not plain are summed with every
 * term.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_BLEND_H
#define ONNX_UPSAMPLE_LINEAR_BLEND_H

#include <stddef.h>
#include <stdint.h>

#include "linear_job.h"
#include "linear_collapse.h"
#include "linear_io.h"
#include "linear_sum.h"
#include "linear_taps.h"
#include "path_counts.h"

typedef struct {
    const LinearIo *io;
    const LinearSums *sums;
    const Segment *seg;
    int direct;               /* results are the accumulator type: summed into place */
    int vec;                  /* float32 sums by the vector loops */
    int float_values;         /* the sums' values may be infinite, NaN or -0 (float sources) */
    /* an identity block whose every product and partial sum is exact in float32 (small
     * integers, weights of few binary digits): any order of the additions gives ORT's value,
     * so the last channel's terms are summed once and the sum doubled
     * (SUM_IDENTITY_DOUBLED) */
    int exact_sums;
    /* rows that fall on an input row along some outer axes are summed without their corners
     * of weight +0 (linear_collapse.h), where their corner rows are plain or their values
     * integers: for the vector sums, 1 to MAX_VEC_AXES interpolated outer axes */
    int collapse;
    CollapsePlan plan;
    void *acc;                /* the accumulator row, for results that are converted (vec:
                               * two rows, the second for a pair's second row) */
    char *stage;              /* streaming stores: a converted row waiting to be streamed */
    void *const *corners;     /* each corner row's tap tables (corner_cache.h's corner_rows) */
    const float *factors, *factors2;  /* the outer weights of a row, and of a pair's second */
    size_t dst_size;
    /* for vec: the rows' sum, set once per item (blend_start); each row sets its output and
     * the kind of sum */
    VecRow row;
    /* what the vector sums made, counted with an increment before each call (taken back
     * where the call declines, which is rare) and added to the item's path counts at its
     * end (blend_finish): single rows by SumKind and whether they collapse, pairs (all of
     * pair_kind) by the sets of axes their rows collapse (m1, m2), and the sums that
     * streamed their shared lines (counted by the vector sums: VecRow.shared_lines) */
    uint32_t row_count[SUM_KINDS][2];
    uint32_t pair_count[COLLAPSE_SETS][COLLAPSE_SETS];
    uint64_t shared_lines;
    SumKind pair_kind;
    PathCounts *counts;       /* the item's */
} Blend;

/* The scratch a blend reads and writes: the accumulator and staging rows, and the tables the
 * corner rows are given in (corner_cache.h's corner_rows fills them for each row). */
typedef struct {
    void *acc;
    char *stage;
    void *const *corners;
    const float *factors, *factors2;
} BlendRows;

/* How the item's rows are summed. `checked_once`: the corner cache finds rows by number
 * (linear_scratch.h), so each input row is expanded, and checked, about once. */
void plan_blend(const LinearJob *job, const Segment *seg, const BlendRows *scratch,
                int checked_once, PathCounts *counts, Blend *blend);

/* One output row of the segment, at `out`, from the corner rows and the outer weights
 * `factors` (`plain`: every corner row is plain). */
void blend_row(const LinearJob *job, Blend *blend, const float *factors, int plain,
               char *out);

/* Add what the item's rows made to its path counts. */
void blend_finish(Blend *blend);

/* Two output rows that read the same corner rows, at `out` (outer weights `factors`) and
 * `out2` (`factors2`): the vector sums load each corner row's values once for both; each
 * row's sum is the one blend_row makes, in its order. */
void blend_pair(const LinearJob *job, Blend *blend, int plain, char *out, char *out2);

#endif
