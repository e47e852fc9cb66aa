/* Linear-mode blend (see kernels.h and docs/semantics.md, linear rules).
 *
 * A work item is a range of output rows times a segment of the row axis, made in three
 * steps, each with its own state:
 * - the segment (Segment): the row and block taps of its positions, laid out once as flat
 *   per-element tables (offset into an input row, float32 weight);
 * - the corner rows (CornerCache, linear_cache.h): each output row blends the 2**n input rows
 *   of its outer corners; input rows are gathered at the taps and converted to the
 *   accumulation type once, into a small per-worker cache, and reused by the following
 *   output rows that read them;
 * - the blend (Blend, blend_row): the weighted sum of the corner rows (the vector loops of
 *   linear_vec.h where the sum is float32, else linear_sum.h), converted to the output type
 *   and written.
 * An identity block (block_identity in kernels.h: the channels of an (H, W, C) image, which
 * ORT's rank-3 kernel interpolates at scale 1) is read as a copied block, one tap per
 * element; the sums add each element's other channel tap from the same expanded rows.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "stream.h"

#if defined(__FAST_MATH__)
#error "the Upsample kernels must not be built with -ffast-math: results must be IEEE exact"
#endif
#if defined(__i386__) && !defined(__SSE2_MATH__)
#error "32-bit x86 builds must use SSE2 arithmetic (-msse2 -mfpmath=sse), not the x87 unit"
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define LINEAR_TYPE_ROW(name, stored, acc, out) \
    [T_##name] = {#name, sizeof(stored), sizeof(acc), T_##out},
const LinearType linear_types[T_COUNT] = {LINEAR_TYPES(LINEAR_TYPE_ROW)};
#undef LINEAR_TYPE_ROW

typedef void (*expand_fn)(const char *row, const int64_t *off, int64_t width, void *into,
                          const float *lut);
typedef void (*repeat_fn)(const char *row, int64_t n, int64_t k, int64_t block, void *into,
                          const float *lut);
typedef void (*store_fn)(const void *acc, char *out, int64_t width, double low_bound,
                         double high_bound);
typedef void (*sum_fn)(int64_t width, int n_interp, int taps, const float *const *weights,
                       const float *factors, void *const *expanded, void *acc,
                       const uint32_t *last, int64_t d);

/* One output row's float32 sum for the vector loops (linear_vec.h). */
typedef struct {
    int64_t width;            /* elements of the row segment */
    int n_interp, taps;       /* outer interpolated axes; row taps (1 or 2) */
    const float *const *W;    /* per tap: each element's weight */
    const float *F;           /* corner c's weight on outer axis q at F[c * n_interp + q] */
    void *const *E;           /* per term (corner, then tap): the expanded input row */
    float *out;
    int stream;               /* out is the output: its whole cache lines are streamed */
    int64_t periodic_end;     /* W repeats every `lanes` elements, bit for bit, up to here */
    /* an identity block: 1 sums each element's terms and, in the last channel's elements,
     * each one twice (the other channel taps, at weight 0, add a zero of either sign, or a
     * NaN for an infinite or NaN neighbour: exactly a no-op where the rows are plain, see
     * linear_cache.h); 2 adds every tap of ORT's sum (rows that are not plain); 3 doubles
     * the last channel's sum (Blend.exact_sums) */
    int identity;
    const float *last;        /* identity: per element, all bits set in the last channel */
    int64_t d;                /* identity: elements from a channel to the next */
    /* 1: a pair of output rows that read the same corner rows, the second with its outer
     * weights at F2 into out2 (identity 0 or 1 only) */
    int pair;
    const float *F2;
    float *out2;
    /* the corners summed, where some outer axes fall on an input row (Blend.collapse):
     * n_interp of the row's n_full axes are interpolated, kept corner k is corner
     * corner_of[k] of E and F (F's layout over n_full axes), its axis i axis axis_of[i] */
    int n_full;
    const int8_t *corner_of, *axis_of;
    /* -1, or for a pair (identity 0): the first row also leaves out the corners of the
     * high tap of kept axis `nested`, where the second row does not */
    int nested;
} VecRow;

/* The loops of one instruction set, indexed by the source's element code. */
typedef struct {
    expand_fn expand[T_COUNT];
    repeat_fn repeat[T_COUNT];
    store_fn store[T_COUNT];  /* writes the code's results (linear_types[code].out) */
    sum_fn sum_float, sum_double;
    int (*plain_float32)(const char *row, int64_t n);  /* see linear_cache.h */
    int (*vec_sum_row)(const VecRow *row);  /* the vector sum, 0 where it does not apply */
    int lanes;                /* its float32 lanes (0: no vector loops) */
} LinearOps;

/* Magnitudes from which a float32 value is plain (see linear_cache.h): 2**-100's bits. */
#define PLAIN_LOW 0x0D800000u

#if defined(__SSE2__)
#include <emmintrin.h>
#define LANES_SSE2 1
#endif
#define ISA base
#include "linear_isa.h"
#undef ISA
#undef LANES_SSE2

#ifdef HAVE_AVX2_TARGET
#define HAVE_AVX2_VARIANT 1
#include <immintrin.h>
AVX2_TARGET_BEGIN
#define ISA avx2
#define LANES_AVX2 1
#include "linear_isa.h"
#undef LANES_AVX2
#undef ISA
AVX2_TARGET_END
#endif

static const LinearOps *ops_for(int isa)
{
#ifdef HAVE_AVX2_VARIANT
    if (isa == 1)
        return &linear_ops_avx2;
#endif
    (void)isa;
    return &linear_ops_base;
}

#include "linear_scratch.h"

/* Step 1: one item's segment of the row axis, positions [j0, j1), and its taps. */
typedef struct {
    int64_t j0, j1;
    int64_t width;            /* elements: (j1 - j0) * block */
    int64_t stride;           /* elements from one tap's table to the next's: segment * block */
    int taps;                 /* row taps times block taps: 1, 2 or 4 */
    int64_t *off;             /* per tap: each element's offset into an input row */
    const float *weights[4];  /* per tap: each element's float32 weight */
    uint32_t *last;           /* an identity block: all bits set where the element is in the
                               * last channel, else 0 (and 8 more, unused) */
    /* an integer scale k on the row axis (job->row_repeat, j0 a multiple of k): input rows
     * are expanded by repeating each position k times instead of a gather */
    int repeat;
    int64_t repeat_n;         /* with a repeat: the segment's input positions */
    size_t repeat_from;       /* with a repeat: the segment's first input byte in a row */
    size_t tap_offset;        /* elements from one tap's expanded row to the next's */
} Segment;

/* The row and block taps of the segment's positions as flat per-element tables. */
static void flat_taps(const LinearJob *job, const Segment *seg, float *weights)
{
    const int64_t block = job->block, j0 = seg->j0;
    /* an identity block's second tap is the sums' to read: its weights are 0 or the first's */
    const int block_taps = job->block_blend && !job->identity ? 2 : 1;
    const int row_taps = job->row_blend ? 2 : 1;
    const AxisRule *row_axis = &job->axes[job->n_outer];
    for (int64_t j = j0; j < seg->j1; j++) {
        int64_t positions[2];
        float row_w[2];
        if (job->row_blend) {
            rule_linear(row_axis, j, &positions[0], &positions[1], &row_w[0], &row_w[1]);
        } else {
            positions[0] = positions[1] = j;
            row_w[0] = row_w[1] = 1.0f;
        }
        for (int tr = 0; tr < row_taps; tr++) {
            int64_t start = positions[tr] * job->block_in;
            float wr = row_w[tr];
            for (int tb = 0; tb < block_taps; tb++) {
                int t = tr * block_taps + tb;
                int64_t *o = seg->off + (size_t)t * (size_t)seg->stride;
                float *w = weights + (size_t)t * (size_t)seg->stride;
                const int64_t *inner = tb ? job->blk_hi : job->blk_lo;
                const float *inner_w = tb ? job->blk_w_hi : job->blk_w_lo;
                for (int64_t c = 0; c < block; c++) {
                    size_t f = (size_t)((j - j0) * block + c);
                    if (job->block_blend) {
                        o[f] = start + inner[c];
                        /* innermost axis first: the block's axis, then the row axis */
                        w[f] = job->row_blend ? inner_w[c] * wr : inner_w[c];
                    } else {
                        o[f] = start + c;
                        w[f] = wr;
                    }
                }
            }
        }
    }
}

/* Item `s`'s segment of the row axis; 0 where it is empty. */
static int segment_bounds(const LinearJob *job, int64_t s, Segment *seg)
{
    seg->j0 = s * job->segment;
    seg->j1 = seg->j0 + job->segment < job->row_len ? seg->j0 + job->segment : job->row_len;
    return seg->j0 < seg->j1;
}

/* The segment's taps, into the scratch's tables `off`, `weights` and `last`. */
static void segment_taps(const LinearJob *job, int64_t *off, float *weights, uint32_t *last,
                         Segment *seg)
{
    const int64_t block = job->block, k = job->row_repeat;
    seg->width = (seg->j1 - seg->j0) * block;
    seg->stride = job->segment * block;
    seg->taps = taps_of(job);
    seg->off = off;
    for (int t = 0; t < seg->taps; t++)
        seg->weights[t] = weights + (size_t)t * (size_t)seg->stride;
    flat_taps(job, seg, weights);
    seg->last = last;
    if (job->identity)
        for (int64_t f = 0; f < seg->width + 8; f++)
            last[f] = f < seg->width && f % block >= block - job->identity ? ~0u : 0u;
    seg->repeat = k > 1 && job->row_blend && (!job->block_blend || job->identity)
        && seg->j0 % k == 0 && (seg->j1 - seg->j0) % k == 0;
    /* with a repeat the high taps are the low ones k * block elements on, except the last
     * k * block */
    seg->tap_offset = (size_t)(seg->repeat ? k * block : seg->stride);
    seg->repeat_from = seg->repeat ? (size_t)(seg->j0 / k * job->block_in)
                                         * linear_types[job->src].bytes : 0;
    seg->repeat_n = seg->repeat ? (seg->j1 - seg->j0) / k : 0;
}

/* The end of the prefix of [0, width) over which every tap's weights repeat every `lanes`
 * elements (w[f] == w[f - lanes], bit for bit), for the vector sums. */
static int64_t periodic_end(const float *const *weight_rows, int taps, int64_t width,
                            int64_t lanes)
{
    int64_t end = width;
    for (int t = 0; t < taps; t++) {
        int64_t f = lanes;
        for (; f < end; f++) {
            uint32_t now, before;
            memcpy(&now, &weight_rows[t][f], sizeof now);
            memcpy(&before, &weight_rows[t][f - lanes], sizeof before);
            if (now != before)
                break;
        }
        end = f < end ? f : end;
    }
    return end;
}

#include "linear_cache.h"

#include "linear_blend.h"

/* The output position after `position`, C order over the outer axes. */
static inline void next_position(const LinearJob *job, int64_t *position)
{
    int axis = job->n_outer - 1;
    while (axis > 0 && position[axis] + 1 == job->axes[axis].n_out) {
        position[axis] = 0;
        axis--;
    }
    position[axis]++;
}

/* Whether the rows from r (the first of a sweep of the innermost outer axis) and the next
 * sweep, on the second innermost outer axis, read the same input rows, and both sweeps lie
 * in the item (rows up to r1). `taps`: the row r's. Rows whose outer positions differ on one
 * axis read the same input rows when that axis is interpolated with the same taps at both
 * positions: then every row of the second sweep pairs with its row in the first. */
static int sweep_pair(const LinearJob *job, const int64_t *position, int64_t r, int64_t r1,
                      const OuterTaps *taps)
{
    const int n = job->n_outer;
    if (n < 2 || position[n - 1] != 0 || job->axes[n - 2].kind != AXIS_BLEND
        || position[n - 2] + 1 >= job->axes[n - 2].n_out
        || r + 2 * job->axes[n - 1].n_out > r1)
        return 0;
    const int q = job->axes[n - 1].kind == AXIS_BLEND;
    int64_t lo, hi;
    float w_lo, w_hi;
    axis_taps(&job->axes[n - 2], position[n - 2] + 1, &lo, &hi, &w_lo, &w_hi);
    return lo == taps->lo[q] && hi == taps->hi[q];
}

int linear_item(void *context, int64_t item, int worker)
{
    /* a copy the loops read: the compiler then knows that no call changes it, and keeps
     * its fields in registers across the calls of each row */
    const LinearJob job_copy = *(const LinearJob *)context;
    const LinearJob *job = &job_copy;
    const LinearOps *ops = ops_for(job->isa);
    int64_t b = item / job->n_segments;
    int64_t r0 = block_start(b, job->out_rows, job->n_blocks);
    int64_t r1 = block_start(b + 1, job->out_rows, job->n_blocks);
    Segment seg;
    if (r0 >= r1 || !segment_bounds(job, job->segment_base + item % job->n_segments, &seg))
        return 0;

    ScratchLayout layout = scratch_layout(job);
    if (job->scratch[worker] == NULL) {
        job->scratch[worker] = malloc(layout.total);
        if (job->scratch[worker] == NULL)
            return -1;
    }
    char *scratch = (char *)job->scratch[worker];
    segment_taps(job, (int64_t *)(void *)(scratch + layout.off),
                 (float *)(void *)(scratch + layout.weights),
                 (uint32_t *)(void *)(scratch + layout.last), &seg);
    Blend blend;
    plan_blend(job, ops, &seg, scratch + layout.acc, scratch + layout.stage, layout.direct,
               &blend);
    CornerCache cache;
    cache_init(&cache, job, &seg, scratch, &layout,
               blend.float_values && (job->identity || blend.collapse));
    float *factors = (float *)(void *)(scratch + layout.factors);
    const int64_t corners = (int64_t)1 << job->n_interp;
    void *expanded[2 * 4];
    void **rows = expanded;
    void **rows_many = NULL;
    if (corners * seg.taps > 8) {
        rows_many = (void **)malloc((size_t)(corners * seg.taps) * sizeof(void *));
        if (rows_many == NULL)
            return -1;
        rows = rows_many;
    }

    /* start position: row r0 + row_base of the whole output, C order */
    const int n = job->n_outer;
    int64_t position[MAX_OUTER];
    int64_t rest = r0 + job->row_base;
    for (int axis = n - 1; axis >= 0; axis--) {
        position[axis] = rest % job->axes[axis].n_out;
        rest /= job->axes[axis].n_out;
    }
    /* this output row's outer taps, and those of the last row that read other input rows */
    OuterTaps taps[2];
    OuterTaps *now = &taps[0], *last = &taps[1];
    float *factors2 = (float *)(void *)(scratch + layout.factors2);
    const int64_t row_width = job->out_row_len * job->block;
    const size_t dst_size = blend.dst_size;
    char *out = job->out + (size_t)((seg.j0 - job->col_first) * job->block) * dst_size;
    if (blend.vec)
        vec_row_init(job, &seg, &blend, factors, rows);
    int peeked = 0; /* `now` holds the taps of `position` already */
    for (int64_t r = r0; r < r1; r++) {
        if (!peeked) {
            if (r > r0)
                next_position(job, position);
            outer_taps(job, position, now);
        }
        peeked = 0;
        if (blend.vec && sweep_pair(job, position, r, r1, now)) {
            /* rows r + i and r + sweep + i, i = 0 .. sweep - 1, read the same input rows:
             * each pair is blended at once, and each input row is expanded once for both
             * sweeps of the innermost outer axis */
            const int64_t sweep = job->axes[n - 1].n_out;
            const int q = job->axes[n - 1].kind == AXIS_BLEND; /* the second sweep's axis */
            int64_t unused_lo, unused_hi;
            float w_second[2];
            axis_taps(&job->axes[n - 2], position[n - 2] + 1, &unused_lo, &unused_hi,
                      &w_second[0], &w_second[1]);
            for (int64_t i = 0; i < sweep; i++, r++) {
                if (i > 0) {
                    next_position(job, position);
                    outer_taps(job, position, now);
                }
                const int same = r > r0 && same_corners(now, last, job->n_interp);
                int plain = corner_rows(job, ops, &seg, &cache, now, same, factors, rows);
                if (!same) {
                    OuterTaps *older = last;
                    last = now;
                    now = older;
                }
                /* the second row's outer weights: the first's, but on the second sweep's
                 * axis (its taps are the first row's: `last` now holds them) */
                OuterTaps *taps_now = same ? now : last;
                const float first_lo = taps_now->w_lo[q], first_hi = taps_now->w_hi[q];
                taps_now->w_lo[q] = w_second[0];
                taps_now->w_hi[q] = w_second[1];
                corner_factors(taps_now, job->n_interp, factors2);
                taps_now->w_lo[q] = first_lo;
                taps_now->w_hi[q] = first_hi;
                char *o = out + (size_t)(r * row_width) * dst_size;
                blend_pair(job, ops, &seg, &blend, factors, factors2, rows, plain, o,
                           o + (size_t)(sweep * row_width) * dst_size);
            }
            /* on to the row after the second sweep */
            position[n - 2]++;
            r += sweep - 1;
            continue;
        }
        /* the same input rows as the previous output row (every other row at x2 on an
         * outer axis): the corners' expanded rows are in place, only their weights change */
        const int same = r > r0 && same_corners(now, last, job->n_interp);
        int plain = corner_rows(job, ops, &seg, &cache, now, same, factors, rows);
        if (!same) { /* no copy: the next row's taps go where the older ones were */
            OuterTaps *older = last;
            last = now;
            now = older;
        }
        char *o = out + (size_t)(r * row_width) * dst_size;
        if (blend.vec && r + 1 < r1) {
            /* the next row, if it reads the same input rows, is blended with this one */
            next_position(job, position);
            outer_taps(job, position, now);
            if (same_corners(now, last, job->n_interp)) {
                corner_factors(now, job->n_interp, factors2);
                blend_pair(job, ops, &seg, &blend, factors, factors2, rows, plain, o,
                           o + (size_t)row_width * dst_size);
                r++;
                continue;
            }
            peeked = 1;
        }
        blend_row(job, ops, &seg, &blend, factors, rows, plain, o);
    }
    free(rows_many);
    if (job->stream)
        stream_fence();
    return 0;
}
