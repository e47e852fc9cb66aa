/* SIMD backend, x86 AVX2 (see simd.h for the operations): 8 float32 lanes, 32-byte moves,
 * lane permutes and byte shuffles. Included only inside an AVX2 compile region (isa_avx2.c,
 * cpu.h's AVX2_TARGET_BEGIN), whose functions run only where cpu_has_avx2() says so.
 */
#ifndef ONNX_UPSAMPLE_SIMD_AVX2_H
#define ONNX_UPSAMPLE_SIMD_AVX2_H

#include <immintrin.h>

#include "simd_x86.h"

#define SIMD_NAME "avx2"
#define SIMD_LANES 8
#define SIMD_HAS_VB32 1
#define SIMD_HAS_PERMUTE 1
#define SIMD_HAS_MINMAX_I32 1
#define SIMD_HAS_SAT_U16 1

typedef __m256 VF;
typedef __m256i VI;
typedef __m256i VB32;

ALWAYS_INLINE VF vf_load(const float *p) { return _mm256_loadu_ps(p); }
ALWAYS_INLINE void vf_store(float *p, VF v) { _mm256_storeu_ps(p, v); }
ALWAYS_INLINE void vf_stream(float *p, VF v) { _mm256_stream_ps(p, v); }
ALWAYS_INLINE VF vf_set1(float x) { return _mm256_set1_ps(x); }
ALWAYS_INLINE VF vf_mul(VF a, VF b) { return _mm256_mul_ps(a, b); }
ALWAYS_INLINE VF vf_and(VF a, VF b) { return _mm256_and_ps(a, b); }
ALWAYS_INLINE VF vf_select(VF mask, VF a, VF b) { return _mm256_blendv_ps(b, a, mask); }

ALWAYS_INLINE VF vf_add_first(VF sum, VF term)
{
#if COMPILER_GNU
    VF r;
    __asm__("vaddps %2, %1, %0" : "=x"(r) : "x"(sum), "x"(term));
    return r;
#else
    /* vaddps returns its first operand's NaN where both are NaN: where sum is NaN (always a
     * quiet one: every sum starts from a product), keep it */
    return vf_select(_mm256_cmp_ps(sum, sum, _CMP_UNORD_Q), sum, _mm256_add_ps(sum, term));
#endif
}

ALWAYS_INLINE void vf_keep(VF *v)
{
#if COMPILER_GNU
    __asm__("" : "+x"(*v));
#else
    (void)v;
#endif
}

/* 256-bit unpacks work within 16-byte halves: the halves are put back in order */
ALWAYS_INLINE VF vf_twice_lo(VF v)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(v, v), _mm256_unpackhi_ps(v, v), 0x20);
}
ALWAYS_INLINE VF vf_twice_hi(VF v)
{
    return _mm256_permute2f128_ps(_mm256_unpacklo_ps(v, v), _mm256_unpackhi_ps(v, v), 0x31);
}

ALWAYS_INLINE VF vf_from_i8(const int8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(vb16_load_half(p)));
}
ALWAYS_INLINE VF vf_from_u8(const uint8_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(vb16_load_half(p)));
}
ALWAYS_INLINE VF vf_from_i16(const int16_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(vb16_load(p)));
}
ALWAYS_INLINE VF vf_from_u16(const uint16_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(vb16_load(p)));
}
ALWAYS_INLINE VF vf_from_i32(const int32_t *p)
{
    return _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
}

ALWAYS_INLINE VF vf_permute(VF v, VI idx) { return _mm256_permutevar8x32_ps(v, idx); }

/* min(top, v) (a NaN stays NaN: minps returns its second operand then), truncated to int32
 * (a NaN, or a value below int32's range, gives INT32_MIN), then saturating packs, which
 * interleave 16-byte halves: a permute puts them back in order */
ALWAYS_INLINE VI vf_truncate_below(VF top, const float *p)
{
    return _mm256_cvttps_epi32(_mm256_min_ps(top, _mm256_loadu_ps(p)));
}
ALWAYS_INLINE VI vf_bytes_in_order(VI packed)
{
    return _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
ALWAYS_INLINE void vf_store_sat_i8(int8_t *o, const float *acc, VF top)
{
    VI ab = _mm256_packs_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 8));
    VI cd = _mm256_packs_epi32(vf_truncate_below(top, acc + 16),
                               vf_truncate_below(top, acc + 24));
    _mm256_storeu_si256((__m256i *)(void *)o, vf_bytes_in_order(_mm256_packs_epi16(ab, cd)));
}
ALWAYS_INLINE void vf_store_sat_u8(uint8_t *o, const float *acc, VF top)
{
    VI ab = _mm256_packs_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 8));
    VI cd = _mm256_packs_epi32(vf_truncate_below(top, acc + 16),
                               vf_truncate_below(top, acc + 24));
    _mm256_storeu_si256((__m256i *)(void *)o, vf_bytes_in_order(_mm256_packus_epi16(ab, cd)));
}
ALWAYS_INLINE void vf_store_sat_i16(int16_t *o, const float *acc, VF top)
{
    VI words = _mm256_packs_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 8));
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute4x64_epi64(words, 0xD8));
}
ALWAYS_INLINE void vf_store_sat_u16(uint16_t *o, const float *acc, VF top)
{
    VI words = _mm256_packus_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 8));
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_permute4x64_epi64(words, 0xD8));
}

ALWAYS_INLINE VI vi_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
ALWAYS_INLINE VI vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
ALWAYS_INLINE VI vi_and(VI a, VI b) { return _mm256_and_si256(a, b); }
ALWAYS_INLINE VI vi_or(VI a, VI b) { return _mm256_or_si256(a, b); }
ALWAYS_INLINE VI vi_andnot(VI a, VI b) { return _mm256_andnot_si256(a, b); }
ALWAYS_INLINE VI vi_sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
ALWAYS_INLINE VI vi_cmpgt(VI a, VI b) { return _mm256_cmpgt_epi32(a, b); }
ALWAYS_INLINE VI vi_cmplt(VI a, VI b) { return _mm256_cmpgt_epi32(b, a); }
ALWAYS_INLINE VI vi_cmpeq(VI a, VI b) { return _mm256_cmpeq_epi32(a, b); }
ALWAYS_INLINE int vi_any(VI v) { return !_mm256_testz_si256(v, v); }
ALWAYS_INLINE VI vi_max(VI a, VI b) { return _mm256_max_epi32(a, b); }
ALWAYS_INLINE VI vi_min(VI a, VI b) { return _mm256_min_epi32(a, b); }
ALWAYS_INLINE VI vi_min_u(VI a, VI b) { return _mm256_min_epu32(a, b); }

ALWAYS_INLINE VB32 vb32_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
ALWAYS_INLINE void vb32_store(void *p, VB32 v) { _mm256_storeu_si256((__m256i *)p, v); }

/* Each element of v twice into two vectors, in order (the unpacks work within 16-byte
 * halves, so the halves are put back in order across them). */
#define SIMD_AVX2_TWICE(bits)                                                               \
    ALWAYS_INLINE void vb32_twice_##bits(VB32 v, VB32 *first, VB32 *second)                 \
    {                                                                                       \
        VB32 lo = _mm256_unpacklo_epi##bits(v, v), hi = _mm256_unpackhi_epi##bits(v, v);    \
        *first = _mm256_permute2x128_si256(lo, hi, 0x20);                                   \
        *second = _mm256_permute2x128_si256(lo, hi, 0x31);                                  \
    }
SIMD_AVX2_TWICE(8)
SIMD_AVX2_TWICE(16)
SIMD_AVX2_TWICE(32)
SIMD_AVX2_TWICE(64)
#undef SIMD_AVX2_TWICE

ALWAYS_INLINE VB32 vb32_permute_u32(VB32 v, VB32 idx)
{
    return _mm256_permutevar8x32_epi32(v, idx);
}
ALWAYS_INLINE VB32 vb32_from_halves(VB16 lo, VB16 hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
ALWAYS_INLINE VB32 vb32_shuffle_bytes(VB32 v, VB32 pick) { return _mm256_shuffle_epi8(v, pick); }

#endif
