/* The float32 blend written for AVX2 with intrinsics (the row and outer-axis taps; not the
 * channels-last block's four taps, which keep linear_sum.h). Included by linear.c inside
 * its AVX2 section, after linear_isa.h. It performs the operations of linear_sum.h in the
 * same order and gives the same bits; it is faster for three reasons:
 *
 * - The running sum is added as the first operand of vaddps, written in assembly: x86
 *   returns that operand's NaN when both are NaN, which is the rule linear_sum.h spells
 *   out with a compare and a blend per add (a compiler may swap a commutative add's
 *   operands, so only an assembly add keeps the order without them).
 * - Where the row weights repeat every 8 elements (integer scales 1, 2, 4, 8 on the row
 *   axis, away from the row's end), each term's weight vector, the row weight times the
 *   outer weights, is made once per output row instead of once per 8 outputs: the same
 *   float32 products of the same values.
 * - With streaming stores the whole cache lines of a row are streamed from the registers,
 *   not assembled in a buffer and copied.
 */

#define AVX2_MAX_TERMS 16

static inline __attribute__((always_inline)) __m256 avx2_add_first(__m256 sum, __m256 term)
{
    __m256 r;
    __asm__("vaddps %2, %1, %0" : "=x"(r) : "x"(sum), "x"(term));
    return r;
}

static inline __attribute__((always_inline)) void avx2_put(float *to, __m256 v, const int stream)
{
    if (stream)
        _mm256_stream_ps(to, v);
    else
        _mm256_storeu_ps(to, v);
}

/* The first n (1-7) lanes of v to `to`. */
static inline __attribute__((always_inline)) void avx2_put_part(float *to, __m256 v, int64_t n)
{
    __m128 part = _mm256_castps256_ps128(v);
    if (n & 4) {
        _mm_storeu_ps(to, part);
        part = _mm256_extractf128_ps(v, 1);
        to += 4;
    }
    if (n & 2) {
        _mm_storel_pi((__m64 *)(void *)to, part);
        part = _mm_movehl_ps(part, part);
        to += 2;
    }
    if (n & 1)
        _mm_store_ss(to, part);
}

/* Outputs [a, b) of one row; `periodic_end`: the row weights of f and f + 8 are equal for
 * every f + 8 < periodic_end. With `stream`, out + a is 32-byte aligned. */
static inline __attribute__((always_inline)) void avx2_blend_f(
    int64_t a, int64_t b, int64_t periodic_end, const int NI, const int T,
    const float *const *W, const float *F, float *const *E, float *out, const int stream)
{
    const int terms = (1 << NI) * T;
    int64_t f = a;
    int64_t end = periodic_end < b ? periodic_end : b;
    if (f + 8 <= end) {
        __m256 wc[AVX2_MAX_TERMS];
        for (int c = 0; c < (1 << NI); c++)
            for (int t = 0; t < T; t++) {
                __m256 w = _mm256_loadu_ps(W[t] + f);
                for (int q = 0; q < NI; q++)
                    w = _mm256_mul_ps(w, _mm256_set1_ps(F[c * NI + q]));
                wc[c * T + t] = w;
            }
        for (; f + 8 <= end; f += 8) {
            __m256 v = _mm256_mul_ps(wc[0], _mm256_loadu_ps(E[0] + f));
            for (int k = 1; k < terms; k++)
                v = avx2_add_first(v, _mm256_mul_ps(wc[k], _mm256_loadu_ps(E[k] + f)));
            avx2_put(out + f, v, stream);
        }
    }
    if (f >= b)
        return;
    __m256 fv[AVX2_MAX_TERMS * 3 / 2];
    for (int c = 0; c < (1 << NI); c++)
        for (int q = 0; q < NI; q++)
            fv[c * NI + q] = _mm256_set1_ps(F[c * NI + q]);
    for (; f + 8 <= b; f += 8) {
        __m256 v = _mm256_setzero_ps();
        for (int c = 0; c < (1 << NI); c++)
            for (int t = 0; t < T; t++) {
                __m256 w = _mm256_loadu_ps(W[t] + f);
                for (int q = 0; q < NI; q++)
                    w = _mm256_mul_ps(w, fv[c * NI + q]);
                __m256 p = _mm256_mul_ps(w, _mm256_loadu_ps(E[c * T + t] + f));
                v = c == 0 && t == 0 ? p : avx2_add_first(v, p);
            }
        avx2_put(out + f, v, stream);
    }
    if (f < b) {
        /* the last 1-7 outputs: masked loads (the lanes past b read nothing and come out
         * 0), then stores of 4, 2 and 1 lanes (a masked store is microcoded and slow on
         * AMD cores) */
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(b - f)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 v = _mm256_setzero_ps();
        for (int c = 0; c < (1 << NI); c++)
            for (int t = 0; t < T; t++) {
                __m256 w = _mm256_maskload_ps(W[t] + f, mask);
                for (int q = 0; q < NI; q++)
                    w = _mm256_mul_ps(w, fv[c * NI + q]);
                __m256 p = _mm256_mul_ps(w, _mm256_maskload_ps(E[c * T + t] + f, mask));
                v = c == 0 && t == 0 ? p : avx2_add_first(v, p);
            }
        avx2_put_part(out + f, v, b - f);
    }
}

/* One output row: with streaming stores, the partial cache lines at either end are
 * ordinary stores (see stream_copy) and the whole lines between are streamed. */
static inline __attribute__((always_inline)) void avx2_row_f(
    int64_t width, int64_t periodic_end, const int NI, const int T, const float *const *W,
    const float *F, float *const *E, float *out, int stream)
{
    if (!stream) {
        avx2_blend_f(0, width, periodic_end, NI, T, W, F, E, out, 0);
        return;
    }
    int64_t head = (int64_t)(((64 - ((uintptr_t)out & 63)) & 63) / sizeof(float));
    if (head > width)
        head = width;
    int64_t body = (width - head) / 16 * 16;
    avx2_blend_f(0, head, periodic_end, NI, T, W, F, E, out, 0);
    avx2_blend_f(head, head + body, periodic_end, NI, T, W, F, E, out, 1);
    avx2_blend_f(head + body, width, periodic_end, NI, T, W, F, E, out, 0);
}

/* 0 where this blend has no variant here (the caller then uses linear_sum.h). */
static int avx2_sum_row_f(int64_t width, int64_t periodic_end, int NI, int T,
                          const float *const *W, const float *F, void *const *E_, float *out,
                          int stream)
{
    float *const *E = (float *const *)E_;
    switch (NI * 8 + T) {
    case 0 * 8 + 1: avx2_row_f(width, periodic_end, 0, 1, W, F, E, out, stream); return 1;
    case 0 * 8 + 2: avx2_row_f(width, periodic_end, 0, 2, W, F, E, out, stream); return 1;
    case 1 * 8 + 1: avx2_row_f(width, periodic_end, 1, 1, W, F, E, out, stream); return 1;
    case 1 * 8 + 2: avx2_row_f(width, periodic_end, 1, 2, W, F, E, out, stream); return 1;
    case 2 * 8 + 1: avx2_row_f(width, periodic_end, 2, 1, W, F, E, out, stream); return 1;
    case 2 * 8 + 2: avx2_row_f(width, periodic_end, 2, 2, W, F, E, out, stream); return 1;
    case 3 * 8 + 1: avx2_row_f(width, periodic_end, 3, 1, W, F, E, out, stream); return 1;
    case 3 * 8 + 2: avx2_row_f(width, periodic_end, 3, 2, W, F, E, out, stream); return 1;
    default: return 0;
    }
}
