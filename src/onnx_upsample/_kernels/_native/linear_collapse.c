/* Rows that fall on an input row (linear_collapse.h). */
#include "linear_collapse.h"

/* Positions of each axis that axes_may_collapse looks at. */
#define COLLAPSE_SAMPLE 64

int axes_may_collapse(const LinearJob *job, int float_values)
{
    for (int axis = 0; axis < job->n_outer; axis++) {
        const AxisRule *a = &job->axes[axis];
        if (a->kind != AXIS_BLEND)
            continue;
        const int64_t n = a->n_out < COLLAPSE_SAMPLE ? a->n_out : COLLAPSE_SAMPLE;
        int64_t on_rows = 0;
        for (int64_t o = 0; o < n; o++) {
            int64_t lo, hi;
            float w[AXIS_TAPS];
            axis_taps(a, o, &lo, &hi, &w[0], &w[1]);
            on_rows += axis_collapses(w, 1, 0);
        }
        if (float_values ? 4 * on_rows >= n : on_rows > 0)
            return 1;
    }
    return 0;
}

/* The pairing of rows whose sets are m1 and m2 (CollapsePlan.pairing). */
static int pairing(int m1, int m2, int n, int identity)
{
    const int extra = m1 ^ m2, common = m1 & m2;
    if (extra && !(extra & (extra - 1)) && (m1 & extra) && !identity) {
        int k = 0; /* the extra axis's place among the kept axes */
        for (int q = 0; q < n; q++)
            k += !((common >> q) & 1) && (1 << q) < extra;
        return k;
    }
    return m1 == 0 && m2 == 0 ? PAIR_EVERY : PAIR_ALONE;
}

void collapse_plan(int n_interp, int identity, CollapsePlan *plan)
{
    /* set 0 (every corner) for every row the vector loops sum: up to MAX_VEC_AXES axes */
    const int n = n_interp <= MAX_VEC_AXES ? n_interp : 0;
    for (int mask = 0; mask < (1 << n); mask++) {
        int n_kept = 0;
        for (int q = 0; q < n; q++)
            if (!((mask >> q) & 1))
                plan->kept_axis[mask][n_kept++] = (int8_t)q;
        plan->kept_count[mask] = (int8_t)n_kept;
        /* the corners without a high tap on a collapsing axis, in order */
        int k = 0;
        for (int c = 0; c < (1 << n); c++)
            if (!(c & mask))
                plan->kept_corner[mask][k++] = (int8_t)c;
    }
    for (int m1 = 0; m1 < (1 << n); m1++)
        for (int m2 = 0; m2 < (1 << n); m2++)
            plan->pairing[m1][m2] = (int8_t)pairing(m1, m2, n, identity);
}
