/* The linear kernel's row loops that move values in and out, one table of them per
 * instruction set (linear_io.inc, built by isa_base.c and isa_avx2.c):
 * - expand: an input row gathered at a segment's taps, converted to the accumulation type;
 * - repeat: the same where an integer scale k on the row axis makes each input position's
 *   elements k times over (no gather);
 * - store: accumulated results converted to the output type (integers truncated toward
 *   zero and saturated) and written;
 * - plain_float32: whether float32 values are plain (below).
 * Every table gives the same bits; the vector ones are faster.
 *
 * A float value is plain when it is finite, not -0, and +0 or of magnitude at least 2**-100
 * (PLAIN_LOW). The sums may leave out terms of weight +0 where the rows they read are plain:
 * linear_blend.h says why that changes no bit.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_IO_H
#define ONNX_UPSAMPLE_LINEAR_IO_H

#include <stdint.h>

#include "cpu.h"
#include "linear_types.h"

/* The smallest plain magnitude's bits: 2**-100. */
#define PLAIN_LOW 0x0D800000u

/* `width` elements of `into` (the accumulation type): element f from the input row at
 * off[f] (`lut`: the float32 value of each 16-bit pattern, for T_HALF). */
typedef void (*expand_fn)(const char *row, const int64_t *off, int64_t width, void *into,
                          const float *lut);
/* The `block` elements of each of n input positions k times over, converted, into `into`. */
typedef void (*repeat_fn)(const char *row, int64_t n, int64_t k, int64_t block, void *into,
                          const float *lut);
/* `width` accumulated values converted and written to `out`: integers saturate to
 * [low_bound, high_bound). */
typedef void (*store_fn)(const void *acc, char *out, int64_t width, double low_bound,
                         double high_bound);

/* The loops of one instruction set, indexed by the source's element code. */
typedef struct {
    expand_fn expand[T_COUNT];
    repeat_fn repeat[T_COUNT];
    store_fn store[T_COUNT];  /* writes the code's results (linear_types[code].out) */
    int (*plain_float32)(const char *row, int64_t n);
} LinearIo;

extern const LinearIo linear_io_base;
#if HAVE_AVX2_VARIANT
extern const LinearIo linear_io_avx2;
#endif

static inline const LinearIo *linear_io(Isa isa)
{
#if HAVE_AVX2_VARIANT
    if (isa == ISA_AVX2)
        return &linear_io_avx2;
#endif
    (void)isa;
    return &linear_io_base;
}

#endif
