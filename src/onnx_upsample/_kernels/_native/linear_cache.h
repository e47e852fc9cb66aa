/* Step 2 of a linear work item (see linear.c): the corners an output row blends, and the
 * cache of expanded input rows they read.
 *
 * An output row blends the input rows of its 2**n outer corners (n interpolated outer axes),
 * each gathered at the segment's taps and converted to the accumulation type: an "expanded"
 * row of `taps` tables. Neighbouring output rows mostly read the same input rows (a scale of
 * 2 reads each twice), so expanded rows live in slots of the worker's scratch. Where the
 * rows of two steps of the outermost interpolated axis fit in a bounded number of slots
 * (cache_slots in linear_scratch.h; a volume's depth pairs read each input plane twice, a
 * sweep apart), each input row has the one slot its row number gives: found at once, kept
 * until a row that many rows on takes its place. Elsewhere 2 * 2**n slots are searched for
 * the row's input offset; a slot is replaced only when neither the previous output row nor
 * the current one reads it. Included once, by linear.c, after its LinearOps and Segment.
 *
 * With float values, under an identity block or where rows leave out corners (Blend.collapse
 * in linear_blend.h), each slot also records whether its input row is plain: every value it
 * reads finite, none -0 and none of magnitude below 2**-100 but +0. Then an element's other
 * channel tap (weight +0 times a finite value: +0 or -0) cannot change its sum: adding a
 * zero changes no value but a zero's sign, and the sum of the element's own terms is never
 * -0 (its largest weight is at least 0.5 per axis, so that term is +0 or of magnitude at
 * least 2**-108, and a sum is -0 only if every term is -0), so the fast identity sum is
 * ORT's sum bit for bit. Rows that are not plain take the exact identity sum. Plain rows
 * may also leave out the corners of weight +0 (Blend.collapse in linear_blend.h), by the
 * same argument.
 */

/* The outer axes' part of one output row: the input offset of its copied axes, and the two
 * taps (input offsets) and weights of each interpolated one, q = 0 innermost. */
typedef struct {
    int64_t base;
    int64_t lo[MAX_INTERP + 1], hi[MAX_INTERP + 1];
    float w_lo[MAX_INTERP + 1], w_hi[MAX_INTERP + 1];
} OuterTaps;

static inline void outer_taps(const LinearJob *job, const int64_t *position, OuterTaps *t)
{
    /* a local sum: a store to *t could, for the compiler, change the axes' tables */
    int64_t base = 0;
    int p = 0;
    for (int axis = job->n_outer - 1; axis >= 0; axis--) {
        const AxisRule *a = &job->axes[axis];
        if (a->kind == AXIS_BLEND) {
            axis_taps(a, position[axis], &t->lo[p], &t->hi[p], &t->w_lo[p], &t->w_hi[p]);
            p++;
        } else {
            base += axis_offset(a, position[axis]);
        }
    }
    t->base = base;
}

/* The corners of `now` read the input rows of `last`'s (their weights may differ). */
static inline int same_corners(const OuterTaps *now, const OuterTaps *last, int n_interp)
{
    int same = now->base == last->base;
    for (int q = 0; same && q < n_interp; q++)
        same = now->lo[q] == last->lo[q] && now->hi[q] == last->hi[q];
    return same;
}

typedef struct {
    char *rows;               /* the slots' expanded rows, slot_bytes each */
    int64_t *keys;            /* the input offset of the row each slot holds; -1: none */
    int64_t *ages;            /* when each slot was last read (the clock) */
    int64_t *plain;           /* whether each slot's input row is plain (check_plain) */
    int64_t slots, clock;
    /* rows found by number (cache_slots in linear_scratch.h): input row `offset / row_len`
     * in slot number & (slots - 1), the only slot that may hold it */
    int direct;
    int64_t row_len;
    size_t slot_bytes, acc_size;
    int check_plain;          /* float values, an identity block or collapse: rows checked */
    int plain_now;            /* the current output row's corners are all plain */
    int64_t last_slot[8];     /* corner c's slot for the previous output row (c < 8) */
    /* slots read since `protect` (ages above it) hold rows of the previous or the current
     * output row; `hand` goes round the others for the slot to replace */
    int64_t protect, row_start, hand;
} CornerCache;

static void cache_init(CornerCache *cache, const LinearJob *job, const Segment *seg,
                       char *scratch, const ScratchLayout *layout, int check_plain)
{
    cache->rows = scratch + layout->cache;
    cache->keys = (int64_t *)(void *)(scratch + layout->keys);
    cache->ages = (int64_t *)(void *)(scratch + layout->ages);
    cache->plain = (int64_t *)(void *)(scratch + layout->plain);
    cache->slots = (int64_t)layout->slots;
    cache->direct = layout->direct;
    cache->row_len = layout->row_len;
    cache->clock = 0;
    cache->acc_size = linear_types[job->src].acc_bytes;
    cache->slot_bytes = (size_t)seg->taps * (size_t)seg->stride * cache->acc_size + SLOT_PAD;
    cache->check_plain = check_plain;
    cache->plain_now = 1;
    cache->protect = cache->row_start = cache->hand = 0;
    for (int64_t t = 0; t < cache->slots; t++) {
        cache->keys[t] = -1;
        cache->ages[t] = 0;
        cache->plain[t] = 1;
        /* the pad is read (and never used) by the identity sums: defined bytes */
        memset(cache->rows + (size_t)(t + 1) * cache->slot_bytes - SLOT_PAD, 0, SLOT_PAD);
    }
    for (int c = 0; c < 8; c++)
        cache->last_slot[c] = 0;
}

/* Whether the input values [first, last] of the row at `row` are plain (PLAIN_LOW: the
 * smallest plain magnitude's bits, in linear.c). */
static int plain_values(const LinearJob *job, const LinearOps *ops, const char *row,
                        int64_t first, int64_t last)
{
    if (job->src == T_FLOAT32)
        return ops->plain_float32(row + (size_t)first * sizeof(float), last - first + 1);
    uint32_t bad = 0;
    for (int64_t i = first; i <= last; i++) {
        uint32_t bits;
        if (job->src == T_HALF) {
            uint16_t pattern;
            memcpy(&pattern, row + (size_t)i * sizeof pattern, sizeof pattern);
            memcpy(&bits, &job->lut[pattern], sizeof bits);
        } else {
            memcpy(&bits, row + (size_t)i * sizeof bits, sizeof bits);
        }
        uint32_t magnitude = bits & 0x7FFFFFFFu;
        bad |= (magnitude >= 0x7F800000u) | ((magnitude < PLAIN_LOW) & (bits != 0));
    }
    return bad == 0;
}

/* Whether the input row at `offset` is plain where the segment's taps read it (from its
 * first tap to its last). */
static inline int row_is_plain(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                               int64_t offset)
{
    return plain_values(job, ops, job->x + (size_t)offset * linear_types[job->src].bytes,
                        seg->off[0],
                        seg->off[(size_t)(seg->taps - 1) * (size_t)seg->stride
                                 + (size_t)seg->width - 1]);
}

/* The input row at `offset` gathered at the segment's taps into `into`. */
static void expand_row(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                       int64_t offset, char *into, size_t acc_size)
{
    const char *row = job->x + (size_t)offset * linear_types[job->src].bytes;
    if (seg->repeat) {
        /* low taps: a repeat; high taps: the low ones k positions on, but for the
         * segment's last k positions (clamped, or past the segment), which alone need a
         * place of their own, past the low taps (width >= tap_offset: the segment holds
         * whole groups of k) */
        ops->repeat[job->src](row + seg->repeat_from, seg->repeat_n, job->row_repeat,
                              job->block, into, job->lut);
        ops->expand[job->src](row, seg->off + (size_t)(seg->stride + seg->width)
                                  - seg->tap_offset,
                              (int64_t)seg->tap_offset, into + (size_t)seg->width * acc_size,
                              job->lut);
    } else {
        for (int t = 0; t < seg->taps; t++)
            ops->expand[job->src](row, seg->off + (size_t)t * (size_t)seg->stride, seg->width,
                                  into + (size_t)t * (size_t)seg->stride * acc_size, job->lut);
    }
}

/* The input row at `offset` expanded into `slot` (and checked), which held another. */
static inline __attribute__((always_inline)) void fill_slot(const LinearJob *job,
                                                            const LinearOps *ops,
                                                            const Segment *seg,
                                                            CornerCache *cache, int64_t slot,
                                                            int64_t offset)
{
    cache->keys[slot] = offset;
    expand_row(job, ops, seg, offset, cache->rows + (size_t)slot * cache->slot_bytes,
               cache->acc_size);
    if (cache->check_plain)
        cache->plain[slot] = row_is_plain(job, ops, seg, offset);
}

/* fill_slot, called: the rare path of direct_row, out of the corner loop */
static __attribute__((noinline)) void fill_slot_called(const LinearJob *job,
                                                       const LinearOps *ops,
                                                       const Segment *seg, CornerCache *cache,
                                                       int64_t slot, int64_t offset)
{
    fill_slot(job, ops, seg, cache, slot, offset);
}

/* The slot of the input row at `offset` where rows are found by number (cache->direct),
 * expanded there if it holds another row. */
static inline __attribute__((always_inline)) char *direct_row(const LinearJob *job,
                                                              const LinearOps *ops,
                                                              const Segment *seg,
                                                              CornerCache *cache,
                                                              int64_t offset)
{
    const int64_t slot = offset / cache->row_len & (cache->slots - 1);
    if (cache->keys[slot] != offset)
        fill_slot_called(job, ops, seg, cache, slot, offset);
    if (cache->check_plain)
        cache->plain_now &= (int)cache->plain[slot];
    return cache->rows + (size_t)slot * cache->slot_bytes;
}

/* The slot holding corner `corner`'s input row at `offset`, expanded there if no slot
 * holds it yet, where slots are searched. */
static inline char *corner_row(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                               CornerCache *cache, int64_t corner, int64_t offset)
{
    /* locals: the stores to the keys and ages below could, for the compiler, change the
     * cache's fields */
    int64_t *keys = cache->keys, *ages = cache->ages;
    const int64_t slots = cache->slots, clock = ++cache->clock;
    /* a corner most often reads the row it read for the previous output row or, when the
     * innermost interpolated axis moves on by one, the row its neighbour on that axis read */
    int64_t slot = -1;
    if (corner < 8 && keys[cache->last_slot[corner]] == offset)
        slot = cache->last_slot[corner];
    else if (corner < 7 && keys[cache->last_slot[corner | 1]] == offset)
        slot = cache->last_slot[corner | 1];
    /* else any slot that holds it (a select per slot: which one wins is data the branches
     * cannot predict) */
    if (slot < 0)
        for (int64_t t = 0; t < slots; t++)
            slot = keys[t] == offset ? t : slot;
    if (slot < 0) {
        /* the next slot round that neither the previous nor this output row reads: the rows
         * an output row reads next are among those (2 * 2**n slots, at most 2**n a row, so
         * one is always free) */
        do {
            slot = cache->hand;
            cache->hand = slot + 1 == slots ? 0 : slot + 1;
        } while (ages[slot] > cache->protect);
        fill_slot(job, ops, seg, cache, slot, offset);
    }
    ages[slot] = clock;
    if (corner < 8)
        cache->last_slot[corner] = slot;
    if (cache->check_plain)
        cache->plain_now &= (int)cache->plain[slot];
    return cache->rows + (size_t)slot * cache->slot_bytes;
}

/* Corner c's outer weights into factors[c * NI + q] (the high tap's on axis q where bit q
 * of c is set). */
static inline __attribute__((always_inline)) void corner_factors_n(const OuterTaps *outer,
                                                                   const int NI,
                                                                   float *factors)
{
    for (int64_t corner = 0; corner < ((int64_t)1 << NI); corner++)
        for (int q = 0; q < NI; q++)
            factors[corner * NI + q] = (corner >> q) & 1 ? outer->w_hi[q] : outer->w_lo[q];
}

/* The same, unrolled for the counts of axes that volumes and images have. */
static inline void corner_factors(const OuterTaps *outer, int n_interp, float *factors)
{
    switch (n_interp) {
    case 0: return;
    case 1: corner_factors_n(outer, 1, factors); return;
    case 2: corner_factors_n(outer, 2, factors); return;
    case 3: corner_factors_n(outer, 3, factors); return;
    default: corner_factors_n(outer, n_interp, factors); return;
    }
}

/* The input offset of corner `corner`'s row (bit q: the high tap on axis q). */
static inline __attribute__((always_inline)) int64_t corner_offset(const OuterTaps *outer,
                                                                   const int n_interp,
                                                                   int64_t corner)
{
    int64_t offset = outer->base;
    for (int q = 0; q < n_interp; q++)
        offset += (corner >> q) & 1 ? outer->hi[q] : outer->lo[q];
    return offset;
}

/* The tap tables of each corner's expanded row into `rows` (corner c's tap t at c * taps + t),
 * the counts of axes and taps constant where they are small: the loops then unroll. */
static inline __attribute__((always_inline)) void corner_tables_n(
    const LinearJob *job, const LinearOps *ops, const Segment *seg, CornerCache *cache,
    const OuterTaps *outer, const int n_interp, const int taps, void **rows)
{
    const size_t tap_bytes = seg->tap_offset * cache->acc_size;
    /* two loops: each keeps its own lookup's values in registers */
    if (cache->direct) {
        for (int64_t corner = 0; corner < ((int64_t)1 << n_interp); corner++) {
            char *row = direct_row(job, ops, seg, cache, corner_offset(outer, n_interp, corner));
            for (int t = 0; t < taps; t++)
                rows[corner * taps + t] = row + (size_t)t * tap_bytes;
        }
        return;
    }
    for (int64_t corner = 0; corner < ((int64_t)1 << n_interp); corner++) {
        char *row = corner_row(job, ops, seg, cache, corner,
                               corner_offset(outer, n_interp, corner));
        for (int t = 0; t < taps; t++)
            rows[corner * taps + t] = row + (size_t)t * tap_bytes;
    }
}

/* Each corner's outer weights into `factors` (corner_factors) and, unless it reads the rows
 * of the previous output row (`same`), its expanded rows' tap tables into `rows` (corner
 * c's tap t at c * taps + t). Returns whether every corner row is plain. */
static inline int corner_rows(const LinearJob *job, const LinearOps *ops, const Segment *seg,
                              CornerCache *cache, const OuterTaps *outer, int same,
                              float *factors, void **rows)
{
    const int n_interp = job->n_interp, taps = seg->taps;
    corner_factors(outer, n_interp, factors);
    if (same)
        return cache->plain_now;
    cache->plain_now = 1;
    cache->protect = cache->row_start;
    cache->row_start = cache->clock;
    if (n_interp == 1 && taps == 2)
        corner_tables_n(job, ops, seg, cache, outer, 1, 2, rows);
    else if (n_interp == 2 && taps == 2)
        corner_tables_n(job, ops, seg, cache, outer, 2, 2, rows);
    else if (n_interp == 3 && taps == 2)
        corner_tables_n(job, ops, seg, cache, outer, 3, 2, rows);
    else
        corner_tables_n(job, ops, seg, cache, outer, n_interp, taps, rows);
    return cache->plain_now;
}
