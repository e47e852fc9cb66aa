/* The per-axis rules of Upsample, computed where the kernels need them.
 *
 * The kernels compute each axis' source index, or its two taps and weights, from the axis'
 * description, per row (outer axes) or per work item (the row axis, into a bounded scratch
 * table), rather than read per-index tables as long as the output's axes. The arithmetic is the
 * operator's definition (docs/semantics.md, "nearest index" and "linear coordinate"),
 * operation for operation: float32 below 2**24, exact (integer or float64) from 2**24 on.
 * The slow reference (onnx_upsample/reference.py) derives the same rules on its own, and the
 * differential tests hold the two together.
 *
 * Indices are local to the input window the kernel reads (the whole input, or the slice a
 * chunk needs) and are clamped into it, so no description can make a kernel read outside
 * its input, whatever a caller passes.
 */
#ifndef ONNX_UPSAMPLE_AXIS_RULE_H
#define ONNX_UPSAMPLE_AXIS_RULE_H

#include <math.h>
#include <stdint.h>

#include "compiler.h"

typedef enum { AXIS_COPY = 0, AXIS_GATHER = 1, AXIS_BLEND = 2 } AxisKind;

/* Outer axes at most (the canonical form merges neighbouring copy axes, and rank is at
 * most 64 in numpy). */
#define MAX_OUTER 64
/* Most axes a linear call interpolates (2**k corners per output): the kernels' tables are
 * sized for it, and the argument checks refuse more (Python reads it as MAX_INTERP). */
#define MAX_INTERP 20
/* The taps of an interpolated axis: the input indices below and above the coordinate. */
#define AXIS_TAPS 2

/* Magnitudes below which float32 holds every integer: ORT's arithmetic is exact there. */
#define F32_EXACT_LIMIT ((int64_t)1 << 24)
/* The longest input axis a rule describes: float64 holds every index up to it, so every
 * coordinate computed in float64 (rule_linear, from 2**24 on) is exact there. */
#define MAX_AXIS_INPUT ((int64_t)1 << 53)

typedef struct {
    AxisKind kind;      /* AXIS_COPY (output o reads input o), AXIS_GATHER, AXIS_BLEND */
    int64_t n_out;      /* output positions in the window */
    int64_t in_len;     /* input positions in the window */
    int64_t n_in;       /* input length of the whole axis */
    int64_t out_first;  /* whole-axis index of the window's first output */
    int64_t in_first;   /* whole-axis index of the window's first input */
    int64_t stride;     /* input elements between neighbours (set by the kernel) */
    float scale;        /* the float32 scale, >= 1 */
    int64_t num, den;   /* scale == num / den exactly (den a power of two); num == 0 when
                         * the scale is an integer beyond int64 (every index is then 0) */
    /* The rule's results for every output index of a short outer axis, made once with the
     * kernel (axis_make_tables): a division per row costs more than a short row's copy. NULL
     * where the kernel computes them as it goes. Offsets are already multiplied by the
     * stride. */
    int64_t *lo_offsets, *hi_offsets;
    float *w_lo, *w_hi;
} AxisRule;

static inline int64_t rule_clamp_local(const AxisRule *a, int64_t global)
{
    int64_t local = global - a->in_first;
    return local < 0 ? 0 : local >= a->in_len ? a->in_len - 1 : local;
}

/* floor(g / scale) with no rounding, for g >= 0. With den > 1 the scale's numerator is below
 * 2**24 (a float32 >= 1 has 24 significant bits), so g = q*num + r keeps every product
 * inside int64. */
static inline int64_t rule_exact_floor(const AxisRule *a, int64_t g)
{
    if (a->den == 1)
        return a->num == 0 ? 0 : g / a->num;
    int64_t q = g / a->num, r = g % a->num;
    return q * a->den + (r * a->den) / a->num;
}

/* Nearest: the input index (local) that output o (local) reads. */
static inline int64_t rule_nearest(const AxisRule *a, int64_t o)
{
    if (a->kind == AXIS_COPY)
        return o;
    int64_t g = a->out_first + o, idx;
    if (a->scale == 1.0f)
        idx = g;
    else if (g < F32_EXACT_LIMIT)
        idx = (int64_t)((float)g / a->scale);
    else
        idx = rule_exact_floor(a, g);
    if (idx > a->n_in - 1)
        idx = a->n_in - 1;
    return rule_clamp_local(a, idx);
}

/* Linear: output o (local) blends input lo (weight *w_lo) and hi (weight *w_hi), local. */
static inline void rule_linear(const AxisRule *a, int64_t o, int64_t *lo, int64_t *hi,
                               float *w_lo, float *w_hi)
{
    if (a->kind != AXIS_BLEND) {
        *lo = *hi = rule_nearest(a, o);
        *w_lo = *w_hi = 1.0f;
        return;
    }
    int64_t g = a->out_first + o, top = a->n_in - 1, i1, i2;
    if (g < F32_EXACT_LIMIT) {
        float c = (float)g;
        if (a->scale != 1.0f)
            c = c / a->scale;
        float limit = (float)top;
        if (c > limit)
            c = limit;
        i1 = (int64_t)c;
        if (i1 > top)
            i1 = top;
        i2 = i1 + 1 > top ? top : i1 + 1;
        /* the distance to the other tap is this tap's weight */
        *w_hi = fabsf(c - (float)i1);
        *w_lo = fabsf(c - (float)i2);
    } else {
        /* float64 division of integers below 2**53 is the exact quotient, correctly rounded */
        double c = (double)g;
        if (a->scale != 1.0f)
            c = c / (double)a->scale;
        double limit = (double)top;
        if (c > limit)
            c = limit;
        i1 = (int64_t)c;
        if (i1 > top)
            i1 = top;
        i2 = i1 + 1 > top ? top : i1 + 1;
        *w_hi = (float)fabs(c - (double)i1);
        *w_lo = (float)fabs(c - (double)i2);
    }
    if (i1 == i2)
        *w_lo = *w_hi = 0.5f;
    *lo = rule_clamp_local(a, i1);
    *hi = rule_clamp_local(a, i2);
}

/* k when output o (local) reads input o / k on this axis for every o of the window (an
 * integer scale k >= 2, the window starting on a multiple of k, whole groups of k), else 0:
 * the kernels then repeat input elements instead of gathering them. */
int64_t rule_repeat(const AxisRule *a);

/* Make the rule's tables (lo_offsets...) of the short outer axes among axes[0, n_outer),
 * once per kernel; 0, or -1 where memory ran out (the tables made so far stay, for
 * axis_free_tables). */
int axis_make_tables(AxisRule *axes, int n_outer);

/* Free an axis' tables (none: nothing to do). */
void axis_free_tables(AxisRule *a);

/* Input offset (index times stride) that output o of a copied or gathered axis reads. */
static inline int64_t axis_offset(const AxisRule *a, int64_t o)
{
    return a->lo_offsets ? a->lo_offsets[o] : rule_nearest(a, o) * a->stride;
}

/* The two taps of output o of an outer axis, as input offsets, and their weights. */
static inline void axis_taps(const AxisRule *a, int64_t o, int64_t *lo, int64_t *hi,
                             float *w_lo, float *w_hi)
{
    if (a->lo_offsets) {
        *lo = a->lo_offsets[o];
        *hi = a->hi_offsets[o];
        *w_lo = a->w_lo[o];
        *w_hi = a->w_hi[o];
        return;
    }
    rule_linear(a, o, lo, hi, w_lo, w_hi);
    *lo *= a->stride;
    *hi *= a->stride;
}

#endif
