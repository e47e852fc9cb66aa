/* Step 3 of a linear work item (see linear.c): how an item's output rows are summed and
 * written, one row at a time or in pairs of rows that read the same corner rows, and when
 * an identity block's sums may be made in another order (exact_sums). Included once, by
 * linear.c, after linear_cache.h.
 */

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
        return 1000; /* never from a rule; no exact sum */
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
    for (int axis = 0; axis < job->n_outer && bits + digits <= 24; axis++) {
        const AxisRule *a = &job->axes[axis];
        if (a->kind != AXIS_BLEND)
            continue;
        int most = 0;
        for (int64_t o = 0; o < a->n_out && bits + digits + most <= 24; o++) {
            int64_t lo, hi;
            float w_lo, w_hi;
            axis_taps(a, o, &lo, &hi, &w_lo, &w_hi);
            int d = fraction_digits(w_lo), e = fraction_digits(w_hi);
            most = d > most ? d : most;
            most = e > most ? e : most;
        }
        digits += most;
    }
    return bits + digits <= 24;
}

/* Whether outer axis q of an output row whose corner weights are `factors` (see
 * corner_factors) falls on an input row: weights 1 and +0, as every other row at x2 has
 * (compared as bits: +0, not -0). */
static inline int axis_collapses(const float *factors, int n_interp, int q)
{
    uint32_t lo, hi;
    memcpy(&lo, &factors[q], sizeof lo);
    memcpy(&hi, &factors[((size_t)1 << q) * (size_t)n_interp + (size_t)q], sizeof hi);
    return (hi == 0) & (lo == 0x3F800000u);
}

/* Whether some interpolated outer axis often falls on an input row (see Blend.collapse):
 * among the first 64 positions of each axis, any for integer values; a quarter for float
 * ones, whose rows must then be checked. */
static int axes_may_collapse(const LinearJob *job, int float_values)
{
    for (int axis = 0; axis < job->n_outer; axis++) {
        const AxisRule *a = &job->axes[axis];
        if (a->kind != AXIS_BLEND)
            continue;
        const int64_t n = a->n_out < 64 ? a->n_out : 64;
        int64_t on_rows = 0;
        for (int64_t o = 0; o < n; o++) {
            int64_t lo, hi;
            float w[2];
            axis_taps(a, o, &lo, &hi, &w[0], &w[1]);
            on_rows += axis_collapses(w, 1, 0);
        }
        if (float_values ? 4 * on_rows >= n : on_rows > 0)
            return 1;
    }
    return 0;
}

/* The outer axes of a row that fall on an input row (axis_collapses), as bits. */
static inline __attribute__((always_inline)) int collapse_mask_n(const float *factors,
                                                                 const int n_interp)
{
    int mask = 0;
    for (int q = 0; q < n_interp; q++)
        mask |= axis_collapses(factors, n_interp, q) << q;
    return mask;
}

/* The same for the counts of axes that collapse (Blend.collapse), unrolled. */
static inline int collapse_mask(const float *factors, int n_interp)
{
    switch (n_interp) {
    case 1: return collapse_mask_n(factors, 1);
    case 2: return collapse_mask_n(factors, 2);
    case 3: return collapse_mask_n(factors, 3);
    default: return collapse_mask_n(factors, n_interp);
    }
}

/* How two rows of a pair whose collapsing axes are m1 and m2 are summed (Blend.pairing). */
enum { PAIR_ALONE = -2, PAIR_EVERY = -1 };

/* Step 3: how an item's output rows are summed and written. */
typedef struct {
    int direct;               /* results are the accumulator type: summed into place */
    int vec;                  /* float32 sums by the vector loops (linear_vec.h) */
    int float_values;         /* the sums' values may be infinite, NaN or -0 (float sources) */
    /* an identity block whose every product and partial sum is exact in float32 (small
     * integers, weights of few binary digits: exact_sums): any order of the additions gives
     * ORT's value, so the last channel's terms are summed once and the sum doubled */
    int exact_sums;
    /* for vec, 1 to 3 interpolated outer axes: a row whose outer weights on some axes are
     * 1 and +0 (axis_collapses) is summed without the corners of weight +0, where its
     * corner rows are plain or its values integers. Each term left out is +0 times a finite
     * value, a zero of either sign: adding it changes no value but a zero's sign, and the
     * sum of the other terms is never -0 (its term of the largest weights, at least 0.5 per
     * axis, is +0 or of magnitude at least 2**-104 from a plain value, and a sum is -0 only
     * if every term is), so the sum is ORT's bit for bit; integers (never -0) lose the
     * zero's sign when converted. */
    int collapse;
    /* per set of collapsing axes (bits): the corners kept, in order, and the axes left */
    int8_t kept_corner[8][8], kept_axis[8][3], kept_count[8];
    /* for collapse, per pair of sets (the first row's, the second's): PAIR_EVERY, both sum
     * every corner; k >= 0, the first leaves out the corners of kept axis k more than the
     * second (ID 4 + k in linear_vec.h: rows 2k and 2k + 1 at x2, the first on an input
     * row; the second of two rows that read the same input rows never is unless the first
     * is); PAIR_ALONE, each row summed alone */
    int8_t pairing[8][8];
    int64_t periodic_end;     /* for vec: see periodic_end */
    void *acc;                /* the accumulator row, for results that are converted (vec:
                               * two rows, the second for a pair's second row) */
    char *stage;              /* streaming stores: a converted row waiting to be streamed */
    size_t dst_size;
    /* for vec: the rows' sum, set once per item (vec_row_init); each row sets its output
     * and the kind of identity sum */
    VecRow row;
} Blend;

/* `checked_once`: the corner cache finds rows by number (cache_slots in linear_scratch.h),
 * so each input row is expanded, and checked, about once. */
static void plan_blend(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                       void *acc, char *stage, int checked_once, Blend *blend)
{
    blend->direct = (job->dst == T_FLOAT32 && !job->acc_double)
        || (job->dst == T_FLOAT64 && job->acc_double);
    /* float32 sums straight into a float32 output, or into the accumulator row */
    blend->vec = ops->lanes > 0 && !job->acc_double && seg->taps <= 2
        && (!blend->direct || ((uintptr_t)job->out & 3) == 0);
    blend->float_values = job->src == T_FLOAT32 || job->src == T_HALF;
    blend->exact_sums = blend->vec && job->identity && exact_sums(job, seg);
    /* float rows must be checked plain as they are expanded (linear_cache.h): where an
     * identity block checks them anyway, or where two or more collapsing axes save more
     * than the checks cost, each row checked once (trilinear x2 float32: 6.3 -> 5.0
     * instructions per output). With one axis a row's check costs about what its rows
     * save (an image x2: 2.51 -> 2.56), and rows expanded again are checked again (a batch
     * and a height at x2, searched: 9.08 -> 9.48). */
    const int check_pays = blend->float_values
        && (job->identity || (checked_once && job->n_interp >= 2));
    blend->collapse = blend->vec && job->n_interp >= 1 && job->n_interp <= 3
        && seg->taps <= 2 && (!blend->float_values || check_pays)
        && axes_may_collapse(job, blend->float_values);
    /* mask 0 (every corner) for every row the vector loops sum: up to 3 axes */
    const int n = job->n_interp <= 3 ? job->n_interp : 0;
    for (int mask = 0; mask < (1 << n); mask++) {
        int n_kept = 0;
        for (int q = 0; q < n; q++)
            if (!((mask >> q) & 1))
                blend->kept_axis[mask][n_kept++] = (int8_t)q;
        blend->kept_count[mask] = (int8_t)n_kept;
        /* the corners without a high tap on a collapsing axis, in order */
        int k = 0;
        for (int c = 0; c < (1 << n); c++)
            if (!(c & mask))
                blend->kept_corner[mask][k++] = (int8_t)c;
    }
    for (int m1 = 0; m1 < (1 << n); m1++)
        for (int m2 = 0; m2 < (1 << n); m2++) {
            const int extra = m1 ^ m2, common = m1 & m2;
            int pairing = m1 == 0 && m2 == 0 ? PAIR_EVERY : PAIR_ALONE;
            if (extra && !(extra & (extra - 1)) && (m1 & extra) && !job->identity) {
                pairing = 0; /* the extra axis's place among the kept axes */
                for (int q = 0; q < n; q++)
                    pairing += !((common >> q) & 1) && (1 << q) < extra;
            }
            blend->pairing[m1][m2] = (int8_t)pairing;
        }
    blend->periodic_end = blend->vec ? periodic_end(seg->weights, seg->taps, seg->width,
                                                    ops->lanes) : 0;
    blend->acc = acc;
    blend->stage = stage;
    blend->dst_size = linear_types[job->dst].bytes;
}

/* The vector sum's fields that every output row of the item shares: its tables of weights
 * (W, F) and of corner rows (E) stay where they are, their contents change row by row. */
static void vec_row_init(const LinearJob *job, const Segment *seg, Blend *blend,
                         const float *factors, void *const *corners)
{
    VecRow row = {seg->width, job->n_interp, seg->taps, seg->weights, factors, corners,
                  (float *)blend->acc, blend->direct && job->stream, blend->periodic_end, 0,
                  (const float *)(const void *)seg->last, job->identity, 0, NULL, NULL,
                  job->n_interp, blend->kept_corner[0], blend->kept_axis[0], -1};
    blend->row = row;
}

/* One output row `o` of the segment from its corner rows and their outer weights (`plain`:
 * see linear_cache.h). Float results are summed straight into the output row, others into
 * the accumulator and converted; with streaming stores both are assembled in the scratch
 * first and then streamed (the vector sums stream float32 results from the registers), so
 * the output is never read; only a float32 row without a whole cache line of its own takes
 * ordinary stores (vec_sum_row). */
static inline __attribute__((always_inline)) void blend_row(
    const LinearJob *job, const LinearOps *ops, const Segment *seg, Blend *blend,
    const float *factors, void *const *corners, int plain, char *o)
{
    const int64_t width = seg->width;
    const int64_t d = job->identity;
    char *row_out = job->stream ? (blend->direct ? (char *)blend->acc : blend->stage) : o;
    void *into = blend->direct ? (void *)row_out : blend->acc;
    if (blend->vec) {
        VecRow *row = &blend->row;
        row->F = factors; /* the second row of a pair blended alone has its own */
        if (blend->direct)
            row->out = (float *)(void *)o;
        if (d)
            row->identity = plain || !blend->float_values ? (blend->exact_sums ? 3 : 1) : 2;
        /* every field a pair changes is set (none is restored after a call); without
         * collapse the corners' fields never change */
        row->pair = 0;
        if (blend->collapse) {
            const int mask = plain || !blend->float_values
                ? collapse_mask(factors, job->n_interp) : 0;
            row->nested = -1;
            row->n_interp = mask ? blend->kept_count[mask] : job->n_interp;
            row->corner_of = blend->kept_corner[mask];
            row->axis_of = blend->kept_axis[mask];
        }
        const int done = ops->vec_sum_row(row);
        if (done) {
            if (blend->direct)
                return;
            ops->store[job->src](blend->acc, row_out, width, job->low_bound, job->high_bound);
            if (job->stream)
                stream_copy(o, row_out, (size_t)width * blend->dst_size);
            return;
        }
    }
    const uint32_t *last = d ? seg->last : NULL;
    if (job->acc_double)
        ops->sum_double(width, job->n_interp, seg->taps, seg->weights, factors, corners, into,
                        last, d);
    else
        ops->sum_float(width, job->n_interp, seg->taps, seg->weights, factors, corners, into,
                       last, d);
    if (!blend->direct)
        ops->store[job->src](blend->acc, row_out, width, job->low_bound, job->high_bound);
    if (job->stream)
        stream_copy(o, row_out, (size_t)width * blend->dst_size);
}

/* blend_row, called: for the rows of a pair blended alone (the row loop has its own copy) */
static __attribute__((noinline)) void blend_row_alone(const LinearJob *job,
                                                      const LinearOps *ops, const Segment *seg,
                                                      Blend *blend, const float *factors,
                                                      void *const *corners, int plain, char *o)
{
    blend_row(job, ops, seg, blend, factors, corners, plain, o);
}

/* Two output rows, `o` and `o2`, that read the same corner rows (`factors` and `factors2`
 * their outer weights): the vector sums load each corner row's values once for both. Each
 * row's sum is the one blend_row makes, in its order; where the vector loops do not take
 * a pair (the identity block's exact sum, streamed rows that lie differently in their
 * cache lines, rows the vector loops do not take), each row is blended alone. */
static void blend_pair(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                       Blend *blend, const float *factors, const float *factors2,
                       void *const *corners, int plain, char *o, char *o2)
{
    VecRow *row = &blend->row;
    const int exact = job->identity && !plain && blend->float_values;
    const int apart = blend->direct && row->stream && ((uintptr_t)o & 63) != ((uintptr_t)o2 & 63);
    /* rows that leave corners out (Blend.collapse) pair as Blend.pairing says */
    int nested = -1, common = 0, paired = 1;
    if (blend->collapse && (plain || !blend->float_values)) {
        const int m1 = collapse_mask(factors, job->n_interp);
        const int m2 = collapse_mask(factors2, job->n_interp);
        const int pairing = blend->pairing[m1][m2];
        common = m1 & m2;
        nested = pairing >= 0 ? pairing : -1;
        paired = pairing != PAIR_ALONE;
    }
    if (!exact && !apart && paired) {
        float *acc2 = (float *)blend->acc + seg->width;
        row->out = blend->direct ? (float *)(void *)o : (float *)blend->acc;
        row->out2 = blend->direct ? (float *)(void *)o2 : acc2;
        row->F = factors;
        row->F2 = factors2;
        row->identity = job->identity ? (blend->exact_sums ? 3 : 1) : 0;
        /* every field a single row changes is set (none is restored after a call; without
         * collapse none changes); common is 0 but for nested pairs: every corner and axis */
        row->pair = 1;
        if (blend->collapse) {
            row->nested = nested;
            row->n_interp = common ? blend->kept_count[common] : job->n_interp;
            row->corner_of = blend->kept_corner[common];
            row->axis_of = blend->kept_axis[common];
        }
        int done = ops->vec_sum_row(row);
        if (done) {
            if (blend->direct)
                return;
            const int64_t width = seg->width;
            char *row_out = job->stream ? blend->stage : o;
            ops->store[job->src](blend->acc, row_out, width, job->low_bound, job->high_bound);
            if (job->stream)
                stream_copy(o, row_out, (size_t)width * blend->dst_size);
            row_out = job->stream ? blend->stage : o2;
            ops->store[job->src](acc2, row_out, width, job->low_bound, job->high_bound);
            if (job->stream)
                stream_copy(o2, row_out, (size_t)width * blend->dst_size);
            return;
        }
        if (!blend->direct)
            row->out = (float *)blend->acc;
    }
    blend_row_alone(job, ops, seg, blend, factors, corners, plain, o);
    blend_row_alone(job, ops, seg, blend, factors2, corners, plain, o2);
}
