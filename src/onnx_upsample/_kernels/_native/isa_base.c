/* The instruction-set variant units (linear_io.inc, linear_sum.inc, nearest_loops.inc)
 * built for the baseline of the target: SSE2 on x86-64, NEON on aarch64, scalar C loops
 * elsewhere (simd.h chooses). Their tables are linear_io_base, linear_sums_base and
 * nearest_loops_base. */
#define ISA_SUFFIX base
#define ISA_CAT_(a, b) a##_##b
#define ISA_CAT(a, b) ISA_CAT_(a, b)
#define NAME(x) ISA_CAT(x, ISA_SUFFIX)

#include "simd.h"
#include "stream.h"

#include "linear_io.inc"
#include "linear_sum.inc"
#include "nearest_loops.inc"
