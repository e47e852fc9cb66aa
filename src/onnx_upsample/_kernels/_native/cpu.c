/* What this CPU can run, asked once per query (the answer is the compiler's cached cpuid).
 * The linear kernels and the nearest row loops have a baseline and an AVX2 build of their
 * hot loops (linear_isa.h with linear_vec.h, nearest_isa.h); the constructors (describe.c,
 * describe_linear.c) pick AVX2 only where this says the CPU has it. */
#include "cpu.h"

int cpu_has_avx2(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}
