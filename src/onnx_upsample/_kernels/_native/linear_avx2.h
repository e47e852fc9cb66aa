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

/* One output row's blend: its terms' weights and expanded rows, and where it goes. */
typedef struct {
    const float *const *W;    /* per tap: the row segment's weights */
    float *const *E;          /* per term (corner, then tap): the expanded input row */
    const __m256 *fv;         /* per corner and outer axis: its weight in every lane */
    int64_t periodic_end;     /* the row weights repeat every 8 up to here (periodic_end) */
    float *out;
} Avx2Row;

/* One vector of outputs at f: the terms' weight vectors in `wc` (periodic weights) or, with
 * wc NULL, made here from the row weights and the outer weights `fv`. n < 8: only the first
 * n outputs, read with masked loads (the lanes past them read nothing and are 0). */
static inline __attribute__((always_inline)) __m256 avx2_vector_f(
    int64_t f, int64_t n, const int NI, const int T, const __m256 *wc, const __m256 *fv,
    const float *const *W, float *const *E)
{
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n),
                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 v = _mm256_setzero_ps();
    for (int c = 0; c < (1 << NI); c++)
        for (int t = 0; t < T; t++) {
            __m256 w;
            if (wc) {
                w = wc[c * T + t];
            } else {
                w = n < 8 ? _mm256_maskload_ps(W[t] + f, mask) : _mm256_loadu_ps(W[t] + f);
                for (int q = 0; q < NI; q++)
                    w = _mm256_mul_ps(w, fv[c * NI + q]);
            }
            const float *e = E[c * T + t] + f;
            __m256 p = _mm256_mul_ps(w, n < 8 ? _mm256_maskload_ps(e, mask) : _mm256_loadu_ps(e));
            v = c == 0 && t == 0 ? p : avx2_add_first(v, p);
        }
    return v;
}

/* Outputs [a, b) of one row. `wc`: the weight vectors of the vector at a, valid for every
 * vector that ends by the periodic end (NULL: none). With `stream`, out + a is 32-byte
 * aligned and b - a a multiple of 8. */
static inline __attribute__((always_inline)) void avx2_blend_f(
    const Avx2Row *row, const __m256 *wc, int64_t a, int64_t b, const int NI, const int T,
    const int stream)
{
    const __m256 *fv = row->fv;
    const float *const *W = row->W;
    float *const *E = row->E;
    float *out = row->out;
    const int64_t periodic_end = row->periodic_end;
    int64_t f = a;
    if (wc) {
        int64_t end = periodic_end < b ? periodic_end : b;
        for (; f + 8 <= end; f += 8)
            avx2_put(out + f, avx2_vector_f(f, 8, NI, T, wc, fv, W, E), stream);
        if (f < b && b <= periodic_end) {
            avx2_put_part(out + f, avx2_vector_f(f, b - f, NI, T, wc, fv, W, E), b - f);
            return;
        }
    }
    for (; f + 8 <= b; f += 8)
        avx2_put(out + f, avx2_vector_f(f, 8, NI, T, NULL, fv, W, E), stream);
    if (f < b)
        avx2_put_part(out + f, avx2_vector_f(f, b - f, NI, T, NULL, fv, W, E), b - f);
}

/* One output row. Where the row weights repeat every 8 outputs, each term's weight vector
 * (row weights times outer weights, the same float32 products) is made once per row, and
 * rotated for vectors that start at another offset modulo 8. With streaming stores the
 * partial cache lines at either end are ordinary stores (see stream_copy) and the whole
 * lines between are streamed. */
static inline __attribute__((always_inline)) void avx2_row_f(
    int64_t width, int64_t periodic_end, const int NI, const int T, const float *const *W,
    const float *F, float *const *E, float *out, int stream)
{
    __m256 fv[AVX2_MAX_TERMS * 3 / 2], wc[AVX2_MAX_TERMS];
    for (int c = 0; c < (1 << NI); c++)
        for (int q = 0; q < NI; q++)
            fv[c * NI + q] = _mm256_set1_ps(F[c * NI + q]);
    const int periodic = periodic_end >= 8;
    if (periodic)
        for (int c = 0; c < (1 << NI); c++)
            for (int t = 0; t < T; t++) {
                __m256 w = _mm256_loadu_ps(W[t]);
                for (int q = 0; q < NI; q++)
                    w = _mm256_mul_ps(w, fv[c * NI + q]);
                wc[c * T + t] = w;
            }
    const Avx2Row row = {W, E, fv, periodic_end, out};
    if (!stream) {
        avx2_blend_f(&row, periodic ? wc : NULL, 0, width, NI, T, 0);
        return;
    }
    int64_t head = (int64_t)(((64 - ((uintptr_t)out & 63)) & 63) / sizeof(float));
    if (head > width)
        head = width;
    int64_t body = (width - head) / 16 * 16;
    avx2_blend_f(&row, periodic ? wc : NULL, 0, head, NI, T, 0);
    if (periodic && head % 8) {
        /* lane i of a vector at `head` has the weights of lane (i + head) mod 8 at 0 */
        int r = (int)(head % 8);
        __m256i turn = _mm256_setr_epi32(r, (r + 1) & 7, (r + 2) & 7, (r + 3) & 7,
                                         (r + 4) & 7, (r + 5) & 7, (r + 6) & 7, (r + 7) & 7);
        for (int k = 0; k < (1 << NI) * T; k++)
            wc[k] = _mm256_permutevar8x32_ps(wc[k], turn);
    }
    avx2_blend_f(&row, periodic ? wc : NULL, head, head + body, NI, T, 1);
    avx2_blend_f(&row, periodic ? wc : NULL, head + body, width, NI, T, 0);
}

/* 0 where this blend has no variant here (the caller then uses linear_sum.h). */
static int avx2_sum_row_f(int64_t width, int64_t periodic_end, int NI, int T,
                          const float *const *W, const float *F, void *const *E_, float *out,
                          int stream)
{
    /* local copies: the compiler reloads pointers read through a pointer at every vector
     * (a store to the output could, as far as it knows, change them) */
    float *E[AVX2_MAX_TERMS];
    const float *W_[2] = {W[0], T > 1 ? W[1] : W[0]};
    for (int k = 0; k < (1 << NI) * T && k < AVX2_MAX_TERMS; k++)
        E[k] = (float *)E_[k];
    W = W_;
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
