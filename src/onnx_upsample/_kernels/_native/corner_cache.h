/* Step 2 of a linear work item (linear.h): the corners an output row blends, and the cache
 * of expanded input rows they read.
 *
 * An output row blends the input rows of its 2**n outer corners (n interpolated outer axes),
 * each gathered at the segment's taps and converted to the accumulation type: an "expanded"
 * row of `taps` tables. Neighbouring output rows mostly read the same input rows (a scale of
 * 2 reads each twice), so expanded rows live in slots of the worker's scratch. Where the
 * rows of two steps of the outermost interpolated axis fit in a bounded number of slots
 * (linear_scratch.c's cache_slots; a volume's depth pairs read each input plane twice, a
 * sweep apart), each input row has the one slot its row number gives: found at once, kept
 * until a row that many rows on takes its place. Elsewhere 2 * 2**n slots are searched for
 * the row's input offset; a slot is replaced only when neither the previous output row nor
 * the current one reads it.
 *
 * Where the blend asks (float values under an identity block, or rows that may leave out
 * corners: linear_blend.h), each slot also records whether its input row is plain
 * (linear_io.h) where the segment reads it, checked once as it is expanded.
 */
#ifndef ONNX_UPSAMPLE_CORNER_CACHE_H
#define ONNX_UPSAMPLE_CORNER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "axis_rule.h"
#include "compiler.h"
#include "linear_job.h"
#include "linear_io.h"
#include "linear_scratch.h"
#include "linear_taps.h"

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

/* Corner c's outer weights into factors[c * NI + q] (the high tap's on axis q where bit q
 * of c is set). */
ALWAYS_INLINE void corner_factors_n(const OuterTaps *outer, const int NI, float *factors)
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

/* Corners whose slot for the previous output row is remembered (the first lookup tried). */
#define TRACKED_CORNERS 8

typedef struct {
    const LinearJob *job;
    const LinearIo *io;
    const Segment *seg;
    char *rows;               /* the slots' expanded rows, slot_bytes each */
    int64_t *keys;            /* the input offset of the row each slot holds; -1: none */
    int64_t *ages;            /* when each slot was last read (the clock) */
    int64_t *plain;           /* whether each slot's input row is plain */
    int64_t slots, clock;
    /* rows found by number (linear_scratch.c's cache_slots): input row `offset / row_len`
     * in slot number & (slots - 1), the only slot that may hold it */
    int direct;
    int64_t row_len;
    size_t slot_bytes, acc_size;
    int check_plain;          /* each row is checked plain as it is expanded */
    int plain_now;            /* the current output row's corners are all plain */
    int64_t last_slot[TRACKED_CORNERS]; /* corner c's slot for the previous output row */
    /* slots read since `protect` (ages above it) hold rows of the previous or the current
     * output row; `hand` goes round the others for the slot to replace */
    int64_t protect, row_start, hand;
} CornerCache;

/* An empty cache in the worker's scratch, for the segment's rows. */
void cache_init(CornerCache *cache, const LinearJob *job, const Segment *seg, char *scratch,
                const ScratchLayout *layout, int check_plain);

/* Each corner's outer weights into `factors` (corner_factors) and, unless it reads the rows
 * of the previous output row (`same`), its expanded rows' tap tables into `rows` (corner
 * c's tap t at c * taps + t), expanding the rows no slot holds. Returns whether every corner
 * row is plain (1 where rows are not checked). */
int corner_rows(CornerCache *cache, const OuterTaps *outer, int same, float *factors,
                void **rows);

#endif
