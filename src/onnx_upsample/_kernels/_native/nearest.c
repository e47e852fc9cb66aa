/* Nearest-mode gather (see kernels.h): a byte gather, for every fixed-size element type. */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "kernels.h"
#include "stream.h"

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

#include "nearest_rows.h"

/* One work item's segment of the row axis, positions [j0, j1), and how its rows are made. */
typedef struct {
    const NearestJob *job;
    RowOps ops;               /* the job's vector row loops */
    /* Pointers, not members: the row loops are given these, and a segment whose own address
     * they were given would be reread from memory after each of their calls. */
    const RowOps *streamed;   /* the row loops for rows assembled to be streamed */
    ChunkPlan *plan;          /* ROW_GATHER: the segment as 32-byte chunks (run NULL: none) */
    int64_t *table;           /* ROW_GATHER: the segment's input positions */
    char *buffer;             /* streaming: where a piece of a row is assembled */
    int64_t j0, j1;
    int64_t f0;               /* the segment's first element in a row */
    size_t position_bytes, width_bytes;
    int stream;               /* rows are written with streaming stores */
    int64_t piece;            /* streaming: positions assembled at a time */
    int one_piece;            /* streaming: the buffer holds the whole segment */
} NearestSegment;

/* Item `s`'s segment; 0 where it is empty. */
static int segment_bounds(const NearestJob *job, int64_t s, NearestSegment *seg)
{
    seg->j0 = s * job->segment;
    seg->j1 = seg->j0 + job->segment < job->row_len ? seg->j0 + job->segment : job->row_len;
    return seg->j0 < seg->j1;
}

/* How the segment's rows are made (into `streamed` and `plan`, which the segment points
 * to), and its scratch: the gathered row's input positions (computed once per item: every
 * row of the item reuses them) and their chunked plan, and the streaming buffer. -1 where
 * the scratch cannot be had. */
static int segment_plan(const NearestJob *job, int worker, NearestSegment *seg,
                        RowOps *streamed, ChunkPlan *plan)
{
    const int64_t j0 = seg->j0, j1 = seg->j1;
    seg->job = job;
    seg->ops = row_ops(job->isa);
    /* a streamed row is made from input that comes from memory, into a buffer in L1: the
     * compiler's loops for a repeat by 2 keep up with memory there, and the vector ones
     * measured up to 1.3x slower for 8-byte positions (float64, complex64) */
    *streamed = seg->ops;
    streamed->twice = NULL;
    seg->streamed = streamed;
    seg->plan = plan;
    seg->position_bytes = (size_t)(job->block * job->unit);
    seg->f0 = j0 * job->block;
    seg->width_bytes = (size_t)((j1 - j0) * job->block * job->unit);
    /* streaming stores: rows are assembled `piece` positions at a time in a small buffer
     * (a whole number of repeat groups), then streamed out; copied rows stream directly */
    seg->piece = (int64_t)(STREAM_BUFFER_BYTES / seg->position_bytes);
    if (job->row_kind == ROW_REPEAT)
        seg->piece -= seg->piece % job->repeat;
    seg->stream = job->stream && (job->row_kind == ROW_COPY || seg->piece >= 1);
    seg->one_piece = seg->stream && j1 - j0 <= seg->piece;
    *plan = (ChunkPlan){NULL, NULL, NULL, 0, seg->position_bytes};
    const int chunked = job->row_kind == ROW_GATHER && seg->ops.chunks
        && (seg->position_bytes == 4 || seg->position_bytes == 8);
    const size_t plan_bytes = chunked ? chunk_plan_bytes(job->segment) : 0;
    const size_t table_bytes = job->row_kind == ROW_GATHER
        ? ((size_t)job->segment * sizeof(int64_t) + 63) / 64 * 64 + plan_bytes : 0;
    seg->table = NULL;
    seg->buffer = NULL;
    if (table_bytes || (seg->stream && job->row_kind != ROW_COPY)) {
        if (job->scratch[worker] == NULL) {
            job->scratch[worker] = malloc(table_bytes + (job->stream ? STREAM_BUFFER_BYTES : 0));
            if (job->scratch[worker] == NULL)
                return -1;
        }
        seg->table = (int64_t *)job->scratch[worker];
        seg->buffer = (char *)job->scratch[worker] + table_bytes;
    }
    if (job->row_kind == ROW_GATHER) {
        const AxisRule *row_axis = &job->axes[job->n_outer];
        for (int64_t j = j0; j < j1; j++)
            seg->table[j - j0] = rule_nearest(row_axis, j);
        if (chunked) {
            char *at = (char *)seg->table + table_bytes - plan_bytes;
            plan->start = (int64_t *)(void *)at;
            plan->dwords = (int32_t *)(void *)(at + (size_t)(job->segment / 4 + 1)
                                               * sizeof(int64_t));
            plan->per = (int64_t)(32 / seg->position_bytes);
            if (plan_chunks(plan, seg->table, j1 - j0, row_axis->in_len))
                plan->run = seg->ops.chunks;
        }
    }
    return 0;
}

/* Positions [p, q) of the output row that reads the input row at `offset`, into the
 * streaming buffer: a repeat (p a multiple of the factor) or a gather through the
 * segment's table. */
static inline void produce_piece(const NearestSegment *seg, int64_t offset, int64_t p, int64_t q)
{
    const NearestJob *job = seg->job;
    const int unit = job->unit;
    if (job->row_kind == ROW_REPEAT) {
        const char *src = job->x + (size_t)(offset + (p / job->repeat) * job->block) * (size_t)unit;
        repeat_row(seg->streamed, src, seg->buffer, (q - p) / job->repeat, job->repeat,
                   job->block, unit);
    } else {
        gather_piece(seg->plan, job->x + (size_t)offset * (size_t)unit, seg->buffer,
                     seg->table, p - seg->j0, q - seg->j0, seg->j1 - seg->j0, job->block, unit);
    }
}

int nearest_item(void *context, int64_t item, int worker)
{
    const NearestJob *job = (const NearestJob *)context;
    const int64_t unit = job->unit, block = job->block;
    int64_t b = item / job->n_segments;
    int64_t r0 = block_start(b, job->rows, job->n_blocks);
    int64_t r1 = block_start(b + 1, job->rows, job->n_blocks);
    NearestSegment planned;
    if (r0 >= r1 || !segment_bounds(job, item % job->n_segments, &planned))
        return 0;
    RowOps streamed;
    ChunkPlan plan;
    if (segment_plan(job, worker, &planned, &streamed, &plan) != 0)
        return -1;
    /* a copy whose address no call is given: its fields can stay in registers */
    const NearestSegment seg = planned;
    const int64_t j0 = seg.j0, j1 = seg.j1;
    const int n = job->n_outer;
    const RowOps ops = seg.ops;
    const twice_fn twice = ops.twice;
    const AxisRule *inner = &job->axes[n - 1];
    const int stream = seg.stream, one_piece = seg.one_piece;
    const int64_t piece = seg.piece;
    const size_t position_bytes = seg.position_bytes;
    int64_t row_width = job->row_len * block; /* elements */
    int64_t f0 = seg.f0;
    int64_t position[MAX_OUTER];
    start_index(r0, n, job->axes, position);
    int64_t base = outer_offset(n, position, job->axes);
    int64_t previous = -1;
    /* integer divisions cost tens of cycles: none inside the row loop */
    const int64_t repeat_start = (j0 / job->repeat) * block;
    const int64_t repeat_count = (j1 - j0) / job->repeat;
    const size_t row_bytes = (size_t)(row_width * unit), width_bytes = seg.width_bytes;
    const int pair_rows = !stream && job->row_kind == ROW_REPEAT && block == 1
        && job->repeat == 2;
    /* x2 on the row and on the axis above it (output row p reads input row p / 2): the
     * rows of one outer prefix are a plane, expanded by one loop over its input rows */
    const int plane = pair_rows && ops.twice_rows && rule_repeat(inner) == 2
        && (size_t)repeat_count * (size_t)unit >= 8;
    /* the rows of one outer prefix at a time: only the innermost outer axis moves there, so
     * its position stays in a register and no row walks the multi-index */
    const int64_t *inner_table = inner->lo_offsets;
    int64_t r = r0;
    for (;;) {
        const int64_t first = position[n - 1];
        const int64_t last = first + (r1 - r) < inner->n_out ? first + (r1 - r) : inner->n_out;
        char *dst = job->out + (size_t)(r * row_width + f0) * (size_t)unit;
        int64_t p = first;
        if (plane) {
            const size_t step = (size_t)(inner->stride * unit);
            const char *src = job->x + (size_t)(base + repeat_start) * (size_t)unit
                + (size_t)(p / 2) * step;
            if (p & 1) { /* the second of a pair whose first is in the item before */
                repeat_row(&ops, src, dst, repeat_count, 2, 1, (int)unit);
                src += step;
                dst += row_bytes;
                p++;
            }
            const int64_t pairs = (last - p) / 2;
            ops.twice_rows(src, step, dst, row_bytes, pairs, (size_t)repeat_count * (size_t)unit,
                       (int)unit);
            p += 2 * pairs;
            dst += (size_t)(2 * pairs) * row_bytes;
            previous = -1; /* the last row, if any, is the first of a pair: from the input */
        }
        for (; p < last; p++, dst += row_bytes) {
            const int64_t inner_offset = inner_table ? inner_table[p] : axis_offset(inner, p);
            const int64_t offset = base + inner_offset;
            if (stream) { /* written inline: a helper here costs the row loop registers */
                if (job->row_kind == ROW_COPY) {
                    stream_copy(dst, job->x + (size_t)(offset + f0) * (size_t)unit, width_bytes);
                } else if (one_piece) {
                    if (offset != previous)
                        produce_piece(&seg, offset, j0, j1);
                    stream_copy(dst, seg.buffer, width_bytes);
                } else {
                    for (int64_t c = j0; c < j1; c += piece) {
                        int64_t e = c + piece < j1 ? c + piece : j1;
                        produce_piece(&seg, offset, c, e);
                        stream_copy(dst + (size_t)(c - j0) * position_bytes, seg.buffer,
                                    (size_t)(e - c) * position_bytes);
                    }
                }
            } else if (pair_rows && offset != previous && p + 1 < last
                       && (inner_table ? inner_table[p + 1] : axis_offset(inner, p + 1))
                              == inner_offset) {
                /* the next row reads the same input row (an integer scale on the axis
                 * above): write both from one pass over the input, as x2 on both axes needs */
                const char *src = job->x + (size_t)(offset + repeat_start) * (size_t)unit;
                repeat_two_rows(twice, src, dst, row_bytes, repeat_count, (int)unit);
                p++;
                dst += row_bytes;
            } else if (job->row_kind == ROW_COPY) {
                memcpy(dst, job->x + (size_t)(offset + f0) * (size_t)unit, width_bytes);
            } else if (offset == previous) {
                /* same input row as the row above: copy that row (a repeat of single
                 * elements is faster from the input, which is k times shorter) */
                memcpy(dst, dst - row_bytes, width_bytes);
            } else if (job->row_kind == ROW_REPEAT) {
                const char *src = job->x + (size_t)(offset + repeat_start) * (size_t)unit;
                repeat_row(&ops, src, dst, repeat_count, job->repeat, block, (int)unit);
            } else {
                gather_piece(&plan, job->x + (size_t)offset * (size_t)unit, dst, seg.table,
                             0, j1 - j0, j1 - j0, block, (int)unit);
            }
            previous = offset;
        }
        r += last - first;
        if (r >= r1)
            break;
        position[n - 1] = inner->n_out - 1;
        if (next_index(n, job->axes, position) < n - 1)
            base = outer_offset(n, position, job->axes);
    }
    if (stream)
        stream_fence();
    return 0;
}
