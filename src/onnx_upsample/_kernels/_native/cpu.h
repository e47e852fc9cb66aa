/* The instruction-set variants of the kernels' loops, and which one this CPU runs (cpu.c).
 *
 * Every loop has a baseline variant (isa_base.c: SSE2 on x86-64, NEON on aarch64, scalar C
 * elsewhere). On x86, where the compiler can build AVX2 functions beside the baseline ones
 * (HAVE_AVX2_VARIANT), isa_avx2.c builds the same loops for AVX2 between AVX2_TARGET_BEGIN
 * and AVX2_TARGET_END; they run only where cpu_has_avx2() says so. Every variant gives the
 * same bits.
 */
#ifndef ONNX_UPSAMPLE_CPU_H
#define ONNX_UPSAMPLE_CPU_H

/* A kernel description's choice of loops (Python passes it as `isa`). */
typedef enum { ISA_BASELINE = 0, ISA_AVX2 = 1 } Isa;

/* 1 when this CPU runs AVX2 instructions, else 0 (always 0 off x86). */
int cpu_has_avx2(void);

/* The loops a description asks for, where this build has them and the CPU runs them; else
 * the baseline. */
Isa cpu_isa(int requested);

#if defined(ONNX_UPSAMPLE_NO_SIMD)
#define HAVE_AVX2_VARIANT 0 /* the portable build (simd.h) */
#elif defined(__clang__)
/* Clang's build of the AVX2 loops does not give the baseline's bits (tests/
 * test_linear_variants.py: float blends of Clang 14 and zig's Clang 21 differ in 24 to 126
 * of 168 cases, where GCC's agree in all). Clang 14 writes -0.0 for nearly every float32
 * linear output, at -O1 and -O3, with -mavx2 and with -fno-strict-aliasing alike, and UBSan
 * says nothing; that much goes with simd_avx2.h's vf_keep (its empty asm): without it (and
 * without vf_add_first's asm) one case of ten still differs, a 37-element row at scale 1.5,
 * by value. Clang builds run the baseline loops until the cause is found */
#define HAVE_AVX2_VARIANT 0
#elif (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define HAVE_AVX2_VARIANT 1
#define AVX2_TARGET_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define AVX2_TARGET_END _Pragma("GCC pop_options")
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86)) && !defined(__clang__)
/* MSVC compiles AVX2 intrinsics anywhere; the scalar loops of that variant stay SSE2 */
#define HAVE_AVX2_VARIANT 1
#define AVX2_TARGET_BEGIN
#define AVX2_TARGET_END
#else
#define HAVE_AVX2_VARIANT 0
#endif

#endif
