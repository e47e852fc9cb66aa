/* The Upsample kernels on the canonical form built by onnx_upsample._kernels._layout.
 *
 * The output is `rows` x (`row_len` * `block`) elements. A row is one multi-index of the
 * outer axes; along it runs the row axis, and each row-axis position holds `block`
 * contiguous elements. An outer multi-index maps to an input offset through per-axis tables
 * (`contrib`/`lo`/`hi`, offsets already multiplied by the axis' input stride, axis a's
 * entries starting at `starts[a]`). Work is split into n_blocks ranges of rows times
 * n_segments ranges of the row axis; each (block, segment) pair is one pool item.
 */
#ifndef ONNX_UPSAMPLE_KERNELS_H
#define ONNX_UPSAMPLE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

enum { ROW_COPY = 0, ROW_REPEAT = 1, ROW_GATHER = 2 };

typedef struct {
    const char *x;            /* input, C-contiguous, in `unit`-byte words */
    char *out;
    int unit;                 /* 1, 2, 4 or 8 */
    int64_t rows, row_len, block;
    int n_outer;
    const int64_t *sizes, *contrib, *starts, *row_table;
    int row_kind;
    int64_t repeat, n_blocks, n_segments, segment;
} NearestJob;

int nearest_item(void *job, int64_t item, int worker);

/* Element types the linear kernel reads (`SRC_HALF`: 16-bit patterns through `lut`) and
 * writes; the accumulation type follows docs/semantics.md: float for the first group, double
 * for the second. */
enum {
    T_INT8, T_UINT8, T_INT16, T_UINT16, T_INT32, T_FLOAT32, T_HALF, /* float accumulation */
    T_INT64, T_UINT64, T_UINT32, T_FLOAT64,                         /* double accumulation */
    T_COUNT
};

typedef struct {
    const char *x;
    char *out;                /* rows [row_base, row_base + out_rows) of the output */
    int src, dst;             /* element type codes */
    int acc_double;
    const float *lut;         /* float32 value of each 16-bit pattern (T_HALF) */
    int64_t rows, row_len, block, row_base, out_rows;
    int64_t block_in;         /* input elements per row position */
    int n_outer, n_interp;
    const int64_t *sizes, *starts, *lo, *hi;
    const uint8_t *interp;
    const float *w_lo, *w_hi;
    int row_blend;            /* the row axis interpolates (2 taps) */
    int64_t row_repeat;       /* k when row_lo[j] == j / k (an integer scale), else 0 */
    const int64_t *row_lo, *row_hi;   /* input positions along the row axis */
    const float *row_w_lo, *row_w_hi;
    int block_blend;          /* the block holds an interpolated axis with scale 1 */
    const int64_t *blk_lo, *blk_hi;   /* input offsets inside a row position */
    const float *blk_w_lo, *blk_w_hi;
    int64_t n_blocks, n_segments, segment;
    double low_bound, high_bound;     /* saturation of integer results */
    int isa;                  /* 0 baseline, 1 AVX2 */
    void **scratch;           /* one buffer per worker, allocated on first use */
    size_t scratch_bytes;
} LinearJob;

int linear_item(void *job, int64_t item, int worker);
size_t linear_scratch_bytes(const LinearJob *job);

#endif
