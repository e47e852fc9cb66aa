/* The nearest kernel's work item (nearest.h): the rows of a block, each a segment of the
 * row axis, copied, repeated or gathered (nearest_rows.h) from the input row its outer
 * position reads. */
#include "nearest.h"

#include <stdlib.h>
#include <string.h>

#include "nearest_rows.h"
#include "path_counts.h"
#include "stream.h"
#include "work_split.h"

/* Set `index` to the outer multi-index of row `row` (C order). */
static void start_index(int64_t row, int n, const AxisRule *axes, int64_t *index)
{
    for (int axis = n - 1; axis >= 0; axis--) {
        index[axis] = row % axes[axis].n_out;
        row /= axes[axis].n_out;
    }
}

/* Advance `index` to the next row; returns the outermost axis that changed. */
static int next_index(int n, const AxisRule *axes, int64_t *index)
{
    int axis = n - 1;
    while (axis > 0 && index[axis] + 1 == axes[axis].n_out) {
        index[axis] = 0;
        axis--;
    }
    index[axis]++;
    return axis;
}

/* Input offset of the outer multi-index, leaving out the innermost outer axis. */
static int64_t outer_offset(int n, const int64_t *index, const AxisRule *axes)
{
    int64_t offset = 0;
    for (int axis = 0; axis < n - 1; axis++)
        offset += axis_offset(&axes[axis], index[axis]);
    return offset;
}

/* One work item's segment of the row axis, positions [j0, j1), and how its rows are made. */
typedef struct {
    const NearestJob *job;
    const NearestLoops *loops;   /* the job's vector row loops */
    RepeatPlan repeat;        /* ROW_REPEAT: the rows' repeat */
    /* streaming: the repeat of rows assembled to be streamed, with the job's loops but the
     * repeat by 2 (from input that comes from memory, into a buffer in L1: the compiler's
     * loops for it keep up with memory there, and the vector ones measured slower for
     * 8-byte positions) */
    RepeatPlan streamed;
    NearestLoops streamed_loops;
    GatherPlan gather;        /* ROW_GATHER: the segment's positions and chunks */
    char *buffer;             /* streaming: where a piece of a row is assembled */
    int64_t j0, j1;
    int64_t f0;               /* the segment's first element in a row */
    size_t position_bytes, width_bytes;
    int stream;               /* rows are written with streaming stores */
    int64_t piece;            /* streaming: positions assembled at a time */
    int one_piece;            /* streaming: the buffer holds the whole segment */
} NearestSegment;

/* The segment's scratch: the gathered row's input positions (computed once per item: every
 * row of the item reuses them) and their chunked plan, and the streaming buffer. -1 where
 * it cannot be had. */
static int segment_scratch(const NearestJob *job, int worker, NearestSegment *seg)
{
    const int chunked = job->row_kind == ROW_GATHER && seg->loops->chunks
        && (seg->position_bytes == 4 || seg->position_bytes == 8);
    const size_t plan_bytes = chunked ? chunk_plan_bytes(job->segment) : 0;
    const size_t table_bytes = job->row_kind == ROW_GATHER
        ? align_up((size_t)job->segment * sizeof(int64_t), CACHE_LINE_BYTES) + plan_bytes : 0;
    int64_t *table = NULL;
    seg->buffer = NULL;
    if (table_bytes || (seg->stream && job->row_kind != ROW_COPY)) {
        if (job->scratch[worker] == NULL) {
            job->scratch[worker] = malloc(table_bytes + (job->stream ? STREAM_BUFFER_BYTES : 0));
            if (job->scratch[worker] == NULL)
                return -1;
        }
        table = (int64_t *)job->scratch[worker];
        seg->buffer = (char *)job->scratch[worker] + table_bytes;
    }
    GatherPlan *gather = &seg->gather;
    *gather = (GatherPlan){{NULL, NULL, NULL, 0, seg->position_bytes}, table, seg->j1 - seg->j0,
                           job->block, job->unit};
    if (job->row_kind != ROW_GATHER)
        return 0;
    const AxisRule *row_axis = &job->axes[job->n_outer];
    for (int64_t j = seg->j0; j < seg->j1; j++)
        table[j - seg->j0] = rule_nearest(row_axis, j);
    if (chunked) {
        char *at = (char *)table + table_bytes - plan_bytes;
        ChunkPlan *plan = &gather->chunks;
        plan->start = (int64_t *)(void *)at;
        plan->dwords = (int32_t *)(void *)(at + (size_t)(job->segment / 4 + 1) * sizeof(int64_t));
        plan->per = (int64_t)(32 / seg->position_bytes);
        if (plan_chunks(plan, table, seg->j1 - seg->j0, row_axis->in_len))
            plan->run = seg->loops->chunks;
    }
    return 0;
}

/* How the segment's rows are made, and its scratch; -1 where the scratch cannot be had. */
static int segment_plan(const NearestJob *job, int worker, NearestSegment *seg)
{
    seg->job = job;
    seg->loops = nearest_loops(job->isa);
    seg->repeat = (RepeatPlan){seg->loops, job->repeat, job->block, job->unit};
    seg->streamed_loops = *seg->loops;
    seg->streamed_loops.twice = NULL;
    seg->streamed = seg->repeat;
    seg->streamed.loops = &seg->streamed_loops;
    seg->position_bytes = (size_t)(job->block * job->unit);
    seg->f0 = seg->j0 * job->block;
    seg->width_bytes = (size_t)((seg->j1 - seg->j0) * job->block * job->unit);
    /* streaming stores: rows are assembled `piece` positions at a time in a small buffer
     * (a whole number of repeat groups), then streamed out; copied rows stream directly */
    seg->piece = (int64_t)(STREAM_BUFFER_BYTES / seg->position_bytes);
    if (job->row_kind == ROW_REPEAT)
        seg->piece -= seg->piece % job->repeat;
    seg->stream = job->stream && (job->row_kind == ROW_COPY || seg->piece >= 1);
    seg->one_piece = seg->stream && seg->j1 - seg->j0 <= seg->piece;
    return segment_scratch(job, worker, seg);
}

/* Positions [p, q) of the output row that reads the input row at `offset`, into the
 * streaming buffer: a repeat (p a multiple of the factor) or a gather through the
 * segment's table. */
static inline void produce_piece(const NearestSegment *seg, int64_t offset, int64_t p, int64_t q)
{
    const NearestJob *job = seg->job;
    const size_t unit = (size_t)job->unit;
    if (job->row_kind == ROW_REPEAT) {
        const char *src = job->x + (size_t)(offset + (p / job->repeat) * job->block) * unit;
        repeat_row(&seg->streamed, src, seg->buffer, (q - p) / job->repeat);
    } else {
        gather_piece(&seg->gather, job->x + (size_t)offset * unit, seg->buffer,
                     p - seg->j0, q - seg->j0);
    }
}

/* One output row at dst, reading the input row at `offset`, with streaming stores. */
static inline void stream_row(const NearestSegment *seg, int64_t offset, int64_t previous,
                              char *dst)
{
    const NearestJob *job = seg->job;
    const int64_t j0 = seg->j0, j1 = seg->j1;
    if (job->row_kind == ROW_COPY) {
        stream_copy(dst, job->x + (size_t)(offset + seg->f0) * (size_t)job->unit,
                    seg->width_bytes);
    } else if (seg->one_piece) {
        if (offset != previous)
            produce_piece(seg, offset, j0, j1);
        stream_copy(dst, seg->buffer, seg->width_bytes);
    } else {
        for (int64_t c = j0; c < j1; c += seg->piece) {
            int64_t e = c + seg->piece < j1 ? c + seg->piece : j1;
            produce_piece(seg, offset, c, e);
            stream_copy(dst + (size_t)(c - j0) * seg->position_bytes, seg->buffer,
                        (size_t)(e - c) * seg->position_bytes);
        }
    }
}

/* The rows of one outer prefix that an item makes: output rows [first, last) of the
 * innermost outer axis, from the input rows of the prefix at `base`. */
typedef struct {
    int64_t first, last;
    int64_t base;
    char *dst;                /* the first row's segment in the output */
} PrefixRows;

/* x2 on the row and on the axis above it (output row p reads input row p / 2): the rows of
 * the prefix as a plane, expanded by one loop over its input rows. Returns the first row
 * not made (the last one, when it is the first of a pair, is left to the row loop). */
ALWAYS_INLINE int64_t plane_rows(const NearestSegment *seg, const PrefixRows *rows,
                                 const PlaneShape *plane, int64_t repeat_start)
{
    const NearestJob *job = seg->job;
    int64_t p = rows->first;
    char *dst = rows->dst;
    const char *src = job->x + (size_t)(rows->base + repeat_start) * (size_t)job->unit
        + (size_t)(p / 2) * plane->step;
    if (p & 1) { /* the second of a pair whose first is in the item before */
        repeat_row(&seg->repeat, src, dst, (int64_t)(plane->n / (size_t)job->unit));
        src += plane->step;
        dst += plane->row;
        p++;
    }
    const int64_t pairs = (rows->last - p) / 2;
    seg->loops->twice_plane(src, dst, pairs, plane);
    return p + 2 * pairs;
}

/* What every row of an item shares, worked out once: integer divisions cost tens of
 * cycles, none inside the row loop. */
typedef struct {
    const AxisRule *inner;    /* the innermost outer axis */
    const int64_t *inner_table;   /* its offsets, where made once (axis_make_tables) */
    int64_t repeat_start;     /* ROW_REPEAT: the segment's first input element in a row */
    int64_t repeat_count;     /* ROW_REPEAT: the segment's input positions */
    size_t row_bytes;         /* bytes from an output row to the next */
    int pair_rows;            /* rows of a repeat by 2 of single elements, made in pairs */
    int plane;                /* ...and whole planes where the axis above is at x2 too */
} RowShape;

/* The rows [rows->first, rows->last) of one outer prefix (see PrefixRows), one at a time,
 * or in pairs where they repeat by 2 on two axes. `previous`: the input row the output row
 * before them read (-1: none, or not known); returns the one the last read. */
ALWAYS_INLINE int64_t prefix_rows(const NearestSegment *seg, const RowShape *shape,
                                  const PrefixRows *rows, int64_t previous, PathCounts *counts)
{
    const NearestJob *job = seg->job;
    const AxisRule *inner = shape->inner;
    const int64_t *inner_table = shape->inner_table;
    const size_t unit = (size_t)job->unit, row_bytes = shape->row_bytes;
    char *dst = rows->dst;
    for (int64_t p = rows->first; p < rows->last; p++, dst += row_bytes) {
        const int64_t inner_offset = inner_table ? inner_table[p] : axis_offset(inner, p);
        const int64_t offset = rows->base + inner_offset;
        if (seg->stream) {
            stream_row(seg, offset, previous, dst);
        } else if (shape->pair_rows && offset != previous && p + 1 < rows->last
                   && (inner_table ? inner_table[p + 1] : axis_offset(inner, p + 1))
                          == inner_offset) {
            /* the next row reads the same input row (an integer scale on the axis above):
             * write both from one pass over the input, as x2 on both axes needs */
            repeat_two_rows(seg->loops->twice,
                            job->x + (size_t)(offset + shape->repeat_start) * unit, dst,
                            row_bytes, shape->repeat_count, job->unit);
            counts->n[PATH_NEAREST_ROW_PAIRS]++;
            p++;
            dst += row_bytes;
        } else if (job->row_kind == ROW_COPY) {
            memcpy(dst, job->x + (size_t)(offset + seg->f0) * unit, seg->width_bytes);
        } else if (offset == previous) {
            /* same input row as the row above: copy that row (a repeat of single elements
             * is faster from the input, which is k times shorter) */
            memcpy(dst, dst - row_bytes, seg->width_bytes);
        } else if (job->row_kind == ROW_REPEAT) {
            repeat_row(&seg->repeat, job->x + (size_t)(offset + shape->repeat_start) * unit,
                       dst, shape->repeat_count);
        } else {
            gather_piece(&seg->gather, job->x + (size_t)offset * unit, dst, 0,
                         seg->j1 - seg->j0);
        }
        previous = offset;
    }
    return previous;
}

static RowShape row_shape(const NearestSegment *seg)
{
    const NearestJob *job = seg->job;
    RowShape shape;
    shape.inner = &job->axes[job->n_outer - 1];
    shape.inner_table = shape.inner->lo_offsets;
    shape.repeat_start = (seg->j0 / job->repeat) * job->block;
    shape.repeat_count = (seg->j1 - seg->j0) / job->repeat;
    shape.row_bytes = (size_t)(job->row_len * job->block * job->unit);
    shape.pair_rows = !seg->stream && job->row_kind == ROW_REPEAT && job->block == 1
        && job->repeat == 2;
    shape.plane = shape.pair_rows && seg->loops->twice_plane
        && rule_repeat(&job->axes[job->n_outer - 1]) == 2
        && (size_t)shape.repeat_count * (size_t)job->unit >= 8;
    return shape;
}

int nearest_item(void *context, int64_t item, int worker)
{
    const NearestJob *job = (const NearestJob *)context;
    int64_t r0, r1;
    const int64_t s = item_rows(item, job->rows, job->n_blocks, job->n_segments, &r0, &r1);
    NearestSegment planned;
    if (r0 >= r1 || !segment_range(s, job->segment, job->row_len, &planned.j0, &planned.j1))
        return 0;
    if (segment_plan(job, worker, &planned) != 0)
        return -1;
    /* a copy whose address no call outside this file is given: its fields stay in registers */
    const NearestSegment seg = planned;
    const RowShape shape = row_shape(&seg);
    PathCounts counts = {{0}};
    counts.n[PATH_NEAREST_CHUNKS] = seg.gather.chunks.run != NULL;
    counts.n[PATH_STREAMED_ROWS] = seg.stream ? (uint64_t)(r1 - r0) : 0;
    const int n = job->n_outer;
    const AxisRule *inner = shape.inner;
    const PlaneShape plane = {(size_t)(inner->stride * job->unit), shape.row_bytes,
                              (size_t)shape.repeat_count * (size_t)job->unit, job->unit};
    int64_t position[MAX_OUTER];
    start_index(r0, n, job->axes, position);
    int64_t base = outer_offset(n, position, job->axes), previous = -1;
    int64_t plane_rows_made = 0;
    /* the rows of one outer prefix at a time: only the innermost outer axis moves there, so
     * its position stays in a register and no row walks the multi-index */
    for (int64_t r = r0;;) {
        const int64_t first = position[n - 1];
        const int64_t last = first + (r1 - r) < inner->n_out ? first + (r1 - r) : inner->n_out;
        PrefixRows rows = {first, last, base,
                           job->out + (size_t)r * shape.row_bytes
                               + (size_t)seg.f0 * (size_t)job->unit};
        if (shape.plane) {
            const int64_t next = plane_rows(&seg, &rows, &plane, shape.repeat_start);
            plane_rows_made += (next - first) & ~(int64_t)1; /* not an odd first row */
            rows.dst += (size_t)(next - first) * shape.row_bytes;
            rows.first = next;
            previous = -1; /* the last row, if any, is the first of a pair: from the input */
        }
        previous = prefix_rows(&seg, &shape, &rows, previous, &counts);
        r += last - first;
        if (r >= r1)
            break;
        position[n - 1] = inner->n_out - 1;
        if (next_index(n, job->axes, position) < n - 1)
            base = outer_offset(n, position, job->axes);
    }
    if (seg.stream)
        stream_done();
    counts.n[PATH_NEAREST_PLANES] = (uint64_t)plane_rows_made;
    path_counts_add(&counts);
    return 0;
}
