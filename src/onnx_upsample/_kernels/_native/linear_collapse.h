/* Rows that fall on an input row: where an output row's outer weights on some interpolated
 * axes are 1 and +0 (every other row at x2), its sum may leave out the corners of weight +0
 * (linear_blend.h says when, and why no bit changes). This unit says which axes a row's
 * weights collapse, which corners and axes then remain, and how two rows of a pair whose
 * collapsing axes differ are summed together. It serves the vector sums, which take up to
 * MAX_VEC_AXES outer axes.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_COLLAPSE_H
#define ONNX_UPSAMPLE_LINEAR_COLLAPSE_H

#include <stdint.h>
#include <string.h>

#include "compiler.h"
#include "linear_job.h"
#include "linear_sum.h"

/* Sets of collapsing axes (bits) among MAX_VEC_AXES. */
#define COLLAPSE_SETS (1 << MAX_VEC_AXES)

/* How the two rows of a pair are summed, by their sets of collapsing axes (m1, m2): */
enum {
    PAIR_ALONE = -2,          /* each row summed alone */
    PAIR_EVERY = -1,          /* both sum every corner */
    /* k >= 0: the first leaves out the corners of kept axis k more than the second (rows
     * 2k and 2k + 1 at x2, the first on an input row; the second of two rows that read the
     * same input rows never falls on one unless the first does) */
};

typedef struct {
    /* per set of collapsing axes: the corners kept, in order, and the axes left */
    int8_t kept_corner[COLLAPSE_SETS][MAX_VEC_CORNERS];
    int8_t kept_axis[COLLAPSE_SETS][MAX_VEC_AXES];
    int8_t kept_count[COLLAPSE_SETS];
    /* per pair of sets (the first row's, the second's): PAIR_ALONE, PAIR_EVERY or k */
    int8_t pairing[COLLAPSE_SETS][COLLAPSE_SETS];
} CollapsePlan;

/* The plan for rows of n_interp outer axes (up to MAX_VEC_AXES; more: only set 0, every
 * corner); pairs nest only where the block is not an identity. */
void collapse_plan(int n_interp, int identity, CollapsePlan *plan);

/* Whether some interpolated outer axis often falls on an input row: among the first 64
 * positions of each axis, any for integer values; a quarter for float ones, whose rows must
 * then be checked plain. */
int axes_may_collapse(const LinearJob *job, int float_values);

/* Whether outer axis q of an output row whose corner weights are `factors` (corner_cache.h's
 * corner_factors) falls on an input row: weights 1 and +0 (compared as bits: +0, not -0). */
static inline int axis_collapses(const float *factors, int n_interp, int q)
{
    uint32_t lo, hi;
    memcpy(&lo, &factors[q], sizeof lo);
    memcpy(&hi, &factors[((size_t)1 << q) * (size_t)n_interp + (size_t)q], sizeof hi);
    return (hi == 0) & (lo == 0x3F800000u);
}

/* The outer axes of a row that fall on an input row (axis_collapses), as bits. */
ALWAYS_INLINE int collapse_mask_n(const float *factors, const int n_interp)
{
    int mask = 0;
    for (int q = 0; q < n_interp; q++)
        mask |= axis_collapses(factors, n_interp, q) << q;
    return mask;
}

/* The same for the counts of axes that collapse, unrolled. */
static inline int collapse_mask(const float *factors, int n_interp)
{
    switch (n_interp) {
    case 1: return collapse_mask_n(factors, 1);
    case 2: return collapse_mask_n(factors, 2);
    case 3: return collapse_mask_n(factors, 3);
    default: return collapse_mask_n(factors, n_interp);
    }
}

#endif
