/* SIMD backend, x86: what the SSE2 and AVX2 backends share (see simd.h): 16-byte moves and
 * streaming stores, in SSE2 instructions (the x86-64 baseline; compiled in an AVX2 unit, the
 * same operations take their AVX encodings). Included by simd_sse2.h and simd_avx2.h.
 */
#ifndef ONNX_UPSAMPLE_SIMD_X86_H
#define ONNX_UPSAMPLE_SIMD_X86_H

#include <stdint.h>
#include <string.h>

#include <emmintrin.h>

#include "compiler.h"

#define SIMD_HAS_VB16 1
#define SIMD_HAS_STREAM 1

typedef __m128i VB16;

ALWAYS_INLINE VB16 vb16_load(const void *p) { return _mm_loadu_si128((const __m128i *)p); }
ALWAYS_INLINE void vb16_store(void *p, VB16 v) { _mm_storeu_si128((__m128i *)p, v); }
ALWAYS_INLINE VB16 vb16_load_half(const void *p) { return _mm_loadl_epi64((const __m128i *)p); }

ALWAYS_INLINE VB16 vb16_twice_lo_8(VB16 v) { return _mm_unpacklo_epi8(v, v); }
ALWAYS_INLINE VB16 vb16_twice_hi_8(VB16 v) { return _mm_unpackhi_epi8(v, v); }
ALWAYS_INLINE VB16 vb16_twice_lo_16(VB16 v) { return _mm_unpacklo_epi16(v, v); }
ALWAYS_INLINE VB16 vb16_twice_hi_16(VB16 v) { return _mm_unpackhi_epi16(v, v); }
ALWAYS_INLINE VB16 vb16_twice_lo_32(VB16 v) { return _mm_unpacklo_epi32(v, v); }
ALWAYS_INLINE VB16 vb16_twice_hi_32(VB16 v) { return _mm_unpackhi_epi32(v, v); }
ALWAYS_INLINE VB16 vb16_twice_lo_64(VB16 v) { return _mm_unpacklo_epi64(v, v); }
ALWAYS_INLINE VB16 vb16_twice_hi_64(VB16 v) { return _mm_unpackhi_epi64(v, v); }

/* A 4-byte word from src to dst (4-byte aligned), bypassing the caches. */
ALWAYS_INLINE void stream_u32(char *dst, const char *src)
{
    int word;
    memcpy(&word, src, sizeof word);
    _mm_stream_si32((int *)(void *)dst, word);
}

/* 16 bytes from src to dst (16-byte aligned), bypassing the caches. */
ALWAYS_INLINE void stream_vb16(char *dst, VB16 v) { _mm_stream_si128((__m128i *)(void *)dst, v); }

ALWAYS_INLINE void stream_fence(void) { _mm_sfence(); }

#endif
