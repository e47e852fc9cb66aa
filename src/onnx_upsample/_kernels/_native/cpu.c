/* What this CPU can run (cpu.h), asked once per query: the compiler's cached cpuid on GCC
 * and Clang, cpuid and the operating system's saved registers (xgetbv) on MSVC. */
#include "cpu.h"

#if defined(_MSC_VER) && !defined(__clang__) && (defined(_M_X64) || defined(_M_IX86))
#include <intrin.h>
#endif

int cpu_has_avx2(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    int info[4];
    __cpuid(info, 0);
    if (info[0] < 7)
        return 0;
    __cpuid(info, 1);
    const int osxsave = (info[2] >> 27) & 1, avx = (info[2] >> 28) & 1;
    /* the operating system saves the 256-bit registers (XMM and YMM state) */
    if (!osxsave || !avx || (_xgetbv(0) & 6) != 6)
        return 0;
    __cpuidex(info, 7, 0);
    return (info[1] >> 5) & 1;
#else
    return 0;
#endif
}

Isa cpu_isa(int requested)
{
#if HAVE_AVX2_VARIANT
    if (requested == ISA_AVX2 && cpu_has_avx2())
        return ISA_AVX2;
#endif
    (void)requested;
    return ISA_BASELINE;
}
