/* SIMD backend, x86 baseline: SSE2, which every x86-64 CPU runs (see simd.h for the
 * operations): 4 float32 lanes. SSE2 has no lane permute, no 32-bit minimum or maximum and
 * no unsigned 32-to-16-bit pack: the kernels take their other ways there.
 */
#ifndef ONNX_UPSAMPLE_SIMD_SSE2_H
#define ONNX_UPSAMPLE_SIMD_SSE2_H

#include "simd_x86.h"

#define SIMD_NAME "sse2"
#define SIMD_LANES 4
#define SIMD_HAS_VB32 0
#define SIMD_HAS_PERMUTE 0
#define SIMD_HAS_MINMAX_I32 0
#define SIMD_HAS_SAT_U16 0

typedef __m128 VF;
typedef __m128i VI;

ALWAYS_INLINE VF vf_load(const float *p) { return _mm_loadu_ps(p); }
ALWAYS_INLINE void vf_store(float *p, VF v) { _mm_storeu_ps(p, v); }
ALWAYS_INLINE void vf_stream(float *p, VF v) { _mm_stream_ps(p, v); }
ALWAYS_INLINE VF vf_set1(float x) { return _mm_set1_ps(x); }
ALWAYS_INLINE VF vf_mul(VF a, VF b) { return _mm_mul_ps(a, b); }
ALWAYS_INLINE VF vf_and(VF a, VF b) { return _mm_and_ps(a, b); }
ALWAYS_INLINE VF vf_select(VF mask, VF a, VF b)
{
    return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

ALWAYS_INLINE VF vf_add_first(VF sum, VF term)
{
#if COMPILER_GNU
    __asm__("addps %1, %0" : "+x"(sum) : "x"(term));
    return sum;
#else
    /* addps returns its first operand's NaN where both are NaN: where sum is NaN (always a
     * quiet one: every sum starts from a product), keep it */
    return vf_select(_mm_cmpunord_ps(sum, sum), sum, _mm_add_ps(sum, term));
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

ALWAYS_INLINE VF vf_twice_lo(VF v) { return _mm_unpacklo_ps(v, v); }
ALWAYS_INLINE VF vf_twice_hi(VF v) { return _mm_unpackhi_ps(v, v); }

/* 4 bytes into the low lanes, without reading past them */
ALWAYS_INLINE VI vi_load_32bits(const void *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm_cvtsi32_si128(v);
}
ALWAYS_INLINE VF vf_from_i8(const int8_t *p)
{
    VI v = vi_load_32bits(p);
    v = _mm_unpacklo_epi8(v, v);
    return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 24));
}
ALWAYS_INLINE VF vf_from_u8(const uint8_t *p)
{
    VI zero = _mm_setzero_si128();
    VI v = _mm_unpacklo_epi8(vi_load_32bits(p), zero);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, zero));
}
ALWAYS_INLINE VF vf_from_i16(const int16_t *p)
{
    VI v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(v, v), 16));
}
ALWAYS_INLINE VF vf_from_u16(const uint16_t *p)
{
    VI v = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, _mm_setzero_si128()));
}
ALWAYS_INLINE VF vf_from_i32(const int32_t *p)
{
    return _mm_cvtepi32_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* min(top, v) (a NaN stays NaN: minps returns its second operand then), truncated to int32
 * (a NaN, or a value below int32's range, gives INT32_MIN), then saturating packs */
ALWAYS_INLINE VI vf_truncate_below(VF top, const float *p)
{
    return _mm_cvttps_epi32(_mm_min_ps(top, _mm_loadu_ps(p)));
}
ALWAYS_INLINE void vf_store_sat_i8(int8_t *o, const float *acc, VF top)
{
    VI ab = _mm_packs_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 4));
    VI cd = _mm_packs_epi32(vf_truncate_below(top, acc + 8), vf_truncate_below(top, acc + 12));
    _mm_storeu_si128((__m128i *)(void *)o, _mm_packs_epi16(ab, cd));
}
ALWAYS_INLINE void vf_store_sat_u8(uint8_t *o, const float *acc, VF top)
{
    VI ab = _mm_packs_epi32(vf_truncate_below(top, acc), vf_truncate_below(top, acc + 4));
    VI cd = _mm_packs_epi32(vf_truncate_below(top, acc + 8), vf_truncate_below(top, acc + 12));
    _mm_storeu_si128((__m128i *)(void *)o, _mm_packus_epi16(ab, cd));
}
ALWAYS_INLINE void vf_store_sat_i16(int16_t *o, const float *acc, VF top)
{
    _mm_storeu_si128((__m128i *)(void *)o, _mm_packs_epi32(vf_truncate_below(top, acc),
                                                           vf_truncate_below(top, acc + 4)));
}

ALWAYS_INLINE VI vi_load(const void *p) { return _mm_loadu_si128((const __m128i *)p); }
ALWAYS_INLINE VI vi_set1(int32_t x) { return _mm_set1_epi32(x); }
ALWAYS_INLINE VI vi_and(VI a, VI b) { return _mm_and_si128(a, b); }
ALWAYS_INLINE VI vi_or(VI a, VI b) { return _mm_or_si128(a, b); }
ALWAYS_INLINE VI vi_andnot(VI a, VI b) { return _mm_andnot_si128(a, b); }
ALWAYS_INLINE VI vi_sub(VI a, VI b) { return _mm_sub_epi32(a, b); }
ALWAYS_INLINE VI vi_cmpgt(VI a, VI b) { return _mm_cmpgt_epi32(a, b); }
ALWAYS_INLINE VI vi_cmplt(VI a, VI b) { return _mm_cmplt_epi32(a, b); }
ALWAYS_INLINE VI vi_cmpeq(VI a, VI b) { return _mm_cmpeq_epi32(a, b); }
ALWAYS_INLINE int vi_any(VI v) { return _mm_movemask_epi8(v) != 0; }

#endif
