/* The blend of a linear work item's rows (linear_blend.h). */
#include "linear_blend.h"

#include <string.h>

#include "compiler.h"
#include "linear_types.h"
#include "stream.h"

/* Weights' fraction digits beyond any rule's: no exact sum. */
#define NOT_A_WEIGHT 1000
/* float32's significant bits: every integer times 2**-J below 2**24 * 2**-J is exact. */
#define F32_DIGITS 24

/* The binary digits after the point of a float32 weight: w is a multiple of 2**-digits. */
static int fraction_digits(float w)
{
    uint32_t bits;
    memcpy(&bits, &w, sizeof bits);
    int exponent = (int)((bits >> 23) & 0xFF);
    uint32_t mantissa = bits & 0x7FFFFFu;
    if (exponent == 0 && mantissa == 0)
        return 0;
    if (exponent == 0xFF)
        return NOT_A_WEIGHT;
    if (exponent)
        mantissa |= 0x800000u;
    else
        exponent = 1;
    int zeros = 0;
    while (!(mantissa & 1u)) {
        mantissa >>= 1;
        zeros++;
    }
    int digits = 150 - exponent - zeros; /* w = mantissa * 2**(exponent - 150) */
    return digits > 0 ? digits : 0;
}

/* The most fraction digits among n weights. */
static int most_digits(const float *w, int64_t n)
{
    int most = 0;
    for (int64_t i = 0; i < n; i++) {
        int d = fraction_digits(w[i]);
        most = d > most ? d : most;
    }
    return most;
}

/* The most fraction digits of an interpolated outer axis's weights, or of its first ones
 * until `limit` is passed. */
static int axis_digits(const AxisRule *a, int limit)
{
    int most = 0;
    for (int64_t o = 0; o < a->n_out && most <= limit; o++) {
        int64_t lo, hi;
        float w_lo, w_hi;
        axis_taps(a, o, &lo, &hi, &w_lo, &w_hi);
        int d = fraction_digits(w_lo), e = fraction_digits(w_hi);
        most = d > most ? d : most;
        most = e > most ? e : most;
    }
    return most;
}

/* Whether every product and partial sum of the item's blends is exact in float32: inputs
 * of at most B = 8 or 16 bits (integers of magnitude up to 2**B), and term weights that are
 * multiples of 2**-J (J: the row taps' digits plus each interpolated outer axis's) with
 * B + J <= 24. Every term weight is then at most 1 and their sum at most 1 per axis, so each
 * product and partial sum is a multiple of 2**-J below 2**B in magnitude: an integer times
 * 2**-J below 2**24, which float32 holds. With every operation exact, ORT's sum in its order
 * is the exact value, whatever the order. Scales 2, 4, 8 on uint8 images qualify; 3 and 1.5
 * (weights of 1/3) do not. */
static int exact_sums(const LinearJob *job, const Segment *seg)
{
    int bits;
    switch (job->src) {
    case T_INT8: case T_UINT8: bits = 8; break;
    case T_INT16: case T_UINT16: bits = 16; break;
    default: return 0;
    }
    int digits = 0; /* each term has one row tap's weight */
    for (int t = 0; t < seg->taps; t++) {
        int d = most_digits(seg->weights[t], seg->width);
        digits = d > digits ? d : digits;
    }
    for (int axis = 0; axis < job->n_outer && bits + digits <= F32_DIGITS; axis++)
        if (job->axes[axis].kind == AXIS_BLEND)
            digits += axis_digits(&job->axes[axis], F32_DIGITS - bits - digits);
    return bits + digits <= F32_DIGITS;
}

/* The vector sum's fields that every output row of the item shares: its tables of weights
 * and of corner rows (their contents change row by row, not where they are). */
static void vec_row_start(const LinearJob *job, Blend *blend)
{
    const Segment *seg = blend->seg;
    const VecRow row = {
        .width = seg->width,
        .n_interp = job->n_interp,
        .taps = seg->taps,
        .W = seg->weights,
        .F = blend->factors,
        .E = blend->corners,
        .out = (float *)blend->acc,
        .stream = blend->direct && job->stream,
        .periodic_end = blend->vec ? periodic_end(seg, blend->sums->lanes) : 0,
        .kind = SUM_PLAIN,
        .last = seg->last,
        .step = job->identity_step,
        .pair = 0,
        .F2 = NULL,
        .out2 = NULL,
        .n_full = job->n_interp,
        .corner_of = blend->plan.kept_corner[0],
        .axis_of = blend->plan.kept_axis[0],
        .nested = -1,
        .shared_lines = &blend->shared_lines,
    };
    blend->row = row;
}

void plan_blend(const LinearJob *job, const Segment *seg, const BlendRows *scratch,
                int checked_once, PathCounts *counts, Blend *blend)
{
    blend->io = linear_io(job->isa);
    blend->sums = linear_sums(job->isa);
    blend->seg = seg;
    blend->counts = counts;
    blend->direct = (job->dst == T_FLOAT32 && !job->acc_double)
        || (job->dst == T_FLOAT64 && job->acc_double);
    /* float32 sums straight into a float32 output, or into the accumulator row */
    blend->vec = blend->sums->lanes > 0 && !job->acc_double && seg->taps <= MAX_VEC_TAPS
        && (!blend->direct || ((uintptr_t)job->out % sizeof(float)) == 0);
    blend->float_values = job->src == T_FLOAT32 || job->src == T_HALF;
    blend->exact_sums = blend->vec && job->identity_step && exact_sums(job, seg);
    /* float rows must be checked plain as they are expanded (corner_cache.h): where an
     * identity block checks them anyway, or where two or more collapsing axes save more
     * than the checks cost, each row checked once. With one axis a row's check costs about
     * what its rows save, and rows expanded again are checked again (the README's
     * instruction counts measure both) */
    const int check_pays = blend->float_values
        && (job->identity_step || (checked_once && job->n_interp >= 2));
    blend->collapse = blend->vec && job->n_interp >= 1 && job->n_interp <= MAX_VEC_AXES
        && (!blend->float_values || check_pays) && axes_may_collapse(job, blend->float_values);
    collapse_plan(job->n_interp, job->identity_step != 0, &blend->plan);
    blend->pair_kind = job->identity_step
        ? (blend->exact_sums ? SUM_IDENTITY_DOUBLED : SUM_IDENTITY_FAST) : SUM_PLAIN;
    memset(blend->row_count, 0, sizeof blend->row_count);
    memset(blend->pair_count, 0, sizeof blend->pair_count);
    blend->shared_lines = 0;
    blend->acc = scratch->acc;
    blend->stage = scratch->stage;
    blend->corners = scratch->corners;
    blend->factors = scratch->factors;
    blend->factors2 = scratch->factors2;
    blend->dst_size = linear_types[job->dst].bytes;
    if (blend->vec)
        vec_row_start(job, blend);
}

/* The kind of sum of an identity block's row (`plain`: its corner rows are). */
static inline SumKind identity_kind(const Blend *blend, int plain)
{
    if (plain || !blend->float_values)
        return blend->exact_sums ? SUM_IDENTITY_DOUBLED : SUM_IDENTITY_FAST;
    return SUM_IDENTITY_EXACT;
}

/* `n` rows the vector sums made as `kind`. */
static void count_vector_rows(PathCounts *counts, SumKind kind, uint64_t n)
{
    counts->n[PATH_VECTOR_SUMS] += n;
    if (kind != SUM_PLAIN)
        counts->n[PATH_OF_IDENTITY_KIND(kind)] += n;
}

void blend_finish(Blend *blend)
{
    PathCounts *counts = blend->counts;
    for (int kind = 0; kind < SUM_KINDS; kind++) {
        count_vector_rows(counts, (SumKind)kind,
                          blend->row_count[kind][0] + blend->row_count[kind][1]);
        counts->n[PATH_COLLAPSED_ROWS] += blend->row_count[kind][1];
    }
    for (int m1 = 0; m1 < COLLAPSE_SETS; m1++)
        for (int m2 = 0; m2 < COLLAPSE_SETS; m2++) {
            const uint64_t n = blend->pair_count[m1][m2];
            counts->n[PATH_ROW_PAIRS] += n;
            count_vector_rows(counts, blend->pair_kind, 2 * n);
            counts->n[PATH_COLLAPSED_ROWS] += (uint64_t)((m1 != 0) + (m2 != 0)) * n;
            counts->n[PATH_NESTED_PAIRS] += blend->plan.pairing[m1][m2] >= 0 ? n : 0;
        }
    counts->n[PATH_STREAMED_SHARED_LINES] += blend->shared_lines;
}

/* Results in the accumulator row `acc`, converted and written to `out` (through the stage
 * with streaming stores). */
static void store_row(const LinearJob *job, const Blend *blend, const void *acc, char *out)
{
    char *row_out = job->stream ? blend->stage : out;
    blend->io->store[job->src](acc, row_out, blend->seg->width, job->low_bound,
                               job->high_bound);
    if (job->stream)
        stream_copy(out, row_out, (size_t)blend->seg->width * blend->dst_size);
}

/* The row by the vector sums, where they take it; 0 where they declined. */
static int vec_row(const LinearJob *job, Blend *blend, const float *factors, int plain,
                   char *o)
{
    VecRow *row = &blend->row;
    row->F = factors; /* the second row of a pair blended alone has its own */
    if (blend->direct)
        row->out = (float *)(void *)o;
    if (job->identity_step)
        row->kind = identity_kind(blend, plain);
    /* every field a pair changes is set (none is restored after a call); without collapse
     * the corners' fields never change */
    row->pair = 0;
    uint32_t *count = &blend->row_count[row->kind][0];
    if (blend->collapse) {
        const int mask = plain || !blend->float_values
            ? collapse_mask(factors, job->n_interp) : 0;
        row->nested = -1;
        row->n_interp = mask ? blend->plan.kept_count[mask] : job->n_interp;
        row->corner_of = blend->plan.kept_corner[mask];
        row->axis_of = blend->plan.kept_axis[mask];
        count += mask != 0;
    }
    ++*count;
    if (blend->sums->vec_sum_row(row) == VEC_DECLINED) {
        --blend->row_count[row->kind][row->n_interp < row->n_full];
        return 0;
    }

    if (!blend->direct)
        store_row(job, blend, blend->acc, o);
    return 1;
}

/* The row by the scalar sums: every corner and tap. */
static void scalar_row(const LinearJob *job, const Blend *blend, const float *factors,
                       char *o)
{
    const Segment *seg = blend->seg;
    /* results summed straight into place, or with streaming stores into the scratch first */
    char *row_out = job->stream ? (blend->direct ? (char *)blend->acc : blend->stage) : o;
    void *into = blend->direct ? (void *)row_out : blend->acc;
    const int64_t d = job->identity_step;
    const SumTerms terms = {seg->width, job->n_interp, seg->taps, seg->weights, factors,
                            blend->corners, d ? seg->last : NULL, d};
    (job->acc_double ? blend->sums->sum_double : blend->sums->sum_float)(&terms, into);
    blend->counts->n[PATH_SCALAR_SUMS]++;
    blend->counts->n[PATH_IDENTITY_EXACT] += d != 0;
    if (!blend->direct)
        blend->io->store[job->src](blend->acc, row_out, seg->width, job->low_bound,
                                   job->high_bound);
    if (job->stream)
        stream_copy(o, row_out, (size_t)seg->width * blend->dst_size);
}

void blend_row(const LinearJob *job, Blend *blend, const float *factors, int plain,
               char *out)
{
    if (blend->vec && vec_row(job, blend, factors, plain, out))
        return;
    scalar_row(job, blend, factors, out);
}

/* The pair by the vector sums, where they take it as a pair; 0 where they declined.
 * `nested` and `common`: the pair's nested axis (-1: none) and the axes both rows collapse
 * (linear_collapse.h). */
static int vec_pair(const LinearJob *job, Blend *blend, char *out, char *out2, int nested,
                    int common, uint32_t *count)
{
    VecRow *row = &blend->row;
    float *acc2 = (float *)blend->acc + blend->seg->width;
    row->out = blend->direct ? (float *)(void *)out : (float *)blend->acc;
    row->out2 = blend->direct ? (float *)(void *)out2 : acc2;
    row->F = blend->factors;
    row->F2 = blend->factors2;
    row->kind = blend->pair_kind;
    /* every field a single row changes is set (none is restored after a call; without
     * collapse none changes); common is 0 but for nested pairs: every corner and axis */
    row->pair = 1;
    if (blend->collapse) {
        row->nested = nested;
        row->n_interp = common ? blend->plan.kept_count[common] : job->n_interp;
        row->corner_of = blend->plan.kept_corner[common];
        row->axis_of = blend->plan.kept_axis[common];
    }
    ++*count;
    if (blend->sums->vec_sum_row(row) == VEC_DECLINED) {
        --*count;
        if (!blend->direct)
            row->out = (float *)blend->acc;
        return 0;
    }

    if (!blend->direct) {
        store_row(job, blend, blend->acc, out);
        store_row(job, blend, acc2, out2);
    }
    return 1;
}

/* Where the vector loops do not take a pair (the identity block's exact sum, streamed rows
 * that lie differently in their cache lines, rows whose collapsing axes do not pair, rows
 * the vector loops do not take), each row is blended alone. */
void blend_pair(const LinearJob *job, Blend *blend, int plain, char *out, char *out2)
{
    const int exact = job->identity_step && !plain && blend->float_values;
    const int apart = blend->direct && blend->row.stream
        && ((uintptr_t)out % CACHE_LINE_BYTES) != ((uintptr_t)out2 % CACHE_LINE_BYTES);
    int nested = -1, common = 0, paired = 1;
    uint32_t *count = &blend->pair_count[0][0];
    if (blend->collapse && (plain || !blend->float_values)) {
        const int m1 = collapse_mask(blend->factors, job->n_interp);
        const int m2 = collapse_mask(blend->factors2, job->n_interp);
        const int pairing = blend->plan.pairing[m1][m2];
        common = m1 & m2;
        nested = pairing >= 0 ? pairing : -1;
        paired = pairing != PAIR_ALONE;
        count = &blend->pair_count[m1][m2];
    }
    if (!exact && !apart && paired && vec_pair(job, blend, out, out2, nested, common, count))
        return;
    blend_row(job, blend, blend->factors, plain, out);
    blend_row(job, blend, blend->factors2, plain, out2);
}
