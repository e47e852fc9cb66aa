/* The corner rows of a linear work item, and their cache (corner_cache.h). */
#include "corner_cache.h"

#include <string.h>

#include "linear_types.h"

void cache_init(CornerCache *cache, const LinearJob *job, const Segment *seg, char *scratch,
                const ScratchLayout *layout, int check_plain)
{
    cache->job = job;
    cache->io = linear_io(job->isa);
    cache->seg = seg;
    cache->rows = scratch + layout->cache;
    cache->keys = (int64_t *)(void *)(scratch + layout->keys);
    cache->ages = (int64_t *)(void *)(scratch + layout->ages);
    cache->plain = (int64_t *)(void *)(scratch + layout->plain);
    cache->slots = (int64_t)layout->slots;
    cache->direct = layout->direct;
    cache->row_len = layout->row_len;
    cache->clock = 0;
    cache->acc_size = linear_types[job->src].acc_bytes;
    cache->slot_bytes = layout->slot_bytes;
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
    for (int c = 0; c < TRACKED_CORNERS; c++)
        cache->last_slot[c] = 0;
}

/* Whether the input values [first, last] of the row at `row` are plain (linear_io.h). */
static int plain_values(const CornerCache *cache, const char *row, int64_t first, int64_t last)
{
    const LinearJob *job = cache->job;
    if (job->src == T_FLOAT32)
        return cache->io->plain_float32(row + (size_t)first * sizeof(float), last - first + 1);
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
static int row_is_plain(const CornerCache *cache, int64_t offset)
{
    const Segment *seg = cache->seg;
    const LinearJob *job = cache->job;
    return plain_values(cache, job->x + (size_t)offset * linear_types[job->src].bytes,
                        seg->off[0],
                        seg->off[(size_t)(seg->taps - 1) * (size_t)seg->stride
                                 + (size_t)seg->width - 1]);
}

/* The input row at `offset` gathered at the segment's taps into `into`. */
static void expand_row(const CornerCache *cache, int64_t offset, char *into)
{
    const LinearJob *job = cache->job;
    const Segment *seg = cache->seg;
    const LinearIo *io = cache->io;
    const size_t acc_size = cache->acc_size;
    const char *row = job->x + (size_t)offset * linear_types[job->src].bytes;
    if (seg->repeat) {
        /* low taps: a repeat; high taps: the low ones k positions on, but for the
         * segment's last k positions (clamped, or past the segment), which alone need a
         * place of their own, past the low taps (width >= tap_offset: the segment holds
         * whole groups of k) */
        io->repeat[job->src](row + seg->repeat_from, seg->repeat_n, job->row_repeat,
                             job->block, into, job->lut);
        io->expand[job->src](row, seg->off + (size_t)(seg->stride + seg->width)
                                 - seg->tap_offset,
                             (int64_t)seg->tap_offset, into + (size_t)seg->width * acc_size,
                             job->lut);
    } else {
        for (int t = 0; t < seg->taps; t++)
            io->expand[job->src](row, seg->off + (size_t)t * (size_t)seg->stride, seg->width,
                                 into + (size_t)t * (size_t)seg->stride * acc_size, job->lut);
    }
}

/* The input row at `offset` expanded into `slot` (and checked), which held another. */
ALWAYS_INLINE void fill_slot(CornerCache *cache, int64_t slot, int64_t offset)
{
    cache->keys[slot] = offset;
    expand_row(cache, offset, cache->rows + (size_t)slot * cache->slot_bytes);
    if (cache->check_plain)
        cache->plain[slot] = row_is_plain(cache, offset);
}

/* fill_slot, called: the rare path of direct_row, out of the corner loop */
NOINLINE void fill_slot_called(CornerCache *cache, int64_t slot, int64_t offset)
{
    fill_slot(cache, slot, offset);
}

/* The slot of the input row at `offset` where rows are found by number (cache->direct),
 * expanded there if it holds another row. */
ALWAYS_INLINE char *direct_row(CornerCache *cache, int64_t offset)
{
    const int64_t slot = offset / cache->row_len & (cache->slots - 1);
    if (cache->keys[slot] != offset)
        fill_slot_called(cache, slot, offset);
    if (cache->check_plain)
        cache->plain_now &= (int)cache->plain[slot];
    return cache->rows + (size_t)slot * cache->slot_bytes;
}

/* The slot holding corner `corner`'s input row at `offset`, expanded there if no slot
 * holds it yet, where slots are searched. */
static inline char *corner_row(CornerCache *cache, int64_t corner, int64_t offset)
{
    /* locals: the stores to the keys and ages below could, for the compiler, change the
     * cache's fields */
    int64_t *keys = cache->keys, *ages = cache->ages;
    const int64_t slots = cache->slots, clock = ++cache->clock;
    /* a corner most often reads the row it read for the previous output row or, when the
     * innermost interpolated axis moves on by one, the row its neighbour on that axis read */
    int64_t slot = -1;
    if (corner < TRACKED_CORNERS && keys[cache->last_slot[corner]] == offset)
        slot = cache->last_slot[corner];
    else if (corner < TRACKED_CORNERS - 1 && keys[cache->last_slot[corner | 1]] == offset)
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
        fill_slot(cache, slot, offset);
    }
    ages[slot] = clock;
    if (corner < TRACKED_CORNERS)
        cache->last_slot[corner] = slot;
    if (cache->check_plain)
        cache->plain_now &= (int)cache->plain[slot];
    return cache->rows + (size_t)slot * cache->slot_bytes;
}

/* The input offset of corner `corner`'s row (bit q: the high tap on axis q). */
ALWAYS_INLINE int64_t corner_offset(const OuterTaps *outer, const int n_interp, int64_t corner)
{
    int64_t offset = outer->base;
    for (int q = 0; q < n_interp; q++)
        offset += (corner >> q) & 1 ? outer->hi[q] : outer->lo[q];
    return offset;
}

/* The tap tables of each corner's expanded row into `rows` (corner c's tap t at c * taps + t),
 * the counts of axes and taps constant where they are small: the loops then unroll. */
ALWAYS_INLINE void corner_tables_n(CornerCache *cache, const OuterTaps *outer,
                                   const int n_interp, const int taps, void **rows)
{
    const size_t tap_bytes = cache->seg->tap_offset * cache->acc_size;
    /* two loops: each keeps its own lookup's values in registers */
    if (cache->direct) {
        for (int64_t corner = 0; corner < ((int64_t)1 << n_interp); corner++) {
            char *row = direct_row(cache, corner_offset(outer, n_interp, corner));
            for (int t = 0; t < taps; t++)
                rows[corner * taps + t] = row + (size_t)t * tap_bytes;
        }
        return;
    }
    for (int64_t corner = 0; corner < ((int64_t)1 << n_interp); corner++) {
        char *row = corner_row(cache, corner, corner_offset(outer, n_interp, corner));
        for (int t = 0; t < taps; t++)
            rows[corner * taps + t] = row + (size_t)t * tap_bytes;
    }
}

int corner_rows(CornerCache *cache, const OuterTaps *outer, int same, float *factors,
                void **rows)
{
    const int n_interp = cache->job->n_interp, taps = cache->seg->taps;
    corner_factors(outer, n_interp, factors);
    if (same)
        return cache->plain_now;
    cache->plain_now = 1;
    cache->protect = cache->row_start;
    cache->row_start = cache->clock;
    if (n_interp == 1 && taps == 2)
        corner_tables_n(cache, outer, 1, 2, rows);
    else if (n_interp == 2 && taps == 2)
        corner_tables_n(cache, outer, 2, 2, rows);
    else if (n_interp == 3 && taps == 2)
        corner_tables_n(cache, outer, 3, 2, rows);
    else
        corner_tables_n(cache, outer, n_interp, taps, rows);
    return cache->plain_now;
}
