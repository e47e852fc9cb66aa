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

#include "nearest_scalar.h"

/* Vector row loops (nearest_isa.h): the repeat by 2 in SSE2, the x86-64 baseline, and in
 * AVX2, which also has the chunked gather and the RGB repeat; chosen at run time like the
 * linear kernel's. */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define HAVE_VECTOR_ROWS 1
#define ISA base
#define WIDE 0
#include "nearest_isa.h"
#undef WIDE
#undef ISA
#ifdef HAVE_AVX2_TARGET
#define HAVE_AVX2_ROWS 1
#include <immintrin.h>
AVX2_TARGET_BEGIN
#define ISA avx2
#define WIDE 1
#include "nearest_isa.h"
#undef WIDE
#undef ISA
AVX2_TARGET_END
#endif
#endif

typedef void (*twice_fn)(const char *restrict x, char *restrict a, char *restrict b,
                         size_t n, int unit);

typedef void (*twice_rows_fn)(const char *x, size_t step, char *out, size_t row,
                              int64_t pairs, size_t n, int unit);
typedef void (*chunks_fn)(const char *x, char *out, const int64_t *start,
                          const int32_t *dwords, int64_t chunks, size_t w);

typedef struct {
    twice_fn twice;         /* NULL: the scalar loops (no SSE2) */
    twice_rows_fn twice_rows;
    chunks_fn chunks;       /* NULL: gathers go through the table (no AVX2) */
    void (*rgb_twice)(const char *x, char *out, int64_t n); /* 3-byte items, n >= 16 */
} RowOps;

/* The vector row loops of the job's instruction set. */
static RowOps row_ops(int isa)
{
    RowOps ops = {NULL, NULL, NULL, NULL};
#ifdef HAVE_AVX2_ROWS
    if (isa == 1) {
        ops.twice = repeat_twice_avx2;
        ops.twice_rows = repeat_twice_rows_avx2;
        ops.chunks = gather_chunks_avx2;
        ops.rgb_twice = rgb_twice_avx2;
        return ops;
    }
#endif
    (void)isa;
#ifdef HAVE_VECTOR_ROWS
    ops.twice = repeat_twice_base;
    ops.twice_rows = repeat_twice_rows_base;
#endif
    return ops;
}

/* A segment's gather as 32-byte chunks (gather_chunks): chunk c makes positions
 * [c * per, c * per + per) from the input positions start[c] + dwords / (w / 4); a last
 * chunk, when the segment is not a whole number of them, ends on its last position. */
typedef struct {
    chunks_fn run;          /* NULL: gather through the table */
    int64_t *start;
    int32_t *dwords;
    int64_t per;            /* positions per chunk: 32 / w */
    size_t w;               /* bytes per position: 4 or 8 */
} ChunkPlan;

/* Scratch bytes of a plan for segments of up to `segment` positions. */
static size_t chunk_plan_bytes(int64_t segment)
{
    return ((size_t)(segment / 4 + 1) * (sizeof(int64_t) + 8 * sizeof(int32_t)) + 63) / 64 * 64;
}

/* Fill the plan for a segment of n positions reading `table` (input positions below
 * `limit`, the row's input length); 0 (and no plan) where some chunk's positions do not
 * fit in one 32-byte load (a scale >= 1 reads at most `per` inputs for `per` outputs: only
 * a rounding of the rule that skips an input could). */
static int plan_chunks(ChunkPlan *plan, const int64_t *table, int64_t n, int64_t limit)
{
    const int64_t per = plan->per, words = (int64_t)plan->w / 4;
    if (n < per || limit < per)
        return 0;
    for (int64_t c = 0; c * per < n; c++) {
        int64_t j = c * per < n - per ? c * per : n - per;
        int64_t first = table[j] < limit - per ? table[j] : limit - per;
        for (int64_t k = 0; k < per; k++) {
            int64_t t = table[j + k] - first;
            if (t < 0 || t >= per)
                return 0;
            for (int64_t d = 0; d < words; d++)
                plan->dwords[8 * c + k * words + d] = (int32_t)(t * words + d);
        }
        plan->start[c] = first;
    }
    return 1;
}

/* Two output rows `stride` bytes apart from one input row of n elements, each twice. */
static void repeat_two_rows(twice_fn twice, const char *x, char *out, size_t stride,
                            int64_t n, int unit)
{
    char *second = out + stride;
    if (twice && (size_t)n * (size_t)unit >= 8) {
        twice(x, out, second, (size_t)n * (size_t)unit, unit);
        return;
    }
    switch (unit) {
    case 1: repeat_two_rows_uint8_t(x, out, second, n); return;
    case 2: repeat_two_rows_uint16_t(x, out, second, n); return;
    case 4: repeat_two_rows_uint32_t(x, out, second, n); return;
    default: repeat_two_rows_uint64_t(x, out, second, n); return;
    }
}


static void repeat_row(const RowOps *ops, const char *x, char *out, int64_t n, int64_t k,
                       int64_t block, int unit)
{
    const int64_t size = block * unit; /* bytes of one position, repeated as one word */
    if (k == 2 && ops->twice && (size == 1 || size == 2 || size == 4 || size == 8)
        && n * size >= 8) {
        ops->twice(x, out, NULL, (size_t)(n * size), (int)size);
        return;
    }
    if (block == 1) {
        switch (unit) {
        case 1: repeat_uint8_t(x, out, n, k); return;
        case 2: repeat_uint16_t(x, out, n, k); return;
        case 4: repeat_uint32_t(x, out, n, k); return;
        default: repeat_uint64_t(x, out, n, k); return;
        }
    }
    size_t bytes = (size_t)(block * unit);
    switch (bytes) {
    case 2: repeat_block_2(x, out, n, k); return;
    case 3:
        if (k == 2 && ops->rgb_twice && n >= 16)
            ops->rgb_twice(x, out, n);
        else if (k == 2)
            repeat_rgb_twice(x, out, n);
        else
            repeat_block_3(x, out, n, k);
        return;
    case 4: repeat_block_4(x, out, n, k); return;
    case 6: repeat_block_6(x, out, n, k); return;
    case 8: repeat_block_8(x, out, n, k); return;
    case 12: repeat_block_12(x, out, n, k); return;
    case 16: repeat_block_16(x, out, n, k); return;
    default: break;
    }
    for (int64_t i = 0; i < n; i++) {
        const char *src = x + (size_t)i * bytes;
        char *dst = out + (size_t)(i * k) * bytes;
        for (int64_t t = 0; t < k; t++)
            memcpy(dst + (size_t)t * bytes, src, bytes);
    }
}

static void gather_row(const char *x, char *out, const int64_t *table, int64_t n,
                       int64_t block, int unit)
{
    if (block == 1) {
        switch (unit) {
        case 1: gather_uint8_t(x, out, table, n); return;
        case 2: gather_uint16_t(x, out, table, n); return;
        case 4: gather_uint32_t(x, out, table, n); return;
        default: gather_uint64_t(x, out, table, n); return;
        }
    }
    size_t bytes = (size_t)(block * unit);
    switch (bytes) {
    case 2: gather_block_2(x, out, table, n); return;
    case 3: gather_block_3(x, out, table, n); return;
    case 4: gather_block_4(x, out, table, n); return;
    case 6: gather_block_6(x, out, table, n); return;
    case 8: gather_block_8(x, out, table, n); return;
    case 12: gather_block_12(x, out, table, n); return;
    case 16: gather_block_16(x, out, table, n); return;
    default: break;
    }
    for (int64_t j = 0; j < n; j++)
        memcpy(out + (size_t)j * bytes, x + (size_t)table[j] * bytes, bytes);
}

/* Positions [p, q) of a segment of n (p a multiple of the plan's chunk) gathered from the
 * input row x into `out`: whole chunks by vector moves where the plan exists, the last one
 * overlapping the one before where the piece ends the segment, the rest through `table`. */
static void gather_piece(const ChunkPlan *plan, const char *x, char *out, const int64_t *table,
                         int64_t p, int64_t q, int64_t n, int64_t block, int unit)
{
    int64_t done = p;
    if (plan->run && q - p >= plan->per) {
        const int64_t per = plan->per, c0 = p / per, c1 = q / per;
        plan->run(x, out, plan->start + c0, plan->dwords + 8 * c0, c1 - c0, plan->w);
        done = c1 * per;
        if (done < q && q == n) {
            plan->run(x, out + (size_t)(n - per - p) * plan->w, plan->start + c1,
                      plan->dwords + 8 * c1, 1, plan->w);
            done = q;
        }
    }
    if (done < q)
        gather_row(x, out + (size_t)(done - p) * (size_t)(block * unit), table + done, q - done,
                   block, unit);
}

/* Positions [p, q) of one output row into `into`: a repeat (p a multiple of the factor)
 * or a gather through `table` (the segment's table, from position j0). */
static void produce_piece(const NearestJob *job, const RowOps *ops, const ChunkPlan *plan,
                          int64_t offset, int64_t p, int64_t q, const int64_t *table,
                          int64_t j0, int64_t j1, char *into)
{
    const int unit = job->unit;
    if (job->row_kind == ROW_REPEAT) {
        const char *src = job->x + (size_t)(offset + (p / job->repeat) * job->block) * (size_t)unit;
        repeat_row(ops, src, into, (q - p) / job->repeat, job->repeat, job->block, unit);
    } else {
        gather_piece(plan, job->x + (size_t)offset * (size_t)unit, into, table, p - j0, q - j0,
                     j1 - j0, job->block, unit);
    }
}

int nearest_item(void *context, int64_t item, int worker)
{
    const NearestJob *job = (const NearestJob *)context;
    const int64_t unit = job->unit, block = job->block;
    int64_t b = item / job->n_segments, s = item % job->n_segments;
    int64_t r0 = block_start(b, job->rows, job->n_blocks);
    int64_t r1 = block_start(b + 1, job->rows, job->n_blocks);
    int64_t j0 = s * job->segment;
    int64_t j1 = j0 + job->segment < job->row_len ? j0 + job->segment : job->row_len;
    if (r0 >= r1 || j0 >= j1)
        return 0;
    const int n = job->n_outer;
    const RowOps ops = row_ops(job->isa);
    const twice_fn twice = ops.twice;
    /* a streamed row is made from input that comes from memory, into a buffer in L1: the
     * compiler's loops for a repeat by 2 keep up with memory there, and the vector ones
     * measured up to 1.3x slower for 8-byte positions (float64, complex64) */
    RowOps streamed = ops;
    streamed.twice = NULL;
    const AxisRule *row_axis = &job->axes[n], *inner = &job->axes[n - 1];
    const size_t position_bytes = (size_t)(block * unit);
    /* streaming stores: rows are assembled `piece` positions at a time in a small buffer
     * (a whole number of repeat groups), then streamed out; copied rows stream directly */
    int64_t piece = (int64_t)(STREAM_BUFFER_BYTES / position_bytes);
    if (job->row_kind == ROW_REPEAT)
        piece -= piece % job->repeat;
    const int stream = job->stream && (job->row_kind == ROW_COPY || piece >= 1);
    ChunkPlan plan = {NULL, NULL, NULL, 0, position_bytes};
    const int chunked = job->row_kind == ROW_GATHER && ops.chunks
        && (position_bytes == 4 || position_bytes == 8);
    const size_t plan_bytes = chunked ? chunk_plan_bytes(job->segment) : 0;
    const size_t table_bytes = job->row_kind == ROW_GATHER
        ? ((size_t)job->segment * sizeof(int64_t) + 63) / 64 * 64 + plan_bytes : 0;
    int64_t *row_table = NULL;
    char *buffer = NULL;
    if (table_bytes || (stream && job->row_kind != ROW_COPY)) {
        if (job->scratch[worker] == NULL) {
            job->scratch[worker] = malloc(table_bytes + (job->stream ? STREAM_BUFFER_BYTES : 0));
            if (job->scratch[worker] == NULL)
                return -1;
        }
        row_table = (int64_t *)job->scratch[worker];
        buffer = (char *)job->scratch[worker] + table_bytes;
    }
    if (job->row_kind == ROW_GATHER) {
        /* the segment's input positions, once per item: every row of the item reuses them */
        for (int64_t j = j0; j < j1; j++)
            row_table[j - j0] = rule_nearest(row_axis, j);
        if (chunked) {
            char *at = (char *)row_table + table_bytes - plan_bytes;
            plan.start = (int64_t *)(void *)at;
            plan.dwords = (int32_t *)(void *)(at + (size_t)(job->segment / 4 + 1) * sizeof(int64_t));
            plan.per = (int64_t)(32 / position_bytes);
            if (plan_chunks(&plan, row_table, j1 - j0, row_axis->in_len))
                plan.run = ops.chunks;
        }
    }
    int64_t row_width = job->row_len * block; /* elements */
    int64_t f0 = j0 * block, width = (j1 - j0) * block;
    int64_t position[MAX_OUTER];
    start_index(r0, n, job->axes, position);
    int64_t base = outer_offset(n, position, job->axes);
    int64_t previous = -1;
    /* integer divisions cost tens of cycles: none inside the row loop */
    const int64_t repeat_start = (j0 / job->repeat) * block;
    const int64_t repeat_count = (j1 - j0) / job->repeat;
    const size_t row_bytes = (size_t)(row_width * unit), width_bytes = (size_t)(width * unit);
    const int pair_rows = !stream && job->row_kind == ROW_REPEAT && block == 1
        && job->repeat == 2;
    const int one_piece = stream && j1 - j0 <= piece; /* the buffer holds the whole segment */
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
            if (stream) {
                if (job->row_kind == ROW_COPY) {
                    stream_copy(dst, job->x + (size_t)(offset + f0) * (size_t)unit, width_bytes);
                } else if (one_piece) {
                    if (offset != previous)
                        produce_piece(job, &streamed, &plan, offset, j0, j1, row_table, j0, j1,
                                      buffer);
                    stream_copy(dst, buffer, width_bytes);
                } else {
                    for (int64_t c = j0; c < j1; c += piece) {
                        int64_t e = c + piece < j1 ? c + piece : j1;
                        produce_piece(job, &streamed, &plan, offset, c, e, row_table, j0, j1, buffer);
                        stream_copy(dst + (size_t)(c - j0) * position_bytes, buffer,
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
                gather_piece(&plan, job->x + (size_t)offset * (size_t)unit, dst, row_table, 0,
                             j1 - j0, j1 - j0, block, (int)unit);
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
