/* The row loops of the nearest kernel that vector moves speed up: the repeat by 2 of 1-,
 * 2-, 4- and 8-byte elements (one row, two rows, a plane) in every variant, and in the one
 * with 32-byte registers (WIDE: AVX2) also the gather of 4- and 8-byte positions by
 * permutes and the repeat by 2 of 3-byte pixels by byte shuffles. Included once per
 * instruction set by nearest.c, with ISA naming the variant; without SSE2 (not x86)
 * nearest.c uses its scalar loops (nearest_scalar.h) instead. The loops move bytes and
 * compute nothing, so every variant writes the same output.
 *
 * A row's length is rarely a multiple of the register: rather than finishing element by
 * element (a 13-element row, the YOLO head's, would spend most of its time there), the last
 * register is loaded again ending at the row's last byte and its output stored again over
 * the previous one, with the same values. Nothing outside the row is read or written.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define NAME(base) CAT(base, ISA)
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* Each element of v twice, elements of `bits` bits: the first 16 bytes of the result, then
 * the second 16. */
#define TWICE_16(bits, v, lo, hi)                                                          \
    __m128i lo = _mm_unpacklo_epi##bits(v, v), hi = _mm_unpackhi_epi##bits(v, v)

#define DEFINE_TWICE(bits)                                                                 \
    ALWAYS_INLINE void NAME(twice_body_##bits)(const char *x, char *a, char *b, size_t n,  \
                                               int two)                                    \
    {                                                                                      \
        size_t i = 0;                                                                      \
        if (WIDE && n >= 32) {                                                             \
            for (;;) {                                                                     \
                if (i + 32 > n)                                                            \
                    i = n - 32;                                                            \
                WIDE_TWICE(bits, x + i, a + 2 * i, b + 2 * i, two);                        \
                i += 32;                                                                   \
                if (i >= n)                                                                \
                    return;                                                                \
            }                                                                              \
        }                                                                                  \
        if (n >= 16) {                                                                     \
            for (;;) {                                                                     \
                if (i + 16 > n)                                                            \
                    i = n - 16;                                                            \
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(x + i));       \
                TWICE_16(bits, v, lo, hi);                                                 \
                _mm_storeu_si128((__m128i *)(void *)(a + 2 * i), lo);                      \
                _mm_storeu_si128((__m128i *)(void *)(a + 2 * i + 16), hi);                 \
                if (two) {                                                                 \
                    _mm_storeu_si128((__m128i *)(void *)(b + 2 * i), lo);                  \
                    _mm_storeu_si128((__m128i *)(void *)(b + 2 * i + 16), hi);             \
                }                                                                          \
                i += 16;                                                                   \
                if (i >= n)                                                                \
                    return;                                                                \
            }                                                                              \
        }                                                                                  \
        /* 8 <= n < 16 (the caller's condition): two 8-byte halves, the second overlapping */ \
        __m128i v0 = _mm_loadl_epi64((const __m128i *)(const void *)x);                    \
        __m128i v1 = _mm_loadl_epi64((const __m128i *)(const void *)(x + n - 8));          \
        __m128i w0 = _mm_unpacklo_epi##bits(v0, v0), w1 = _mm_unpacklo_epi##bits(v1, v1);  \
        _mm_storeu_si128((__m128i *)(void *)a, w0);                                        \
        _mm_storeu_si128((__m128i *)(void *)(a + 2 * n - 16), w1);                         \
        if (two) {                                                                         \
            _mm_storeu_si128((__m128i *)(void *)b, w0);                                    \
            _mm_storeu_si128((__m128i *)(void *)(b + 2 * n - 16), w1);                     \
        }                                                                                  \
    }

#if WIDE
/* 32 bytes of x, each element twice, into 64 bytes at a (and at b): the 256-bit unpacks
 * work within 16-byte lanes, so the two halves are put back in order across lanes. */
#define WIDE_TWICE(bits, src, dst_a, dst_b, two)                                           \
    do {                                                                                   \
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(src));              \
        __m256i lo = _mm256_unpacklo_epi##bits(v, v), hi = _mm256_unpackhi_epi##bits(v, v); \
        __m256i o0 = _mm256_permute2x128_si256(lo, hi, 0x20);                              \
        __m256i o1 = _mm256_permute2x128_si256(lo, hi, 0x31);                              \
        _mm256_storeu_si256((__m256i *)(void *)(dst_a), o0);                               \
        _mm256_storeu_si256((__m256i *)(void *)((dst_a) + 32), o1);                        \
        if (two) {                                                                         \
            _mm256_storeu_si256((__m256i *)(void *)(dst_b), o0);                           \
            _mm256_storeu_si256((__m256i *)(void *)((dst_b) + 32), o1);                    \
        }                                                                                  \
    } while (0)
#else
#define WIDE_TWICE(bits, src, dst_a, dst_b, two) ((void)0)
#endif

DEFINE_TWICE(8)
DEFINE_TWICE(16)
DEFINE_TWICE(32)
DEFINE_TWICE(64)

/* x's n bytes (n >= 8, a multiple of unit), each `unit`-byte element twice, into a and,
 * when b is not NULL, into b as well (the next output row, reading the same input row). */
static void NAME(repeat_twice)(const char *restrict x, char *restrict a, char *restrict b,
                               size_t n, int unit)
{
    switch (unit * (b ? -1 : 1)) {
    case 1: NAME(twice_body_8)(x, a, b, n, 0); return;
    case -1: NAME(twice_body_8)(x, a, b, n, 1); return;
    case 2: NAME(twice_body_16)(x, a, b, n, 0); return;
    case -2: NAME(twice_body_16)(x, a, b, n, 1); return;
    case 4: NAME(twice_body_32)(x, a, b, n, 0); return;
    case -4: NAME(twice_body_32)(x, a, b, n, 1); return;
    case 8: NAME(twice_body_64)(x, a, b, n, 0); return;
    default: NAME(twice_body_64)(x, a, b, n, 1); return;
    }
}

/* `pairs` input rows, `step` bytes apart, of n bytes each (n >= 8): each element of a row
 * twice into two output rows, `row` bytes apart, the next input row into the next two.
 * The x2-by-x2 upsample of a plane in one loop: no per-row dispatch, no index arithmetic. */
#define DEFINE_TWICE_ROWS(bits)                                                            \
    static void NAME(twice_rows_##bits)(const char *x, size_t step, char *out, size_t row, \
                                        int64_t pairs, size_t n)                           \
    {                                                                                      \
        for (int64_t i = 0; i < pairs; i++, x += step, out += 2 * row)                     \
            NAME(twice_body_##bits)(x, out, out + row, n, 1);                              \
    }

DEFINE_TWICE_ROWS(8)
DEFINE_TWICE_ROWS(16)
DEFINE_TWICE_ROWS(32)
DEFINE_TWICE_ROWS(64)

static void NAME(repeat_twice_rows)(const char *x, size_t step, char *out, size_t row,
                                    int64_t pairs, size_t n, int unit)
{
    switch (unit) {
    case 1: NAME(twice_rows_8)(x, step, out, row, pairs, n); return;
    case 2: NAME(twice_rows_16)(x, step, out, row, pairs, n); return;
    case 4: NAME(twice_rows_32)(x, step, out, row, pairs, n); return;
    default: NAME(twice_rows_64)(x, step, out, row, pairs, n); return;
    }
}

#undef DEFINE_TWICE_ROWS
#if WIDE
/* A gathered row of 4- or 8-byte positions, 32 output bytes at a time: the positions of
 * chunk c all read within the 32 input bytes from position start[c] (nearest.c's
 * plan_chunks checked it), so one load and one permute by dwords[8c .. 8c+7] make them,
 * instead of a table read, a load and a store per position. */
static void NAME(gather_chunks)(const char *x, char *out, const int64_t *start,
                                const int32_t *dwords, int64_t chunks, size_t w)
{
    for (int64_t c = 0; c < chunks; c++) {
        __m256i idx = _mm256_loadu_si256((const __m256i *)(const void *)(dwords + 8 * c));
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(x + (size_t)start[c] * w));
        _mm256_storeu_si256((__m256i *)(void *)(out + 32 * c), _mm256_permutevar8x32_epi32(v, idx));
    }
}

/* Where the 16 output bytes of chunk t (of six: 16 three-byte items twice each) start
 * reading in the group's 48 input bytes, and which of the 16 bytes from there each output
 * byte takes; every load stays inside the group. */
static const int RGB_LOAD[6] = {0, 7, 15, 24, 31, 32};
static const char RGB_PICK[6][16] = {
    {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 6},
    {0, 1, 2, 3, 4, 2, 3, 4, 5, 6, 7, 5, 6, 7, 8, 9},
    {2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 6, 7, 8},
    {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8, 6},
    {0, 1, 2, 3, 4, 2, 3, 4, 5, 6, 7, 5, 6, 7, 8, 9},
    {9, 7, 8, 9, 10, 11, 12, 10, 11, 12, 13, 14, 15, 13, 14, 15},
};

/* 16 three-byte items (RGB pixels) from x, each twice, into 96 bytes at out: six byte
 * shuffles, two to a 32-byte store. */
ALWAYS_INLINE void NAME(rgb_group)(const char *x, char *out, const __m256i *pick)
{
    for (int t = 0; t < 6; t += 2) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(x + RGB_LOAD[t]));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(x + RGB_LOAD[t + 1]));
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
        _mm256_storeu_si256((__m256i *)(void *)(out + 16 * t),
                            _mm256_shuffle_epi8(v, pick[t / 2]));
    }
}

/* n three-byte items (n >= 16) each twice: whole groups of 16, then the last 16 again,
 * ending on the last item (the same bytes over the ones already there). */
static void NAME(rgb_twice)(const char *x, char *out, int64_t n)
{
    __m256i pick[3];
    for (int t = 0; t < 6; t += 2)
        pick[t / 2] = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)RGB_PICK[t])),
            _mm_loadu_si128((const __m128i *)(const void *)RGB_PICK[t + 1]), 1);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        NAME(rgb_group)(x + 3 * i, out + 6 * i, pick);
    if (i < n)
        NAME(rgb_group)(x + 3 * (n - 16), out + 6 * (n - 16), pick);
}
#endif

#undef WIDE_TWICE
#undef DEFINE_TWICE
#undef TWICE_16
#undef ALWAYS_INLINE
#undef NAME
#undef CAT
#undef CAT_
