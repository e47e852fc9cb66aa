/* The nearest kernel (nearest.c): a byte gather, for every fixed-size element type.
 *
 * The output is `rows` x (`row_len` * `block`) elements. A row is one multi-index of the
 * outer axes; along it runs the row axis, and each row-axis position holds `block`
 * contiguous elements. Every axis is described by an AxisRule (axis_rule.h): the kernel
 * computes the input index an output index reads, per row for the outer axes and per work
 * item for the row axis. `axes[0 .. n_outer-1]` are the outer axes, `axes[n_outer]` the row
 * axis. Work is split as work_split.h says.
 */
#ifndef ONNX_UPSAMPLE_NEAREST_H
#define ONNX_UPSAMPLE_NEAREST_H

#include <stdint.h>

#include "axis_rule.h"
#include "cpu.h"

/* How a row's positions are made: copied (scale 1), repeated (an integer scale), gathered. */
typedef enum { ROW_COPY = 0, ROW_REPEAT = 1, ROW_GATHER = 2 } RowKind;

typedef struct {
    const char *x;            /* input, C-contiguous, in `unit`-byte words */
    char *out;
    int unit;                 /* 1, 2, 4 or 8 */
    int64_t rows, row_len, block;
    int n_outer;
    const AxisRule *axes;     /* n_outer + 1: the outer axes, then the row axis */
    RowKind row_kind;
    int64_t repeat, n_blocks, n_segments, segment;
    int stream;               /* write with streaming stores (stream.h) */
    Isa isa;                  /* the row loops' instruction set (nearest_loops.h) */
    void **scratch;           /* per worker, made on first use: the gathered row's positions,
                               * then the streaming buffer */
} NearestJob;

/* One pool item (pool.h) of a NearestJob. */
int nearest_item(void *job, int64_t item, int worker);

#endif
