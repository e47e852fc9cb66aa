/* The linear kernel's work item (linear.h): a range of output rows times a segment of the
 * row axis. Its taps (linear_taps.h) and blend plan (linear_blend.h) are made once; then the
 * rows, in C order over the outer axes, each from its corner rows (corner_cache.h). Output
 * rows that read the same input rows (rows 2k and 2k + 1 at x2; whole sweeps of the
 * innermost outer axis at x2 on the next one, as in a volume) are blended in pairs, each
 * corner row loaded once for both, each row's sum still in its own order.
 */
#include "linear.h"

#include <stdlib.h>

#include "compiler.h"
#include "corner_cache.h"
#include "linear_blend.h"
#include "linear_scratch.h"
#include "linear_taps.h"
#include "path_counts.h"
#include "stream.h"
#include "work_split.h"

/* Terms (corner rows times taps) whose tables fit on the stack; more go on the heap. */
#define STACK_TERMS 8

/* What every row of an item reads, set once. */
typedef struct {
    const LinearJob *job;
    Blend *blend;
    CornerCache *cache;
    float *factors, *factors2;  /* the outer weights of a row and of the second of a pair */
    void **rows;              /* each corner row's tap tables */
    char *out;                /* the segment's first element of output row 0 */
    size_t row_bytes;         /* bytes from an output row to the next */
} ItemRows;

/* Where the rows of an item are: the output position (C order over the outer axes), the
 * outer taps of this row (`now`) and of the last one that read other input rows. */
typedef struct {
    int64_t position[MAX_OUTER];
    OuterTaps taps[2];
    OuterTaps *now, *last;
} RowWalk;

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

/* The walk at row r of the whole output (C order). */
static void walk_start(const LinearJob *job, int64_t r, RowWalk *walk)
{
    for (int axis = job->n_outer - 1; axis >= 0; axis--) {
        walk->position[axis] = r % job->axes[axis].n_out;
        r /= job->axes[axis].n_out;
    }
    walk->now = &walk->taps[0];
    walk->last = &walk->taps[1];
}

/* The walk's current row's corner rows (the taps in `now`), into items->rows and
 * items->factors; `same`: the previous row read the same input rows. Then `last` holds
 * this row's taps (no copy: the next row's go where the older ones were). Returns whether
 * every corner row is plain. */
ALWAYS_INLINE int walk_corners(const ItemRows *items, RowWalk *walk, int same)
{
    int plain = corner_rows(items->cache, walk->now, same, items->factors, items->rows);
    if (!same) {
        OuterTaps *older = walk->last;
        walk->last = walk->now;
        walk->now = older;
    }
    return plain;
}

/* Whether the rows from r (the first of a sweep of the innermost outer axis) and the next
 * sweep, on the second innermost outer axis, read the same input rows, and both sweeps lie
 * in the item (rows up to r1). Rows whose outer positions differ on one axis read the same
 * input rows when that axis is interpolated with the same taps at both positions: then
 * every row of the second sweep pairs with its row in the first. */
static int sweep_pair(const LinearJob *job, const RowWalk *walk, int64_t r, int64_t r1)
{
    const int n = job->n_outer;
    const int64_t *position = walk->position;
    if (n < 2 || position[n - 1] != 0 || job->axes[n - 2].kind != AXIS_BLEND
        || position[n - 2] + 1 >= job->axes[n - 2].n_out
        || r + 2 * job->axes[n - 1].n_out > r1)
        return 0;
    const int q = job->axes[n - 1].kind == AXIS_BLEND;
    int64_t lo, hi;
    float w_lo, w_hi;
    axis_taps(&job->axes[n - 2], position[n - 2] + 1, &lo, &hi, &w_lo, &w_hi);
    return lo == walk->now->lo[q] && hi == walk->now->hi[q];
}

/* Rows r + i and r + sweep + i, i = 0 .. sweep - 1, read the same input rows: each pair is
 * blended at once, and each input row is expanded once for both sweeps of the innermost
 * outer axis. Returns the row after the second sweep. */
static int64_t sweep_pairs(const ItemRows *items, RowWalk *walk, int64_t r, int64_t r0)
{
    const LinearJob *job = items->job;
    const int n = job->n_outer, n_interp = job->n_interp;
    const int64_t sweep = job->axes[n - 1].n_out;
    const int q = job->axes[n - 1].kind == AXIS_BLEND; /* the second sweep's axis */
    int64_t unused_lo, unused_hi;
    float w_second[AXIS_TAPS];
    axis_taps(&job->axes[n - 2], walk->position[n - 2] + 1, &unused_lo, &unused_hi,
              &w_second[0], &w_second[1]);
    for (int64_t i = 0; i < sweep; i++, r++) {
        if (i > 0) {
            next_position(job, walk->position);
            outer_taps(job, walk->position, walk->now);
        }
        const int same = r > r0 && same_corners(walk->now, walk->last, n_interp);
        const int plain = walk_corners(items, walk, same);
        /* the second row's outer weights: the first's, but on the second sweep's axis (its
         * taps are the first row's: `last` holds them, or `now` where they were the same) */
        OuterTaps *first = same ? walk->now : walk->last;
        const float first_lo = first->w_lo[q], first_hi = first->w_hi[q];
        first->w_lo[q] = w_second[0];
        first->w_hi[q] = w_second[1];
        corner_factors(first, n_interp, items->factors2);
        first->w_lo[q] = first_lo;
        first->w_hi[q] = first_hi;
        char *o = items->out + (size_t)r * items->row_bytes;
        blend_pair(job, items->blend, plain, o, o + (size_t)sweep * items->row_bytes);
    }
    items->blend->counts->n[PATH_SWEEP_PAIRS] += (uint64_t)sweep;
    /* on to the row after the second sweep */
    walk->position[n - 2]++;
    return r + sweep;
}

/* The item's rows [r0, r1): single rows, pairs of neighbours, pairs of sweeps. */
static void item_rows_blend(const ItemRows *items, RowWalk *walk, int64_t r0, int64_t r1)
{
    const LinearJob *job = items->job;
    const int vec = items->blend->vec;
    int peeked = 0; /* `now` holds the taps of `position` already */
    for (int64_t r = r0; r < r1; r++) {
        if (!peeked) {
            if (r > r0)
                next_position(job, walk->position);
            outer_taps(job, walk->position, walk->now);
        }
        peeked = 0;
        if (vec && sweep_pair(job, walk, r, r1)) {
            r = sweep_pairs(items, walk, r, r0) - 1;
            continue;
        }
        /* the same input rows as the previous output row (every other row at x2 on an
         * outer axis): the corners' expanded rows are in place, only their weights change */
        const int same = r > r0 && same_corners(walk->now, walk->last, job->n_interp);
        const int plain = walk_corners(items, walk, same);
        char *o = items->out + (size_t)r * items->row_bytes;
        if (vec && r + 1 < r1) {
            /* the next row, if it reads the same input rows, is blended with this one */
            next_position(job, walk->position);
            outer_taps(job, walk->position, walk->now);
            if (same_corners(walk->now, walk->last, job->n_interp)) {
                corner_factors(walk->now, job->n_interp, items->factors2);
                blend_pair(job, items->blend, plain, o, o + items->row_bytes);
                r++;
                continue;
            }
            peeked = 1;
        }
        blend_row(job, items->blend, items->factors, plain, o);
    }
}

/* The worker's scratch, made on its first item; NULL where memory ran out. */
static char *worker_scratch(const LinearJob *job, int worker, size_t bytes)
{
    if (job->scratch[worker] == NULL)
        job->scratch[worker] = malloc(bytes);
    return (char *)job->scratch[worker];
}

int linear_item(void *context, int64_t item, int worker)
{
    /* a copy the loops read: the compiler then knows that no call changes it, and keeps
     * its fields in registers across the calls of each row */
    const LinearJob job_copy = *(const LinearJob *)context;
    const LinearJob *job = &job_copy;
    int64_t r0, r1;
    const int64_t s = item_rows(item, job->out_rows, job->n_blocks, job->n_segments, &r0, &r1);
    Segment seg;
    if (r0 >= r1 || !segment_range(job->segment_base + s, job->segment, job->row_len, &seg.j0,
                                   &seg.j1))
        return 0;
    const ScratchLayout layout = scratch_layout(job);
    char *scratch = worker_scratch(job, worker, layout.total);
    if (scratch == NULL)
        return -1;
    const TapTables tables = {(int64_t *)(void *)(scratch + layout.off),
                              (float *)(void *)(scratch + layout.weights),
                              (uint32_t *)(void *)(scratch + layout.last)};
    segment_taps(job, &tables, &seg);
    /* each corner row's tap tables, filled for each output row */
    const int64_t terms = ((int64_t)1 << job->n_interp) * seg.taps;
    void *stack_rows[STACK_TERMS];
    void **rows_many = terms > STACK_TERMS ? (void **)malloc((size_t)terms * sizeof(void *))
                                           : NULL;
    if (terms > STACK_TERMS && rows_many == NULL)
        return -1;
    void **rows = rows_many ? rows_many : stack_rows;
    float *factors = (float *)(void *)(scratch + layout.factors);
    float *factors2 = (float *)(void *)(scratch + layout.factors2);
    PathCounts counts = {{0}};
    Blend blend;
    const BlendRows blend_rows = {scratch + layout.acc, scratch + layout.stage, rows, factors,
                                  factors2};
    plan_blend(job, &seg, &blend_rows, layout.direct, &counts, &blend);
    CornerCache cache;
    cache_init(&cache, job, &seg, scratch, &layout,
               blend.float_values && (job->identity_step || blend.collapse));
    counts.n[cache.direct ? PATH_DIRECT_CACHE : PATH_SEARCHED_CACHE]++;
    counts.n[PATH_LINEAR_ROWS] = (uint64_t)(r1 - r0);
    counts.n[PATH_STREAMED_ROWS] = job->stream ? (uint64_t)(r1 - r0) : 0;
    const size_t dst_size = blend.dst_size;
    const ItemRows items = {
        job, &blend, &cache, factors, factors2, rows,
        job->out + (size_t)((seg.j0 - job->col_first) * job->block) * dst_size,
        (size_t)(job->out_row_len * job->block) * dst_size};
    RowWalk walk;
    walk_start(job, r0 + job->row_base, &walk);
    /* rows are numbered from the call's first (r0 of out_rows) */
    item_rows_blend(&items, &walk, r0, r1);
    blend_finish(&blend);
    free(rows_many);
    if (job->stream)
        stream_done();
    path_counts_add(&counts);
    return 0;
}
