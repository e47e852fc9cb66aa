/* A linear worker's scratch (linear_scratch.h). */
#include "linear_scratch.h"

#include "compiler.h"

/* Scratch bytes per element of a segment, table by table: the one formula, laid out in
 * scratch_layout below. Per tap: an offset and a weight; an identity block's mark of the
 * last channel; per tap and searched cache slot: an accumulator value; then the accumulator
 * rows (two of float32 sums: a pair of output rows, or one of double sums), and a staged
 * result for streaming stores. */
typedef struct {
    size_t off, weights, last, cache, acc, stage;
} ScratchPerElement;

static ScratchPerElement scratch_per_element(int taps, int n_interp, int acc_double,
                                             int stream)
{
    size_t acc = acc_double ? sizeof(double) : sizeof(float);
    size_t slots = (size_t)2 << n_interp;
    ScratchPerElement e = {(size_t)taps * sizeof(int64_t), (size_t)taps * sizeof(float),
                           sizeof(uint32_t), slots * (size_t)taps * acc,
                           acc_double ? acc : 2 * acc, stream ? sizeof(double) : 0};
    return e;
}

size_t linear_scratch_per_element(int taps, int n_interp, int acc_double, int stream)
{
    ScratchPerElement e = scratch_per_element(taps, n_interp, acc_double, stream);
    return e.off + e.weights + e.last + e.cache + e.acc + e.stage;
}

/* The corner cache's slots (corner_cache.h): 2 * 2**n, searched; or, where rows of the
 * input two steps apart on the outermost interpolated axis fit in DIRECT_CACHE_BYTES, a
 * power of two of slots, at least that many rows, each row in the one slot its number
 * gives. An output row's corners lie within the sum of the interpolated axes' strides (in
 * rows; each axis's taps are neighbours): fewer slots than that would put two of them in
 * one slot. */
static void cache_slots(const LinearJob *job, ScratchLayout *layout)
{
    const size_t searched = (size_t)2 << job->n_interp;
    layout->slots = searched;
    layout->direct = 0;
    layout->row_len = 1;
    if (job->n_outer < 1)
        return;
    const int64_t row = job->axes[job->n_outer - 1].stride;
    int64_t span = 1, outermost = 0;
    for (int axis = 0; axis < job->n_outer; axis++) {
        const AxisRule *a = &job->axes[axis];
        if (row < 1 || a->stride % row)
            return;
        if (a->kind == AXIS_BLEND) {
            span += a->stride / row;
            outermost = outermost ? outermost : a->stride / row;
        }
    }
    size_t slots = searched;
    while (slots * layout->slot_bytes <= DIRECT_CACHE_BYTES
           && (slots < (size_t)span || slots < 2 * (size_t)outermost))
        slots *= 2;
    if (slots * layout->slot_bytes > DIRECT_CACHE_BYTES)
        return;
    layout->slots = slots;
    layout->direct = 1;
    layout->row_len = row;
}

ScratchLayout scratch_layout(const LinearJob *job)
{
    ScratchLayout s;
    const size_t width = (size_t)(job->segment * job->block);
    const size_t combos = (size_t)1 << job->n_interp;
    const int taps = taps_per_element(job);
    s.slot_bytes = (size_t)taps * width * (job->acc_double ? sizeof(double) : sizeof(float))
        + SLOT_PAD;
    cache_slots(job, &s);
    ScratchPerElement e = scratch_per_element(taps, job->n_interp, job->acc_double,
                                              job->stream);
    s.off = 0;
    s.weights = s.off + align_up(width * e.off, CACHE_LINE_BYTES);
    s.last = s.weights + align_up(width * e.weights, CACHE_LINE_BYTES);
    s.cache = s.last + align_up((width + LAST_MARK_PAD) * e.last, CACHE_LINE_BYTES);
    /* e.cache counts the searched slots, DIRECT_CACHE_BYTES bounds the direct ones */
    s.acc = s.cache + align_up(s.slots * s.slot_bytes, CACHE_LINE_BYTES);
    s.stage = s.acc + align_up(width * e.acc, CACHE_LINE_BYTES);
    /* converted results waiting to be streamed out (streaming stores only) */
    s.keys = s.stage + align_up(width * e.stage, CACHE_LINE_BYTES);
    s.ages = s.keys + align_up(s.slots * sizeof(int64_t), CACHE_LINE_BYTES);
    s.plain = s.ages + align_up(s.slots * sizeof(int64_t), CACHE_LINE_BYTES);
    s.factors = s.plain + align_up(s.slots * sizeof(int64_t), CACHE_LINE_BYTES);
    /* each corner's outer weights, for an output row and the second of a pair */
    s.factors2 = s.factors + align_up(combos * (size_t)(job->n_interp ? job->n_interp : 1)
                                      * sizeof(float), CACHE_LINE_BYTES);
    s.total = s.factors2 + (s.factors2 - s.factors);
    return s;
}
