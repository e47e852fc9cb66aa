/* Step 0 of a linear work item (see linear.c): one worker's scratch. Its layout, the one
 * formula of its size per segment element (bounded by describe_linear.c, used by Python to
 * size segments), and how many slots the corner cache (linear_cache.h) has and whether it
 * finds its rows by number. Included once, by linear.c, after its LinearJob helpers.
 */

#define ALIGN 64

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* Bytes after each cached row: the identity sums read an element's next channel there
 * (read, never used, past the row's last element). */
#define SLOT_PAD 64

/* Bytes a worker's corner cache may take where it finds its rows by number (cache_slots),
 * beyond the scratch per element: counted per thread by _resources.py. */
#define DIRECT_CACHE_BYTES ((size_t)1 << 19)

/* Layout of one worker's scratch, for a segment of `width` elements; `slots` of the corner
 * cache, `direct` where it finds them by row number (cache_slots), whose number is an input
 * offset over `row_len` (the elements of an input row). */
typedef struct {
    size_t off, weights, last, cache, acc, stage, keys, ages, plain, factors, factors2, total;
    size_t slots;
    int direct;
    int64_t row_len;
} ScratchLayout;

static int taps_of(const LinearJob *job)
{
    return (job->row_blend ? 2 : 1) * (job->block_blend && !job->identity ? 2 : 1);
}

/* Scratch bytes per element of a segment, table by table: the one formula, laid out in
 * scratch_layout below, bounded by describe_linear.c and used by Python to size segments. Per tap:
 * an offset and a weight; an identity block's mark of the last channel; per tap and cached
 * row slot: an accumulator value; then the accumulator rows (two of float32 sums: a pair of
 * output rows, or one of double sums), and a staged result for streaming stores. */
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

size_t linear_direct_cache_bytes(void) { return DIRECT_CACHE_BYTES; }

/* One cached row's bytes: each tap's table of the segment's `width` elements, then the pad
 * (linear_cache.h's slot_bytes). */
static size_t slot_bytes_of(const LinearJob *job, size_t width)
{
    return (size_t)taps_of(job) * width * (job->acc_double ? sizeof(double) : sizeof(float))
        + SLOT_PAD;
}

/* The corner cache's slots (linear_cache.h): 2 * 2**n, searched; or, where rows of the
 * input two steps apart on the outermost interpolated axis fit in DIRECT_CACHE_BYTES, a
 * power of two of slots, at least that many rows, each row in the one slot its number
 * gives. An output row's corners lie within the sum of the interpolated axes' strides (in
 * rows; each axis's taps are neighbours): fewer slots than that would put two of them in
 * one slot. Sets layout->slots and layout->direct. */
static void cache_slots(const LinearJob *job, size_t width, ScratchLayout *layout)
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
    const size_t slot_bytes = slot_bytes_of(job, width);
    size_t slots = searched;
    while (slots * slot_bytes <= DIRECT_CACHE_BYTES
           && (slots < (size_t)span || slots < 2 * (size_t)outermost))
        slots *= 2;
    if (slots * slot_bytes > DIRECT_CACHE_BYTES)
        return;
    layout->slots = slots;
    layout->direct = 1;
    layout->row_len = row;
}

static ScratchLayout scratch_layout(const LinearJob *job)
{
    ScratchLayout s;
    size_t width = (size_t)(job->segment * job->block);
    size_t combos = (size_t)1 << job->n_interp;
    cache_slots(job, width, &s);
    const size_t slots = s.slots;
    ScratchPerElement e = scratch_per_element(taps_of(job), job->n_interp, job->acc_double,
                                              job->stream);
    s.off = 0;
    s.weights = s.off + round_up(width * e.off);
    /* the last channel's mark, read a vector at a time: a vector's worth more */
    s.last = s.weights + round_up(width * e.weights);
    s.cache = s.last + round_up((width + 8) * e.last);
    /* e.cache counts the searched slots, DIRECT_CACHE_BYTES bounds the direct ones */
    s.acc = s.cache + round_up(slots * slot_bytes_of(job, width));
    s.stage = s.acc + round_up(width * e.acc);
    /* converted results waiting to be streamed out (streaming stores only) */
    s.keys = s.stage + round_up(width * e.stage);
    s.ages = s.keys + round_up(slots * sizeof(int64_t));
    s.plain = s.ages + round_up(slots * sizeof(int64_t));
    s.factors = s.plain + round_up(slots * sizeof(int64_t));
    /* each corner's outer weights, for an output row and the second of a pair */
    s.factors2 = s.factors + round_up(combos * (size_t)(job->n_interp ? job->n_interp : 1)
                                      * sizeof(float));
    s.total = s.factors2 + (s.factors2 - s.factors);
    return s;
}

size_t linear_scratch_bytes(const LinearJob *job) { return scratch_layout(job).total; }
