/* The instruction-set variant units (linear_io.inc, linear_sum.inc, nearest_loops.inc)
 * built for AVX2, where the compiler can (cpu.h): their tables are linear_io_avx2,
 * linear_sums_avx2 and nearest_loops_avx2, chosen at run time where the CPU has AVX2. Every
 * project header is first included inside the AVX2 region, so that the inline functions of
 * the SIMD layer and of stream.h are compiled for AVX2 here; system headers come before it. */
#include "cpu.h"

#if HAVE_AVX2_VARIANT
#include <stddef.h>
#include <stdint.h>
#include <string.h>

AVX2_TARGET_BEGIN
#define SIMD_TARGET_AVX2 1
#define ISA_SUFFIX avx2
#define ISA_CAT_(a, b) a##_##b
#define ISA_CAT(a, b) ISA_CAT_(a, b)
#define NAME(x) ISA_CAT(x, ISA_SUFFIX)

#include "simd.h"
#include "stream.h"

#include "linear_io.inc"
#include "linear_sum.inc"
#include "nearest_loops.inc"
AVX2_TARGET_END
#else
/* no AVX2 variant on this target: a translation unit must declare something */
typedef int no_avx2_variant;
#endif
