/* The per-axis rules' parts that run once per kernel or per work item (axis_rule.h): the
 * repeat factor of an axis, and the tables of short outer axes. */
#include "axis_rule.h"

#include <stdlib.h>

int64_t rule_repeat(const AxisRule *a)
{
    if (a->kind == AXIS_COPY || a->den != 1 || a->num < 2 || a->n_out % a->num
        || a->out_first % a->num || a->out_first / a->num != a->in_first
        || a->n_out / a->num > a->in_len || a->n_in > INT64_MAX / a->num
        || a->out_first + a->n_out > a->n_in * a->num)
        return 0;
    return a->num;
}

/* Outer axes whose lengths add up to at most this many get their rule's results made once,
 * with the kernel (8 bytes an entry for nearest, 24 for linear: at most 1.5 MiB); longer ones
 * are computed row by row, so that nothing grows with the output. */
#define OUTER_TABLE_ENTRIES ((int64_t)1 << 16)

/* One axis' tables; -1 where memory ran out. */
static int make_tables(AxisRule *a)
{
    const size_t n = (size_t)a->n_out;
    const int blend = a->kind == AXIS_BLEND;
    a->lo_offsets = (int64_t *)malloc(n * sizeof(int64_t));
    if (blend) {
        a->hi_offsets = (int64_t *)malloc(n * sizeof(int64_t));
        a->w_lo = (float *)malloc(n * sizeof(float));
        a->w_hi = (float *)malloc(n * sizeof(float));
    }
    if (a->lo_offsets == NULL
        || (blend && (a->hi_offsets == NULL || a->w_lo == NULL || a->w_hi == NULL)))
        return -1;
    for (int64_t o = 0; o < a->n_out; o++) {
        if (blend) {
            int64_t lo, hi;
            rule_linear(a, o, &lo, &hi, &a->w_lo[o], &a->w_hi[o]);
            a->lo_offsets[o] = lo * a->stride;
            a->hi_offsets[o] = hi * a->stride;
        } else {
            a->lo_offsets[o] = rule_nearest(a, o) * a->stride;
        }
    }
    return 0;
}

int axis_make_tables(AxisRule *axes, int n_outer)
{
    int64_t budget = OUTER_TABLE_ENTRIES;
    for (int i = 0; i < n_outer; i++) {
        if (axes[i].n_out > budget)
            continue;
        budget -= axes[i].n_out;
        if (make_tables(&axes[i]) != 0)
            return -1;
    }
    return 0;
}

void axis_free_tables(AxisRule *a)
{
    free(a->lo_offsets);
    free(a->hi_offsets);
    free(a->w_lo);
    free(a->w_hi);
    a->lo_offsets = a->hi_offsets = NULL;
    a->w_lo = a->w_hi = NULL;
}
