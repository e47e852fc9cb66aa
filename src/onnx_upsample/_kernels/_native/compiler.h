/* The compiler layer: what the kernels ask of a C compiler beyond C11, spelled once for GCC,
 * Clang and MSVC (each other compiler gets the plain C meaning: slower, never different).
 *
 * - Exact floating point: every file that computes a value includes this header, which
 *   refuses a build that would change a result's bits (fast-math, 32-bit x87 arithmetic)
 *   and turns off the contraction of a multiply and an add into one fused operation, which
 *   rounds once instead of twice (the default of GCC and Clang on aarch64, and of Clang
 *   everywhere). setup.py passes the same as flags; this makes the rule hold for any build.
 * - Inlining: ALWAYS_INLINE for the loops that constant arguments specialise, NOINLINE for a
 *   rare path kept out of a hot loop's registers.
 * - Loop hints (IVDEP, UNROLL), which change speed only.
 * - Checked arithmetic (checked_mul_i64) and alignment (align_up, CACHE_LINE_BYTES).
 */
#ifndef ONNX_UPSAMPLE_COMPILER_H
#define ONNX_UPSAMPLE_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define COMPILER_GNU 1 /* GCC, Clang and the compilers that speak their dialect */
#else
#define COMPILER_GNU 0
#endif
#if defined(_MSC_VER) && !COMPILER_GNU
#define COMPILER_MSVC 1
#else
#define COMPILER_MSVC 0
#endif

#if defined(__FAST_MATH__)
#error "the Upsample kernels must not be built with -ffast-math: results must be IEEE exact"
#endif
#if defined(__i386__) && COMPILER_GNU && !defined(__SSE2_MATH__)
#error "32-bit x86 builds must use SSE2 arithmetic (-msse2 -mfpmath=sse), not the x87 unit"
#endif
#if COMPILER_MSVC && defined(_M_IX86) && !defined(_M_IX86_FP)
#error "32-bit x86 builds must use SSE2 arithmetic (/arch:SSE2), not the x87 unit"
#endif
/* GCC takes -ffp-contract=off from setup.py (it does not implement the standard pragma) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif COMPILER_MSVC
#pragma fp_contract(off)
#endif

#if COMPILER_GNU
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define NOINLINE static __attribute__((noinline))
#define MAYBE_UNUSED __attribute__((unused))
#elif COMPILER_MSVC
#define ALWAYS_INLINE static __forceinline
#define NOINLINE static __declspec(noinline)
#define MAYBE_UNUSED
#else
#define ALWAYS_INLINE static inline
#define NOINLINE static
#define MAYBE_UNUSED
#endif

/* MSVC spells C99's restrict __restrict before /std:c11 */
#if COMPILER_MSVC && !defined(__STDC_VERSION__)
#define restrict __restrict
#endif

#define PRAGMA_(text) _Pragma(#text)
/* The loop that follows has no dependence between iterations through memory: vectorise it. */
#if defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif COMPILER_GNU
#define IVDEP _Pragma("GCC ivdep")
#elif COMPILER_MSVC
#define IVDEP __pragma(loop(ivdep))
#else
#define IVDEP
#endif
/* Unroll the loop that follows n times (Clang reads GCC's spelling too). */
#if COMPILER_GNU
#define UNROLL(n) PRAGMA_(GCC unroll n)
#else
#define UNROLL(n)
#endif

/* a * b into *result; 0 where it overflows int64 (a caller's numbers must not wrap past a
 * check). */
static inline int checked_mul_i64(int64_t a, int64_t b, int64_t *result)
{
#if COMPILER_GNU
    long long product;
    const int overflow = __builtin_mul_overflow((long long)a, (long long)b, &product);
    *result = (int64_t)product;
    return !overflow;
#else
    /* each sign case's bound, divided so that the division cannot overflow */
    const int overflow = a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a)
                               : (b > 0 ? a < INT64_MIN / b : a != 0 && b < INT64_MAX / a);
    if (overflow)
        return 0;
    *result = a * b;
    return 1;
#endif
}

/* The bytes of a cache line on every CPU the kernels are built for (x86-64, aarch64): the
 * unit of streaming stores and the alignment of every scratch table. */
#define CACHE_LINE_BYTES 64

/* n rounded up to a multiple of `alignment` (a power of two). */
static inline size_t align_up(size_t n, size_t alignment)
{
    return (n + alignment - 1) & ~(alignment - 1);
}

#endif
