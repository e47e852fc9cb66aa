/* The nearest kernel's row loops (nearest_rows.c): a row segment repeated (an integer scale
 * on the row axis) or gathered through a table of input positions, by the vector loops of
 * the job's instruction set (nearest_loops.h) where they apply and by scalar loops for every
 * element size and short block of them (the channels of a channels-last image, complex
 * parts) elsewhere. Elements move as bytes: every element type takes the same loops.
 */
#ifndef ONNX_UPSAMPLE_NEAREST_ROWS_H
#define ONNX_UPSAMPLE_NEAREST_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "nearest_loops.h"

/* A row's repeat: each input position (`block` elements of `unit` bytes) k times. */
typedef struct {
    const NearestLoops *loops;
    int64_t k, block;
    int unit;
} RepeatPlan;

/* n input positions from x, each k times, into out. */
void repeat_row(const RepeatPlan *plan, const char *x, char *out, int64_t n);

/* Two output rows `stride` bytes apart from one input row of n elements of `unit` bytes,
 * each twice (`twice`: the vector loop, or NULL). */
void repeat_two_rows(twice_fn twice, const char *x, char *out, size_t stride, int64_t n,
                     int unit);

/* A segment's gather as 32-byte chunks (chunks_fn): chunk c makes positions
 * [c * per, c * per + per) from the input positions start[c] + dwords / (w / 4); a last
 * chunk, when the segment is not a whole number of them, ends on its last position. */
typedef struct {
    chunks_fn run;            /* NULL: gather through the table */
    int64_t *start;
    int32_t *dwords;
    int64_t per;              /* positions per chunk: 32 / w */
    size_t w;                 /* bytes per position: 4 or 8 */
} ChunkPlan;

/* Scratch bytes of a plan for segments of up to `segment` positions. */
size_t chunk_plan_bytes(int64_t segment);

/* Fill the plan for a segment of n positions reading `table` (input positions below
 * `limit`, the row's input length); 0 (and no plan) where some chunk's positions do not
 * fit in one 32-byte load. */
int plan_chunks(ChunkPlan *plan, const int64_t *table, int64_t n, int64_t limit);

/* A segment's gather: its input positions, their chunks, its positions' shape. */
typedef struct {
    ChunkPlan chunks;
    const int64_t *table;     /* the segment's input positions */
    int64_t n;                /* positions in the segment */
    int64_t block;
    int unit;
} GatherPlan;

/* Positions [p, q) of the segment (p a multiple of the chunk) gathered from the input row
 * x into `out`. */
void gather_piece(const GatherPlan *plan, const char *x, char *out, int64_t p, int64_t q);

#endif
