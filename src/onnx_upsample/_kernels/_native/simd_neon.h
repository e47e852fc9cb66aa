/* SIMD backend, aarch64: NEON (Advanced SIMD), which every aarch64 CPU runs (see simd.h for
 * the operations): 4 float32 lanes. No streaming stores (SIMD_HAS_STREAM 0: the streamed
 * rows are written with ordinary stores, the same bytes).
 *
 * The float operations are the x86 backends' lane by lane: products and sums are separate
 * IEEE operations (never fused: compiler.h turns contraction off, and vf_add_first is one
 * instruction), where both operands of an add are quiet NaNs the first one's is the result
 * (as on x86), and conversions round as C does. A NaN that an operation creates (0 * inf,
 * inf - inf) is positive here and negative on x86: the one difference of the platforms'
 * arithmetic, which the tests take from the machine they run on.
 */
#ifndef ONNX_UPSAMPLE_SIMD_NEON_H
#define ONNX_UPSAMPLE_SIMD_NEON_H

#include <stdint.h>
#include <string.h>

#include <arm_neon.h>

#include "compiler.h"

#define SIMD_NAME "neon"
#define SIMD_LANES 4
#define SIMD_HAS_VB16 1
#define SIMD_HAS_VB32 0
#define SIMD_HAS_PERMUTE 0
#define SIMD_HAS_MINMAX_I32 1
#define SIMD_HAS_SAT_U16 1
#define SIMD_HAS_STREAM 0

typedef float32x4_t VF;
typedef int32x4_t VI;
typedef uint8x16_t VB16;

ALWAYS_INLINE VF vf_load(const float *p) { return vld1q_f32(p); }
ALWAYS_INLINE void vf_store(float *p, VF v) { vst1q_f32(p, v); }
ALWAYS_INLINE void vf_stream(float *p, VF v) { vst1q_f32(p, v); }
ALWAYS_INLINE VF vf_set1(float x) { return vdupq_n_f32(x); }
ALWAYS_INLINE VF vf_mul(VF a, VF b) { return vmulq_f32(a, b); }
ALWAYS_INLINE VF vf_and(VF a, VF b)
{
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
ALWAYS_INLINE VF vf_select(VF mask, VF a, VF b)
{
    return vbslq_f32(vreinterpretq_u32_f32(mask), a, b);
}

ALWAYS_INLINE VF vf_add_first(VF sum, VF term)
{
#if COMPILER_GNU
    VF r;
    __asm__("fadd %0.4s, %1.4s, %2.4s" : "=w"(r) : "w"(sum), "w"(term));
    return r;
#else
    /* fadd returns its first operand's NaN where both are quiet NaNs: where sum is NaN
     * (always a quiet one: every sum starts from a product), keep it */
    return vbslq_f32(vmvnq_u32(vceqq_f32(sum, sum)), sum, vaddq_f32(sum, term));
#endif
}

ALWAYS_INLINE void vf_keep(VF *v)
{
#if COMPILER_GNU
    __asm__("" : "+w"(*v));
#else
    (void)v;
#endif
}

ALWAYS_INLINE VF vf_twice_lo(VF v) { return vzip1q_f32(v, v); }
ALWAYS_INLINE VF vf_twice_hi(VF v) { return vzip2q_f32(v, v); }

/* 4 bytes into the low lanes, without reading past them */
ALWAYS_INLINE uint8x8_t vb8_load_32bits(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return vreinterpret_u8_u32(vdup_n_u32(v));
}
ALWAYS_INLINE VF vf_from_i8(const int8_t *p)
{
    int16x8_t h = vmovl_s8(vreinterpret_s8_u8(vb8_load_32bits(p)));
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(h)));
}
ALWAYS_INLINE VF vf_from_u8(const uint8_t *p)
{
    uint16x8_t h = vmovl_u8(vb8_load_32bits(p));
    return vcvtq_f32_u32(vmovl_u16(vget_low_u16(h)));
}
ALWAYS_INLINE VF vf_from_i16(const int16_t *p) { return vcvtq_f32_s32(vmovl_s16(vld1_s16(p))); }
ALWAYS_INLINE VF vf_from_u16(const uint16_t *p) { return vcvtq_f32_u32(vmovl_u16(vld1_u16(p))); }
ALWAYS_INLINE VF vf_from_i32(const int32_t *p) { return vcvtq_f32_s32(vld1q_s32(p)); }

/* min(top, v), NaN to `low` (maxnm returns the number where one operand is NaN), then
 * truncated: the value is in the type's range, so narrowing keeps it */
ALWAYS_INLINE int32x4_t vf_truncate_within(VF top, VF low, const float *p)
{
    return vcvtq_s32_f32(vmaxnmq_f32(vminq_f32(top, vld1q_f32(p)), low));
}
ALWAYS_INLINE int16x8_t vf_narrow_8(VF top, VF low, const float *p)
{
    return vcombine_s16(vmovn_s32(vf_truncate_within(top, low, p)),
                        vmovn_s32(vf_truncate_within(top, low, p + 4)));
}
ALWAYS_INLINE void vf_store_sat_i8(int8_t *o, const float *acc, VF top)
{
    const VF low = vdupq_n_f32((float)INT8_MIN);
    vst1q_s8(o, vcombine_s8(vmovn_s16(vf_narrow_8(top, low, acc)),
                            vmovn_s16(vf_narrow_8(top, low, acc + 8))));
}
ALWAYS_INLINE void vf_store_sat_u8(uint8_t *o, const float *acc, VF top)
{
    const VF low = vdupq_n_f32(0.0f);
    int8x16_t bytes = vcombine_s8(vmovn_s16(vf_narrow_8(top, low, acc)),
                                  vmovn_s16(vf_narrow_8(top, low, acc + 8)));
    vst1q_u8(o, vreinterpretq_u8_s8(bytes));
}
ALWAYS_INLINE void vf_store_sat_i16(int16_t *o, const float *acc, VF top)
{
    vst1q_s16(o, vf_narrow_8(top, vdupq_n_f32((float)INT16_MIN), acc));
}
ALWAYS_INLINE void vf_store_sat_u16(uint16_t *o, const float *acc, VF top)
{
    vst1q_u16(o, vreinterpretq_u16_s16(vf_narrow_8(top, vdupq_n_f32(0.0f), acc)));
}

ALWAYS_INLINE VI vi_load(const void *p) { return vld1q_s32((const int32_t *)p); }
ALWAYS_INLINE VI vi_set1(int32_t x) { return vdupq_n_s32(x); }
ALWAYS_INLINE VI vi_and(VI a, VI b) { return vandq_s32(a, b); }
ALWAYS_INLINE VI vi_or(VI a, VI b) { return vorrq_s32(a, b); }
ALWAYS_INLINE VI vi_andnot(VI a, VI b) { return vbicq_s32(b, a); }
ALWAYS_INLINE VI vi_sub(VI a, VI b) { return vsubq_s32(a, b); }
ALWAYS_INLINE VI vi_cmpgt(VI a, VI b) { return vreinterpretq_s32_u32(vcgtq_s32(a, b)); }
ALWAYS_INLINE VI vi_cmplt(VI a, VI b) { return vreinterpretq_s32_u32(vcltq_s32(a, b)); }
ALWAYS_INLINE VI vi_cmpeq(VI a, VI b) { return vreinterpretq_s32_u32(vceqq_s32(a, b)); }
ALWAYS_INLINE int vi_any(VI v) { return vmaxvq_u32(vreinterpretq_u32_s32(v)) != 0; }
ALWAYS_INLINE VI vi_max(VI a, VI b) { return vmaxq_s32(a, b); }
ALWAYS_INLINE VI vi_min(VI a, VI b) { return vminq_s32(a, b); }
ALWAYS_INLINE VI vi_min_u(VI a, VI b)
{
    return vreinterpretq_s32_u32(vminq_u32(vreinterpretq_u32_s32(a), vreinterpretq_u32_s32(b)));
}

ALWAYS_INLINE VB16 vb16_load(const void *p) { return vld1q_u8((const uint8_t *)p); }
ALWAYS_INLINE void vb16_store(void *p, VB16 v) { vst1q_u8((uint8_t *)p, v); }
ALWAYS_INLINE VB16 vb16_load_half(const void *p)
{
    return vcombine_u8(vld1_u8((const uint8_t *)p), vdup_n_u8(0));
}

ALWAYS_INLINE VB16 vb16_twice_lo_8(VB16 v) { return vzip1q_u8(v, v); }
ALWAYS_INLINE VB16 vb16_twice_hi_8(VB16 v) { return vzip2q_u8(v, v); }
ALWAYS_INLINE VB16 vb16_twice_lo_16(VB16 v)
{
    uint16x8_t w = vreinterpretq_u16_u8(v);
    return vreinterpretq_u8_u16(vzip1q_u16(w, w));
}
ALWAYS_INLINE VB16 vb16_twice_hi_16(VB16 v)
{
    uint16x8_t w = vreinterpretq_u16_u8(v);
    return vreinterpretq_u8_u16(vzip2q_u16(w, w));
}
ALWAYS_INLINE VB16 vb16_twice_lo_32(VB16 v)
{
    uint32x4_t w = vreinterpretq_u32_u8(v);
    return vreinterpretq_u8_u32(vzip1q_u32(w, w));
}
ALWAYS_INLINE VB16 vb16_twice_hi_32(VB16 v)
{
    uint32x4_t w = vreinterpretq_u32_u8(v);
    return vreinterpretq_u8_u32(vzip2q_u32(w, w));
}
ALWAYS_INLINE VB16 vb16_twice_lo_64(VB16 v)
{
    uint64x2_t w = vreinterpretq_u64_u8(v);
    return vreinterpretq_u8_u64(vzip1q_u64(w, w));
}
ALWAYS_INLINE VB16 vb16_twice_hi_64(VB16 v)
{
    uint64x2_t w = vreinterpretq_u64_u8(v);
    return vreinterpretq_u8_u64(vzip2q_u64(w, w));
}

#endif
