/* The vector loops that move a linear row in and out (lanes.h): input positions repeated
 * into an expanded row (converted to float32), and float32 results converted to 8- and
 * 16-bit integers. Included by linear_isa.h for each instruction set that has lanes, before
 * its scalar loops, which call these for the part they cover and finish the rest. Every
 * conversion is the scalar one, lane by lane: integers to float32 exactly (int32 rounded to
 * nearest, as C converts), float32 results truncated toward zero and saturated.
 */

/* VL elements of one type from p, as float32 (exact; int32 rounded to nearest). */
#if defined(LANES_AVX2)
static inline VF NAME(vload_INT8)(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}
static inline VF NAME(vload_UINT8)(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}
static inline VF NAME(vload_INT16)(const int16_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)));
}
static inline VF NAME(vload_UINT16)(const uint16_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)));
}
static inline VF NAME(vload_INT32)(const int32_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
}
#else
static inline __m128i NAME(load32)(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm_cvtsi32_si128(v);
}
static inline VF NAME(vload_INT8)(const int8_t *p)
{
    __m128i v = NAME(load32)(p);
    v = _mm_unpacklo_epi8(v, v);
    return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 24));
}
static inline VF NAME(vload_UINT8)(const uint8_t *p)
{
    __m128i zero = _mm_setzero_si128();
    __m128i v = _mm_unpacklo_epi8(NAME(load32)(p), zero);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, zero));
}
static inline VF NAME(vload_INT16)(const int16_t *p)
{
    __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 16));
}
static inline VF NAME(vload_UINT16)(const uint16_t *p)
{
    __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, _mm_setzero_si128()));
}
static inline VF NAME(vload_INT32)(const int32_t *p)
{
    return _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}
#endif
static inline VF NAME(vload_FLOAT32)(const float *p) { return V_LOAD(p); }

/* Each of the first positions of x (`block` elements each) k times into e, converted: the
 * positions it covers (the scalar loop does the rest), never reading past the n positions.
 *
 * AVX2: output element g reads input element (g / (k * block)) * block + g % block, a
 * pattern that repeats every lcm(8, k * block) outputs; each output vector of one such
 * cycle is a permutation of 8 inputs loaded from its own start, both made once per call
 * (single elements at scale 2, the commonest, by unpacking each vector instead).
 * SSE2: scale 2 of single elements by duplicating each vector's lanes; blocks of 2 to 4
 * elements by a vector loaded at each position and stored k times, `block` apart, its lanes
 * past the block written over by the next store (and those of the last position covered by
 * the positions left to the scalar loop, which write at least 4 - block elements after
 * it). */
#if defined(LANES_AVX2)
/* Output vectors in one cycle at most (the cycle's input starts are then within 64). */
#define REPEAT_CYCLE 8
#define DEFINE_VREPEAT(T)                                                                    \
    static int64_t NAME(vrepeat_##T)(const stored_##T *x, int64_t n, int64_t k,             \
                                     int64_t block, float *e)                                \
    {                                                                                        \
        if (block == 1 && k == 2) { /* each element twice, without tables */                 \
            int64_t i = 0;                                                                   \
            for (; i + 8 <= n; i += 8) {                                                     \
                VF v = NAME(vload_##T)(x + i);                                               \
                VF lo = _mm256_unpacklo_ps(v, v), hi = _mm256_unpackhi_ps(v, v);             \
                V_STORE(e + 2 * i, _mm256_permute2f128_ps(lo, hi, 0x20));                    \
                V_STORE(e + 2 * i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));                \
            }                                                                                \
            return i;                                                                        \
        }                                                                                    \
        const int64_t kb = k * block;                                                        \
        int64_t cycle = 8; /* outputs per cycle: lcm(8, kb) */                               \
        while (cycle % kb)                                                                   \
            cycle += 8;                                                                      \
        const int64_t vectors = cycle / 8, per_cycle = cycle / kb * block;                   \
        if (vectors > REPEAT_CYCLE)                                                          \
            return 0;                                                                        \
        int64_t start[REPEAT_CYCLE], reach = 0;                                              \
        VI order[REPEAT_CYCLE];                                                              \
        /* output g's input, (g / kb) * block + g % block, counted rather than divided: the \
         * tables are made for every row, and rows may be short */                           \
        int64_t q = 0, r = 0, rb = 0;                                                        \
        for (int64_t v = 0; v < vectors; v++) {                                              \
            int32_t lanes[8];                                                                \
            int64_t lo = INT64_MAX, hi = 0;                                                  \
            for (int64_t i = 0; i < 8; i++) {                                                \
                int64_t from = q * block + rb;                                               \
                lanes[i] = (int32_t)from;                                                    \
                lo = from < lo ? from : lo;                                                  \
                hi = from > hi ? from : hi;                                                  \
                if (++r == kb)                                                               \
                    r = rb = 0, q++;                                                         \
                else if (++rb == block)                                                      \
                    rb = 0;                                                                  \
            }                                                                                \
            if (hi - lo >= 8) /* not one vector's reach (never for blocks up to 8) */        \
                return 0;                                                                    \
            start[v] = lo;                                                                   \
            order[v] = _mm256_sub_epi32(                                                     \
                _mm256_loadu_si256((const __m256i *)(const void *)lanes),                    \
                _mm256_set1_epi32((int32_t)lo));                                             \
            reach = lo + 8 > reach ? lo + 8 : reach;                                         \
        }                                                                                    \
        int64_t in = 0;                                                                      \
        float *to = e;                                                                       \
        for (; in + reach <= n * block; in += per_cycle, to += cycle)                        \
            for (int64_t v = 0; v < vectors; v++)                                            \
                V_STORE(to + 8 * v, _mm256_permutevar8x32_ps(                                \
                                        NAME(vload_##T)(x + in + start[v]), order[v]));     \
        return in / block;                                                                   \
    }
#else
#define DEFINE_VREPEAT(T)                                                                    \
    static int64_t NAME(vrepeat_##T)(const stored_##T *x, int64_t n, int64_t k,             \
                                     int64_t block, float *e)                                \
    {                                                                                        \
        int64_t i = 0;                                                                       \
        if (block == 1 && k == 2) {                                                          \
            for (; i + 4 <= n; i += 4) {                                                     \
                VF v = NAME(vload_##T)(x + i);                                               \
                V_STORE(e + 2 * i, _mm_unpacklo_ps(v, v));                                   \
                V_STORE(e + 2 * i + 4, _mm_unpackhi_ps(v, v));                               \
            }                                                                                \
        } else if (block >= 2 && block <= 4) {                                               \
            const int64_t positions = n - (4 + block - 1) / block + 1;                       \
            const stored_##T *from = x;                                                      \
            for (; i < positions; i++, from += block, e += k * block) {                      \
                VF v = NAME(vload_##T)(from);                                                \
                for (int64_t t = 0; t < k; t++)                                              \
                    V_STORE(e + t * block, v);                                               \
            }                                                                                \
        }                                                                                    \
        return i;                                                                            \
    }
#endif
DEFINE_VREPEAT(INT8)
DEFINE_VREPEAT(UINT8)
DEFINE_VREPEAT(INT16)
DEFINE_VREPEAT(UINT16)
DEFINE_VREPEAT(INT32)
DEFINE_VREPEAT(FLOAT32)
#undef DEFINE_VREPEAT

/* The vector part of plain_float32 (linear_isa.h): whether the first values of `row`, whole
 * vectors of them, are plain (see linear_cache.h); *done: how many it read. The same three
 * extremes of the bits, then one test of all three. SSE2 has no 32-bit minimum or maximum:
 * each vector's lanes are compared with the bounds instead (magnitudes are never negative,
 * so signed compares order them). */
#if defined(LANES_AVX2)
static int NAME(vplain_FLOAT32)(const char *row, int64_t n, int64_t *done)
{
    const VI magnitude_bits = _mm256_set1_epi32(INT32_MAX), one = _mm256_set1_epi32(1);
    /* two vectors at a time, their extremes first: one chain of each extreme across the
     * loop, which the compiler keeps in place */
    VI most = _mm256_setzero_si256(), least_signed = magnitude_bits;
    VI least_less_one = _mm256_set1_epi32(-1);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const VI a = _mm256_loadu_si256((const __m256i *)(const void *)(row + 4 * i));
        const VI b = _mm256_loadu_si256((const __m256i *)(const void *)(row + 4 * i + 32));
        most = _mm256_max_epi32(most, _mm256_max_epi32(_mm256_and_si256(a, magnitude_bits),
                                                       _mm256_and_si256(b, magnitude_bits)));
        least_signed = _mm256_min_epi32(least_signed, _mm256_min_epi32(a, b));
        least_less_one = _mm256_min_epu32(
            least_less_one,
            _mm256_min_epu32(_mm256_sub_epi32(a, one), _mm256_sub_epi32(b, one)));
    }
    *done = i;
    /* unsigned least_less_one < PLAIN_LOW - 1: its minimum with PLAIN_LOW - 2 is itself */
    const VI tiny_positive = _mm256_cmpeq_epi32(
        _mm256_min_epu32(least_less_one, _mm256_set1_epi32((int32_t)(PLAIN_LOW - 2u))),
        least_less_one);
    const VI bad = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpgt_epi32(most, _mm256_set1_epi32(0x7F7FFFFF)),
                        _mm256_cmpgt_epi32(_mm256_set1_epi32(INT32_MIN + (int32_t)PLAIN_LOW),
                                           least_signed)),
        tiny_positive);
    return _mm256_testz_si256(bad, bad);
}
#else
static int NAME(vplain_FLOAT32)(const char *row, int64_t n, int64_t *done)
{
    const VI magnitude_bits = _mm_set1_epi32(INT32_MAX), zero = _mm_setzero_si128();
    const VI top = _mm_set1_epi32(0x7F7FFFFF), low = _mm_set1_epi32((int32_t)PLAIN_LOW);
    VI bad = zero;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const VI bits = _mm_loadu_si128((const __m128i *)(const void *)(row + 4 * i));
        const VI magnitude = _mm_and_si128(bits, magnitude_bits);
        /* finite; and a magnitude below PLAIN_LOW only for +0 */
        bad = _mm_or_si128(bad, _mm_cmpgt_epi32(magnitude, top));
        bad = _mm_or_si128(bad, _mm_andnot_si128(_mm_cmpeq_epi32(bits, zero),
                                                 _mm_cmplt_epi32(magnitude, low)));
    }
    *done = i;
    return _mm_movemask_epi8(bad) == 0;
}
#endif

/* float32 results to 8- and 16-bit integers: the first of `width` (the scalar loop does the
 * rest). min(top, v) first (a NaN stays NaN: minps returns its second operand then), then
 * truncation to int32 (a NaN, or a value below int32's range, gives INT32_MIN), then
 * saturating packs: each value clamped to [low, top] and truncated, NaN to low, as the
 * scalar store does. */
#if defined(LANES_AVX2)
#define CVT(p) _mm256_cvttps_epi32(_mm256_min_ps(top, V_LOAD(p)))
#define DEFINE_VSTORE_BYTES(T, PACK16)                                                       \
    static int64_t NAME(vstore_##T)(const float *acc, stored_##T *o, int64_t width,         \
                                    float top_value)                                         \
    {                                                                                        \
        const VF top = V_SET1(top_value);                                                    \
        const VI order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);                          \
        int64_t f = 0;                                                                       \
        for (; f + 32 <= width; f += 32) {                                                   \
            VI ab = _mm256_packs_epi32(CVT(acc + f), CVT(acc + f + 8));                      \
            VI cd = _mm256_packs_epi32(CVT(acc + f + 16), CVT(acc + f + 24));                \
            VI bytes = _mm256_permutevar8x32_epi32(PACK16(ab, cd), order);                   \
            _mm256_storeu_si256((__m256i *)(void *)(o + f), bytes);                          \
        }                                                                                    \
        return f;                                                                            \
    }
#define DEFINE_VSTORE_WORDS(T, PACK32)                                                       \
    static int64_t NAME(vstore_##T)(const float *acc, stored_##T *o, int64_t width,         \
                                    float top_value)                                         \
    {                                                                                        \
        const VF top = V_SET1(top_value);                                                    \
        int64_t f = 0;                                                                       \
        for (; f + 16 <= width; f += 16) {                                                   \
            VI words = _mm256_permute4x64_epi64(PACK32(CVT(acc + f), CVT(acc + f + 8)),      \
                                                0xD8);                                       \
            _mm256_storeu_si256((__m256i *)(void *)(o + f), words);                          \
        }                                                                                    \
        return f;                                                                            \
    }
DEFINE_VSTORE_BYTES(INT8, _mm256_packs_epi16)
DEFINE_VSTORE_BYTES(UINT8, _mm256_packus_epi16)
DEFINE_VSTORE_WORDS(INT16, _mm256_packs_epi32)
DEFINE_VSTORE_WORDS(UINT16, _mm256_packus_epi32)
#else
#define CVT(p) _mm_cvttps_epi32(_mm_min_ps(top, V_LOAD(p)))
#define DEFINE_VSTORE_BYTES(T, PACK16)                                                       \
    static int64_t NAME(vstore_##T)(const float *acc, stored_##T *o, int64_t width,         \
                                    float top_value)                                         \
    {                                                                                        \
        const VF top = V_SET1(top_value);                                                    \
        int64_t f = 0;                                                                       \
        for (; f + 16 <= width; f += 16) {                                                   \
            VI ab = _mm_packs_epi32(CVT(acc + f), CVT(acc + f + 4));                         \
            VI cd = _mm_packs_epi32(CVT(acc + f + 8), CVT(acc + f + 12));                    \
            _mm_storeu_si128((__m128i *)(void *)(o + f), PACK16(ab, cd));                    \
        }                                                                                    \
        return f;                                                                            \
    }
DEFINE_VSTORE_BYTES(INT8, _mm_packs_epi16)
DEFINE_VSTORE_BYTES(UINT8, _mm_packus_epi16)
static int64_t NAME(vstore_INT16)(const float *acc, stored_INT16 *o, int64_t width,
                                  float top_value)
{
    const VF top = V_SET1(top_value);
    int64_t f = 0;
    for (; f + 8 <= width; f += 8)
        _mm_storeu_si128((__m128i *)(void *)(o + f),
                         _mm_packs_epi32(CVT(acc + f), CVT(acc + f + 4)));
    return f;
}
/* SSE2 has no unsigned 32-to-16-bit pack: the scalar loop does all */
static int64_t NAME(vstore_UINT16)(const float *acc, stored_UINT16 *o, int64_t width,
                                   float top_value)
{
    (void)acc, (void)o, (void)width, (void)top_value;
    return 0;
}
#endif
#undef CVT
#undef DEFINE_VSTORE_BYTES
#undef DEFINE_VSTORE_WORDS
