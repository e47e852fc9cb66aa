/* What this CPU can run (cpu.h): cpuid, and the operating system's saved registers (xgetbv),
 * asked directly on every x86 compiler. GCC's and Clang's __builtin_cpu_supports would read
 * a table the compiler's runtime library fills: zig's runtime (which builds the manylinux
 * and musllinux wheels) leaves it empty, so a wheel built there would never run AVX2. */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define CPU_IS_X86 1
#else
#define CPU_IS_X86 0
#endif

#if CPU_IS_X86 && defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#elif CPU_IS_X86 && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#if CPU_IS_X86 && (defined(_MSC_VER) || defined(__GNUC__) || defined(__clang__))
#define CPU_CAN_ASK 1

/* The registers eax, ebx, ecx, edx of cpuid's leaf and subleaf. */
static void cpuid_of(unsigned leaf, unsigned subleaf, unsigned regs[4])
{
#if defined(_MSC_VER) && !defined(__clang__)
    int info[4];
    __cpuidex(info, (int)leaf, (int)subleaf);
    for (int i = 0; i < 4; i++)
        regs[i] = (unsigned)info[i];
#else
    __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
#endif
}

/* The low half of XCR0: which register states the operating system saves on a switch. */
static unsigned saved_register_states(void)
{
#if defined(_MSC_VER) && !defined(__clang__)
    return (unsigned)_xgetbv(0);
#else
    unsigned low, high;
    /* xgetbv by its encoding: assemblers that predate it, and no -mxsave needed */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(low), "=d"(high) : "c"(0));
    (void)high;
    return low;
#endif
}
#else
#define CPU_CAN_ASK 0
#endif

int cpu_has_avx2(void)
{
#if CPU_CAN_ASK
    unsigned regs[4];
    cpuid_of(0, 0, regs);
    if (regs[0] < 7)
        return 0;
    cpuid_of(1, 0, regs);
    const unsigned osxsave = (regs[2] >> 27) & 1u, avx = (regs[2] >> 28) & 1u;
    /* the operating system saves the 128- and 256-bit registers (XMM and YMM state) */
    if (!osxsave || !avx || (saved_register_states() & 6u) != 6u)
        return 0;
    cpuid_of(7, 0, regs);
    return (int)((regs[1] >> 5) & 1u);
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
