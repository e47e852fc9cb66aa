/* Float32 vector lanes for the linear kernel's vector loops (linear_vec.h, linear_vec_io.h),
 * one set per instruction set: the baseline's SSE2 (4 lanes) and AVX2 (8 lanes). linear.c
 * defines LANES_SSE2 or LANES_AVX2 for each instruction set's section, and linear_isa.h
 * includes this file there (its functions named per set by NAME); the portable build (no
 * SSE2) has neither, and no vector loops.
 *
 * Every operation is one IEEE operation per lane, as the scalar code performs it: the vector
 * loops compute several outputs at once, each in its own order, never two parts of one
 * output's sum at once.
 */
#undef VL
#undef VF
#undef VI
#undef V_LOAD
#undef V_MUL
#undef V_AND
#undef V_SEL
#undef V_SET1
#undef V_STORE
#undef V_STREAM

#if defined(LANES_AVX2)
#define VL 8
#define VF __m256
#define VI __m256i
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_AND(a, b) _mm256_and_ps(a, b)
#define V_SEL(mask, a, b) _mm256_blendv_ps(b, a, mask) /* mask ? a : b, per lane */
#define V_SET1(x) _mm256_set1_ps(x)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
#define V_STREAM(p, v) _mm256_stream_ps(p, v)

/* sum + term with the running sum as the first operand, in assembly: x86 returns the first
 * operand's NaN when both are NaN, the rule the scalar code spells out (first_nan_add), and
 * a compiler may swap the operands of a commutative add written in C. */
static inline __attribute__((always_inline)) VF NAME(v_add_first)(VF sum, VF term)
{
    VF r;
    __asm__("vaddps %2, %1, %0" : "=x"(r) : "x"(sum), "x"(term));
    return r;
}
#elif defined(LANES_SSE2)
#define VL 4
#define VF __m128
#define VI __m128i
#define V_LOAD(p) _mm_loadu_ps(p)
#define V_MUL(a, b) _mm_mul_ps(a, b)
#define V_AND(a, b) _mm_and_ps(a, b)
#define V_SEL(mask, a, b) _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b))
#define V_SET1(x) _mm_set1_ps(x)
#define V_STORE(p, v) _mm_storeu_ps(p, v)
#define V_STREAM(p, v) _mm_stream_ps(p, v)

static inline __attribute__((always_inline)) VF NAME(v_add_first)(VF sum, VF term)
{
    __asm__("addps %1, %0" : "+x"(sum) : "x"(term));
    return sum;
}
#endif
