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
 * - the blend (Blend, blend_row): the weighted sum of the corner rows (linear_sum.h, or the
 *   float32 intrinsics of linear_avx2.h), converted to the output type and written.
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
                       const float *factors, void *const *expanded, void *acc);

/* The loops of one instruction set, indexed by the source's element code. */
typedef struct {
    expand_fn expand[T_COUNT];
    repeat_fn repeat[T_COUNT];
    store_fn store[T_COUNT];  /* writes the code's results (linear_types[code].out) */
    sum_fn sum_float, sum_double;
} LinearOps;

#define ISA base
#include "linear_isa.h"
#undef ISA

#ifdef HAVE_AVX2_TARGET
#define HAVE_AVX2_VARIANT 1
#include <immintrin.h>
AVX2_TARGET_BEGIN
#define ISA avx2
#include "linear_isa.h"
#include "linear_avx2.h"
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

#define ALIGN 64

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Layout of one worker's scratch, for a segment of `width` elements. */
typedef struct {
    size_t off, weights, cache, acc, stage, keys, ages, factors, total;
} ScratchLayout;

static int taps_of(const LinearJob *job)
{
    return (job->row_blend ? 2 : 1) * (job->block_blend ? 2 : 1);
}

/* Scratch bytes per element of a segment, table by table: the one formula, laid out in
 * scratch_layout below, bounded by describe_linear.c and used by Python to size segments. Per tap:
 * an offset and a weight; per tap and cached row slot: an accumulator value; then the
 * accumulator itself, and a staged result for streaming stores. */
typedef struct {
    size_t off, weights, cache, acc, stage;
} ScratchPerElement;

static ScratchPerElement scratch_per_element(int taps, int n_interp, int acc_double,
                                             int stream)
{
    size_t acc = acc_double ? sizeof(double) : sizeof(float);
    size_t slots = (size_t)2 << n_interp;
    ScratchPerElement e = {(size_t)taps * sizeof(int64_t), (size_t)taps * sizeof(float),
                           slots * (size_t)taps * acc, acc, stream ? sizeof(double) : 0};
    return e;
}

size_t linear_scratch_per_element(int taps, int n_interp, int acc_double, int stream)
{
    ScratchPerElement e = scratch_per_element(taps, n_interp, acc_double, stream);
    return e.off + e.weights + e.cache + e.acc + e.stage;
}

static ScratchLayout scratch_layout(const LinearJob *job)
{
    ScratchLayout s;
    size_t width = (size_t)(job->segment * job->block);
    size_t combos = (size_t)1 << job->n_interp;
    size_t slots = 2 * combos;
    ScratchPerElement e = scratch_per_element(taps_of(job), job->n_interp, job->acc_double,
                                              job->stream);
    s.off = 0;
    s.weights = s.off + round_up(width * e.off);
    s.cache = s.weights + round_up(width * e.weights);
    s.acc = s.cache + round_up(width * e.cache);
    s.stage = s.acc + round_up(width * e.acc);
    /* converted results waiting to be streamed out (streaming stores only) */
    s.keys = s.stage + round_up(width * e.stage);
    s.ages = s.keys + round_up(slots * sizeof(int64_t));
    s.factors = s.ages + round_up(slots * sizeof(int64_t));
    s.total = s.factors + round_up(combos * (size_t)(job->n_interp ? job->n_interp : 1)
                                   * sizeof(float));
    return s;
}

size_t linear_scratch_bytes(const LinearJob *job) { return scratch_layout(job).total; }

/* Step 1: one item's segment of the row axis, positions [j0, j1), and its taps. */
typedef struct {
    int64_t j0, j1;
    int64_t width;            /* elements: (j1 - j0) * block */
    int64_t stride;           /* elements from one tap's table to the next's: segment * block */
    int taps;                 /* row taps times block taps: 1, 2 or 4 */
    int64_t *off;             /* per tap: each element's offset into an input row */
    const float *weights[4];  /* per tap: each element's float32 weight */
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
    const int block_taps = job->block_blend ? 2 : 1;
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

/* The segment's taps, into the scratch's tables `off` and `weights`. */
static void segment_taps(const LinearJob *job, int64_t *off, float *weights, Segment *seg)
{
    const int64_t block = job->block, k = job->row_repeat;
    seg->width = (seg->j1 - seg->j0) * block;
    seg->stride = job->segment * block;
    seg->taps = taps_of(job);
    seg->off = off;
    for (int t = 0; t < seg->taps; t++)
        seg->weights[t] = weights + (size_t)t * (size_t)seg->stride;
    flat_taps(job, seg, weights);
    seg->repeat = k > 1 && job->row_blend && !job->block_blend && seg->j0 % k == 0
        && (seg->j1 - seg->j0) % k == 0;
    /* with a repeat the high taps are the low ones k * block elements on, except the last
     * k * block */
    seg->tap_offset = (size_t)(seg->repeat ? k * block : seg->stride);
    seg->repeat_from = seg->repeat ? (size_t)(seg->j0 / k * job->block_in)
                                         * linear_types[job->src].bytes : 0;
    seg->repeat_n = seg->repeat ? (seg->j1 - seg->j0) / k : 0;
}

#ifdef HAVE_AVX2_VARIANT
/* The end of the prefix of [0, width) over which every tap's weights repeat every 8
 * elements (w[f] == w[f - 8], bit for bit), for the AVX2 float blend. */
static int64_t periodic_end(const float *const *weight_rows, int taps, int64_t width)
{
    int64_t end = width;
    for (int t = 0; t < taps; t++) {
        int64_t f = 8;
        for (; f < end; f++) {
            uint32_t now, before;
            memcpy(&now, &weight_rows[t][f], sizeof now);
            memcpy(&before, &weight_rows[t][f - 8], sizeof before);
            if (now != before)
                break;
        }
        end = f < end ? f : end;
    }
    return end;
}
#endif

#include "linear_cache.h"

/* Step 3: how an item's output rows are summed and written. */
typedef struct {
    int direct;               /* results are the accumulator type: summed into place */
    int avx2_float;           /* float32 sums by linear_avx2.h, straight into the output */
    int64_t periodic_end;     /* for avx2_float: see periodic_end */
    void *acc;                /* the accumulator row, for results that are converted */
    char *stage;              /* streaming stores: a converted row waiting to be streamed */
    size_t dst_size;
} Blend;

static void plan_blend(const LinearJob *job, const Segment *seg, void *acc, char *stage,
                       Blend *blend)
{
    blend->direct = (job->dst == T_FLOAT32 && !job->acc_double)
        || (job->dst == T_FLOAT64 && job->acc_double);
    blend->avx2_float = 0;
    blend->periodic_end = 0;
#ifdef HAVE_AVX2_VARIANT
    /* float32 results straight into the output (streamed from the registers when
     * streaming), where the intrinsics blend has this count of taps and axes */
    blend->avx2_float = job->isa == 1 && blend->direct && !job->acc_double && seg->taps <= 2
        && job->n_interp <= 3 && ((uintptr_t)job->out & 3) == 0;
    if (blend->avx2_float)
        blend->periodic_end = periodic_end(seg->weights, seg->taps, seg->width);
#else
    (void)seg;
#endif
    blend->acc = acc;
    blend->stage = stage;
    blend->dst_size = linear_types[job->dst].bytes;
}

/* One output row `o` of the segment from its corner rows and their outer weights. Float
 * results are summed straight into the output row, others into the accumulator and
 * converted; with streaming stores both are assembled in the scratch first and then
 * streamed, so the output is never read. */
static void blend_row(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                      const Blend *blend, const float *factors, void *const *corners, char *o)
{
    const int64_t width = seg->width;
#ifdef HAVE_AVX2_VARIANT
    if (blend->avx2_float
        && avx2_sum_row_f(width, blend->periodic_end, job->n_interp, seg->taps, seg->weights,
                          factors, corners, (float *)(void *)o, job->stream))
        return;
#endif
    char *row_out = job->stream ? (blend->direct ? (char *)blend->acc : blend->stage) : o;
    void *into = blend->direct ? (void *)row_out : blend->acc;
    if (job->acc_double)
        ops->sum_double(width, job->n_interp, seg->taps, seg->weights, factors, corners, into);
    else
        ops->sum_float(width, job->n_interp, seg->taps, seg->weights, factors, corners, into);
    if (!blend->direct)
        ops->store[job->src](blend->acc, row_out, width, job->low_bound, job->high_bound);
    if (job->stream)
        stream_copy(o, row_out, (size_t)width * blend->dst_size);
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
                 (float *)(void *)(scratch + layout.weights), &seg);
    CornerCache cache;
    cache_init(&cache, job, &seg, scratch, &layout);
    Blend blend;
    plan_blend(job, &seg, scratch + layout.acc, scratch + layout.stage, &blend);
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
    const int64_t row_width = job->out_row_len * job->block;
    const size_t dst_size = blend.dst_size;
    for (int64_t r = r0; r < r1; r++) {
        if (r > r0) {
            int axis = n - 1;
            while (axis > 0 && position[axis] + 1 == job->axes[axis].n_out) {
                position[axis] = 0;
                axis--;
            }
            position[axis]++;
        }
        outer_taps(job, position, now);
        /* the same input rows as the previous output row (every other row at x2 on an
         * outer axis): the corners' expanded rows are in place, only their weights change */
        const int same = r > r0 && same_corners(now, last, job->n_interp);
        corner_rows(job, ops, &seg, &cache, now, same, factors, rows);
        if (!same) { /* no copy: the next row's taps go where the older ones were */
            OuterTaps *older = last;
            last = now;
            now = older;
        }
        char *o = job->out
            + (size_t)(r * row_width + (seg.j0 - job->col_first) * job->block) * dst_size;
        blend_row(job, ops, &seg, &blend, factors, rows, o);
    }
    free(rows_many);
    if (job->stream)
        stream_fence();
    return 0;
}
