/* CPU features the kernels choose between (cpu.c). */
#ifndef ONNX_UPSAMPLE_CPU_H
#define ONNX_UPSAMPLE_CPU_H

/* 1 when this CPU runs AVX2 instructions, else 0 (always 0 off x86). */
int cpu_has_avx2(void);

/* Where the compiler can build AVX2 functions beside the baseline ones, HAVE_AVX2_TARGET is
 * 1, and the functions defined between AVX2_TARGET_BEGIN and AVX2_TARGET_END are compiled
 * for AVX2: they may run only where cpu_has_avx2() says so. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_TARGET 1
#if defined(__clang__)
#define AVX2_TARGET_BEGIN \
    _Pragma("clang attribute push(__attribute__((target(\"avx2\"))), apply_to = function)")
#define AVX2_TARGET_END _Pragma("clang attribute pop")
#else
#define AVX2_TARGET_BEGIN _Pragma("GCC push_options") _Pragma("GCC target(\"avx2\")")
#define AVX2_TARGET_END _Pragma("GCC pop_options")
#endif
#endif

#endif
