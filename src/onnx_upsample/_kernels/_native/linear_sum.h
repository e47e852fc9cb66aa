/* The linear kernel's sums: one output row segment's weighted sum of its corner rows, one
 * table of loops per instruction set (linear_sum.inc, built by isa_base.c and isa_avx2.c):
 * the scalar loops for every accumulation type (float32 and float64), and where the sum is
 * float32 the vector loops (linear_vec.inc), several outputs at once. Every loop makes each
 * output's sum in the order of docs/semantics.md:
 *   acc[f] = sum over corners c (outer axes, innermost fastest), then taps t (row axis, then
 *            the block's axis fastest) of ((W[t][f] * F[c][0]) * F[c][1] ...) * E[c][t][f]
 * W is the float32 product of the row and block weights (innermost first), F[c][q] the
 * weight of outer interpolated axis q (innermost first) in corner c; the sum starts from the
 * first term and adds left to right, the running sum the first operand of every add (where
 * both are NaN, its payload is kept).
 *
 * An identity block (the channels of an (H, W, C) image, which ORT's rank-3 kernel
 * interpolates at scale 1: channel c blends c and c + `step` at weights 1 and +0, the last
 * channel itself twice at 0.5 and 0.5) is expanded like a copied block, one tap per element;
 * the sums add each element's other channel tap themselves (SumKind).
 */
#ifndef ONNX_UPSAMPLE_LINEAR_SUM_H
#define ONNX_UPSAMPLE_LINEAR_SUM_H

#include <stdint.h>

#include "compiler.h"
#include "cpu.h"

/* The most outer axes, corners and row taps the vector loops sum (more take the scalar
 * loops). */
#define MAX_VEC_AXES 3
#define MAX_VEC_CORNERS (1 << MAX_VEC_AXES)
#define MAX_VEC_TAPS 2
/* Taps of an output element: a row tap (1 or 2) times a block tap (1 or 2). */
#define MAX_TAPS 4

/* The terms of one row's sum, every corner and tap, for the scalar loops. */
typedef struct {
    int64_t width;            /* elements of the row segment */
    int n_interp, taps;       /* outer interpolated axes; taps (1, 2 or 4) */
    const float *const *W;    /* per tap: each element's weight */
    const float *F;           /* corner c's weight on outer axis q at F[c * n_interp + q] */
    void *const *E;           /* per term (corner, then tap): the expanded input row */
    /* an identity block (else NULL): all bits set where the element is in the last channel;
     * each term is followed by its other channel tap's, the element `step` on at weight +0
     * or, in the last channel, the same element at the same weight (ORT's every term) */
    const uint32_t *last;
    int64_t step;
} SumTerms;

/* `terms`' sums into `acc` (float32 or float64, the function's accumulation type). */
typedef void (*sum_fn)(const SumTerms *terms, void *acc);

/* How a vector sum treats an identity block (in this order: path_counts.h counts by it). */
typedef enum {
    SUM_PLAIN = 0,            /* no identity block */
    /* rows whose values are plain (linear_io.h): each term once, and in the last channel's
     * elements a second time; elsewhere the other channel tap (+0 times a finite value)
     * is left out, which changes no bit (linear_blend.h) */
    SUM_IDENTITY_FAST = 1,
    SUM_IDENTITY_EXACT = 2,   /* rows that are not plain: every term of ORT's sum */
    /* every product and partial sum exact (linear_blend.h, exact_sums): the last channel's
     * sum of its own terms, doubled, is the same value */
    SUM_IDENTITY_DOUBLED = 3,
} SumKind;
#define SUM_KINDS 4

/* One output row's float32 sum for the vector loops, or a pair of rows that read the same
 * corner rows. */
typedef struct {
    int64_t width;            /* elements of the row segment */
    int n_interp, taps;       /* outer interpolated axes summed (the kept ones); row taps */
    const float *const *W;    /* per tap: each element's weight */
    const float *F;           /* corner c's weight on outer axis q at F[c * n_full + q] */
    void *const *E;           /* per term (corner, then tap): the expanded input row */
    float *out;
    int stream;               /* out is the output: its whole cache lines are streamed */
    int64_t periodic_end;     /* W repeats every `lanes` elements, bit for bit, up to here */
    SumKind kind;
    const uint32_t *last;     /* an identity block: the last channel's elements (SumTerms) */
    int64_t step;             /* an identity block: elements from a channel to the next */
    /* 1: a pair of output rows, the second with its outer weights at F2 into out2 (kind
     * SUM_PLAIN, SUM_IDENTITY_FAST or SUM_IDENTITY_DOUBLED) */
    int pair;
    const float *F2;
    float *out2;
    /* the corners summed, where some outer axes fall on an input row (linear_blend.h,
     * collapse): n_interp of the row's n_full axes are interpolated, kept corner k is corner
     * corner_of[k] of E and F, its axis i axis axis_of[i] */
    int n_full;
    const int8_t *corner_of, *axis_of;
    /* -1, or for a pair (kind SUM_PLAIN): the first row also leaves out the corners of the
     * high tap of kept axis `nested`, where the second row does not */
    int nested;
    /* counts the sums that stream the lines they share from a buffer (stream_parts) */
    uint64_t *shared_lines;
} VecRow;

/* Whether a vector sum took a row. */
typedef enum { VEC_DECLINED = 0, VEC_SUMMED = 1 } VecResult;

/* The parts of a streamed row of `width` float32 outputs from `out`: the `head` outputs
 * before its first whole cache line, then `body` outputs of whole lines (a row without a
 * whole line of its own has body 0: it is stored the ordinary way). The vector sums stream
 * the parts either side of the body from a buffer (the lines the row shares with its
 * neighbours). */
static inline void stream_parts(const float *out, int64_t width, int64_t *head, int64_t *body)
{
    const int64_t line = CACHE_LINE_BYTES / (int64_t)sizeof(float);
    *head = (int64_t)(((CACHE_LINE_BYTES - ((uintptr_t)out % CACHE_LINE_BYTES))
                       % CACHE_LINE_BYTES) / sizeof(float));
    *head = *head < width ? *head : width;
    *body = (width - *head) / line * line;
}

/* The sums of one instruction set. */
typedef struct {
    sum_fn sum_float, sum_double;
    VecResult (*vec_sum_row)(const VecRow *row);
    int lanes;                /* its float32 lanes (0: no vector loops) */
} LinearSums;

extern const LinearSums linear_sums_base;
#if HAVE_AVX2_VARIANT
extern const LinearSums linear_sums_avx2;
#endif

static inline const LinearSums *linear_sums(Isa isa)
{
#if HAVE_AVX2_VARIANT
    if (isa == ISA_AVX2)
        return &linear_sums_avx2;
#endif
    (void)isa;
    return &linear_sums_base;
}

#endif
