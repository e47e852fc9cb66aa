/* Linear-mode blend (see kernels.h and docs/semantics.md, linear rules).
 *
 * Per work item (a range of rows times a segment of the row axis): the row and block taps
 * of the segment are laid out once as flat per-element tables (offset into an input row,
 * float32 weight); each output row then blends the 2**n input rows of its outer corners.
 * Input rows are gathered at the taps and converted to the accumulation type once, into a
 * small per-worker cache, and reused by the following output rows that read them.
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

typedef void (*expand_fn)(const char *row, const int64_t *off, int64_t width, void *into,
                          const float *lut);
typedef void (*repeat_fn)(const char *row, int64_t n, int64_t k, int64_t block, void *into,
                          const float *lut);
typedef void (*store_fn)(const void *acc, char *out, int64_t width, double low_bound,
                         double high_bound);
typedef void (*sum_fn)(int64_t width, int n_interp, int taps, const float *const *weights,
                       const float *factors, void *const *expanded, void *acc);

typedef struct {
    expand_fn expand[T_COUNT];
    repeat_fn repeat[T_COUNT];
    store_fn store[T_COUNT];
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

const size_t linear_element_size[T_COUNT] = {1, 1, 2, 2, 4, 4, 2, 8, 8, 4, 8};
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
 * scratch_layout below, bounded by describe.c and used by Python to size segments. Per tap:
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

/* The row and block taps of row positions [j0, j1) as flat per-element tables. */
static void flat_taps(const LinearJob *job, int64_t j0, int64_t j1, int64_t *off,
                      float *weights, int64_t width)
{
    const int64_t block = job->block;
    const int block_taps = job->block_blend ? 2 : 1;
    const int row_taps = job->row_blend ? 2 : 1;
    const AxisRule *row_axis = &job->axes[job->n_outer];
    for (int64_t j = j0; j < j1; j++) {
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
                int64_t *o = off + (size_t)t * (size_t)width;
                float *w = weights + (size_t)t * (size_t)width;
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

#ifdef HAVE_AVX2_VARIANT
/* The end of the prefix of [0, width) over which every tap's weights repeat every 8
 * elements (w[f] == w[f - 8], bit for bit), for the AVX2 float blend (its only user). */
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

int linear_item(void *context, int64_t item, int worker)
{
    LinearJob *job = (LinearJob *)context;
    const LinearOps *ops = ops_for(job->isa);
    const int64_t block = job->block;
    int64_t b = item / job->n_segments, s = job->segment_base + item % job->n_segments;
    int64_t r0 = block_start(b, job->out_rows, job->n_blocks);
    int64_t r1 = block_start(b + 1, job->out_rows, job->n_blocks);
    int64_t j0 = s * job->segment;
    int64_t j1 = j0 + job->segment < job->row_len ? j0 + job->segment : job->row_len;
    if (r0 >= r1 || j0 >= j1)
        return 0;
    int64_t width = (j1 - j0) * block;
    int64_t full_width = job->segment * block; /* stride of the scratch tables */

    ScratchLayout layout = scratch_layout(job);
    if (job->scratch[worker] == NULL) {
        job->scratch[worker] = malloc(layout.total);
        if (job->scratch[worker] == NULL)
            return -1;
    }
    char *scratch = (char *)job->scratch[worker];
    int64_t *off = (int64_t *)(scratch + layout.off);
    float *weights = (float *)(scratch + layout.weights);
    char *cache = scratch + layout.cache;
    void *acc = scratch + layout.acc;
    int64_t *keys = (int64_t *)(scratch + layout.keys);
    int64_t *ages = (int64_t *)(scratch + layout.ages);
    float *factors = (float *)(scratch + layout.factors);

    const int taps = taps_of(job);
    const int n_interp = job->n_interp;
    const int64_t combos = (int64_t)1 << n_interp;
    const int64_t slots = 2 * combos;
    const size_t acc_size = job->acc_double ? sizeof(double) : sizeof(float);
    const size_t slot_bytes = (size_t)taps * (size_t)full_width * acc_size;
    const size_t src_size = linear_element_size[job->src];
    const size_t dst_size = linear_element_size[job->dst];

    flat_taps(job, j0, j1, off, weights, full_width);
    /* an integer scale on the row axis expands rows without a gather (j0 is a multiple) */
    const int repeat = job->row_repeat > 1 && job->row_blend && !job->block_blend
        && j0 % job->row_repeat == 0 && (j1 - j0) % job->row_repeat == 0;
    const int direct = (job->dst == T_FLOAT32 && !job->acc_double)
        || (job->dst == T_FLOAT64 && job->acc_double);
    /* elements from one tap's expanded row to the next's in a cache slot: with a repeat,
     * the high taps are the low ones k * block elements on, except the last k * block */
    const size_t tap_offset = (size_t)(repeat ? job->row_repeat * block : full_width);
    /* with a repeat: the segment's first input byte in a row, and its input positions */
    const size_t repeat_from = repeat ? (size_t)(j0 / job->row_repeat * job->block_in) * src_size
                                      : 0;
    const int64_t repeat_n = repeat ? (j1 - j0) / job->row_repeat : 0;
    const float *weight_rows[4];
    for (int t = 0; t < taps; t++)
        weight_rows[t] = weights + (size_t)t * (size_t)full_width;
#ifdef HAVE_AVX2_VARIANT
    /* float32 results straight into the output (streamed from the registers when
     * streaming), where the intrinsics blend has this count of taps and axes */
    const int avx2_float = job->isa == 1 && direct && !job->acc_double && taps <= 2
        && job->n_interp <= 3 && ((uintptr_t)job->out & 3) == 0;
    const int64_t repeat_end = avx2_float ? periodic_end(weight_rows, taps, width) : 0;
#endif

    for (int64_t t = 0; t < slots; t++) {
        keys[t] = -1;
        ages[t] = 0;
    }
    int64_t clock = 0;
    int64_t last_slot[8] = {0};
    int64_t last_base = 0, last_lo[MAX_INTERP + 1], last_hi[MAX_INTERP + 1];
    const int n = job->n_outer;
    int64_t position[MAX_OUTER];
    int64_t axis_lo[MAX_INTERP + 1], axis_hi[MAX_INTERP + 1];
    float axis_w_lo[MAX_INTERP + 1], axis_w_hi[MAX_INTERP + 1];
    void *expanded[2 * 4];
    void **expanded_all = expanded;
    /* start position: row r0 + row_base of the whole output, C order */
    int64_t rest = r0 + job->row_base;
    for (int axis = n - 1; axis >= 0; axis--) {
        position[axis] = rest % job->axes[axis].n_out;
        rest /= job->axes[axis].n_out;
    }
    void **expanded_many = NULL;
    if (combos * taps > 8) {
        expanded_many = (void **)malloc((size_t)(combos * taps) * sizeof(void *));
        if (expanded_many == NULL)
            return -1;
        expanded_all = expanded_many;
    }
    const int64_t row_width = job->out_row_len * block;
    for (int64_t r = r0; r < r1; r++) {
        if (r > r0) {
            int axis = n - 1;
            while (axis > 0 && position[axis] + 1 == job->axes[axis].n_out) {
                position[axis] = 0;
                axis--;
            }
            position[axis]++;
        }
        /* outer axes: fixed offsets, and two taps per interpolated axis (p = 0 innermost) */
        int64_t base = 0;
        int p = 0;
        for (int axis = n - 1; axis >= 0; axis--) {
            const AxisRule *a = &job->axes[axis];
            if (a->kind == AXIS_BLEND) {
                axis_taps(a, position[axis], &axis_lo[p], &axis_hi[p], &axis_w_lo[p],
                          &axis_w_hi[p]);
                p++;
            } else {
                base += axis_offset(a, position[axis]);
            }
        }
        /* the same input rows as the previous output row (every other row at x2 on an
         * outer axis): the corners' expanded rows are in place, only their weights change */
        int same = r > r0 && base == last_base;
        for (int q = 0; same && q < n_interp; q++)
            same = axis_lo[q] == last_lo[q] && axis_hi[q] == last_hi[q];
        if (!same) {
            last_base = base;
            for (int q = 0; q < n_interp; q++) { /* a few: memcpy would be a libc call */
                last_lo[q] = axis_lo[q];
                last_hi[q] = axis_hi[q];
            }
        }
        for (int64_t combo = 0; combo < combos; combo++) {
            int64_t offset = base;
            for (int q = 0; q < n_interp; q++) {
                if ((combo >> q) & 1) {
                    offset += axis_hi[q];
                    factors[combo * n_interp + q] = axis_w_hi[q];
                } else {
                    offset += axis_lo[q];
                    factors[combo * n_interp + q] = axis_w_lo[q];
                }
            }
            if (same)
                continue;
            clock++;
            /* a corner most often reads the row it read for the previous output row */
            int64_t slot = combo < 8 && keys[last_slot[combo]] == offset ? last_slot[combo] : -1;
            for (int64_t t = 0; slot < 0 && t < slots; t++) {
                if (keys[t] == offset)
                    slot = t;
            }
            if (slot < 0) {
                slot = 0;
                for (int64_t t = 1; t < slots; t++)
                    if (ages[t] < ages[slot])
                        slot = t;
                keys[slot] = offset;
                char *into = cache + (size_t)slot * slot_bytes;
                const char *row = job->x + (size_t)offset * src_size;
                if (repeat) {
                    /* low taps: a repeat; high taps: the low ones k positions on, but
                     * for the segment's last k positions (clamped, or past the segment) */
                    ops->repeat[job->src](row + repeat_from, repeat_n, job->row_repeat, block,
                                          into, job->lut);
                    /* the high taps are read tap_offset elements on, so only the last
                     * tap_offset need a place of their own, past the low taps (width >=
                     * tap_offset: the segment holds whole groups of k) */
                    ops->expand[job->src](row, off + (size_t)(full_width + width) - tap_offset,
                                          (int64_t)tap_offset, into + (size_t)width * acc_size,
                                          job->lut);
                } else {
                    for (int t = 0; t < taps; t++)
                        ops->expand[job->src](row, off + (size_t)t * (size_t)full_width, width,
                                              into + (size_t)t * (size_t)full_width * acc_size,
                                              job->lut);
                }
            }
            ages[slot] = clock;
            if (combo < 8)
                last_slot[combo] = slot;
            for (int t = 0; t < taps; t++)
                expanded_all[combo * taps + t] =
                    cache + (size_t)slot * slot_bytes + (size_t)t * tap_offset * acc_size;
        }
        char *o = job->out + (size_t)(r * row_width + (j0 - job->col_first) * block) * dst_size;
        /* float results are summed straight into the output row, others into the
         * accumulator and converted; with streaming stores both are assembled in the scratch
         * first and then streamed, so the output is never read */
#ifdef HAVE_AVX2_VARIANT
        if (avx2_float
            && avx2_sum_row_f(width, repeat_end, n_interp, taps, weight_rows, factors,
                              expanded_all, (float *)(void *)o, job->stream))
            continue;
#endif
        char *row_out = job->stream ? (direct ? (char *)acc : scratch + layout.stage) : o;
        void *into = direct ? (void *)row_out : acc;
        if (job->acc_double)
            ops->sum_double(width, n_interp, taps, weight_rows, factors, expanded_all, into);
        else
            ops->sum_float(width, n_interp, taps, weight_rows, factors, expanded_all, into);
        if (!direct)
            ops->store[job->dst](acc, row_out, width, job->low_bound, job->high_bound);
        if (job->stream)
            stream_copy(o, row_out, (size_t)width * dst_size);
    }
    free(expanded_many);
    if (job->stream)
        stream_fence();
    return 0;
}
