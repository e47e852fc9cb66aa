/* The SIMD layer: one set of vector operations, with a backend per instruction set, so that
 * the kernels' vector loops are written once. The raw intrinsics live in the backend files
 * alone:
 *   simd_sse2.h   x86 baseline (every x86-64 CPU): 4 float32 lanes
 *   simd_avx2.h   x86 AVX2, chosen at run time (cpu.h): 8 float32 lanes, 32-byte moves
 *   simd_x86.h    what both x86 backends share: 16-byte moves, streaming stores
 *   simd_neon.h   aarch64 NEON (every aarch64 CPU): 4 float32 lanes
 *   simd_scalar.h everything else: no vector loops (SIMD_LANES 0); the scalar C loops alone
 *
 * A translation unit has one backend: the AVX2 one where it defines SIMD_TARGET_AVX2 before
 * including this header (isa_avx2.c, inside its AVX2 compile region), else its target's
 * baseline; a build with ONNX_UPSAMPLE_NO_SIMD defined has the scalar one everywhere (the
 * portable build the tests compare with). Every backend defines the same names, and says
 * what it has:
 *   SIMD_NAME            its name, for the record
 *   SIMD_LANES           float32 lanes of VF (0: no float lanes, none of the operations below)
 *   SIMD_HAS_VB16        16-byte moves (VB16)
 *   SIMD_HAS_VB32        32-byte moves (VB32), lane permutes and byte shuffles
 *   SIMD_HAS_PERMUTE     vf_permute: any lane of a vector to any lane
 *   SIMD_HAS_MINMAX_I32  vi_max, vi_min (signed) and vi_min_u (unsigned) of 32-bit lanes
 *   SIMD_HAS_SAT_U16     vf_store_sat_u16
 *   SIMD_HAS_STREAM      streaming stores that bypass the caches (else ordinary stores)
 *
 * The float operations (VF, SIMD_LANES lanes of float32; VI, as many int32 lanes):
 *   vf_load, vf_store (unaligned), vf_stream (aligned to the vector; a streaming store where
 *     SIMD_HAS_STREAM), vf_set1, vf_mul (one IEEE product a lane), vf_and (of the bits),
 *   vf_select(mask, a, b): a where the mask's lane is all ones, else b,
 *   vf_add_first(sum, term): one IEEE sum a lane with `sum` the first operand, never swapped:
 *     where both are NaN the result is sum's NaN, the rule the scalar code spells out
 *     (first_nan_add in linear_sum.inc); a compiler may swap the operands of an add written
 *     in C, so each backend fixes the order (in assembly, or by a select),
 *   vf_keep(&v): no operation; the compiler keeps v in a register from here (a load folded
 *     into two operations would be made twice),
 *   vf_twice_lo(v), vf_twice_hi(v): each lane of v twice, in order: the first half's lanes,
 *     then the second half's,
 *   vf_from_i8, vf_from_u8, vf_from_i16, vf_from_u16, vf_from_i32: SIMD_LANES elements
 *     loaded and converted exactly (int32 rounded to nearest, as C converts),
 *   vf_permute(v, idx): lane i of the result is lane idx[i] of v (SIMD_HAS_PERMUTE),
 *   vf_store_sat_i8, vf_store_sat_u8 (4 * SIMD_LANES elements), vf_store_sat_i16,
 *     vf_store_sat_u16 (2 * SIMD_LANES elements): float32 values to the integer type, each
 *     min(top, v) truncated toward zero and saturated to the type's range, NaN to its
 *     minimum, as the scalar stores of linear_io.inc do when their bounds are the type's,
 *   vi_load, vi_set1, vi_and, vi_or, vi_andnot(a, b) (~a & b), vi_sub, vi_cmpgt, vi_cmplt,
 *     vi_cmpeq (all ones where true), vi_any (any bit set), and with SIMD_HAS_MINMAX_I32
 *     vi_max, vi_min, vi_min_u.
 * The byte moves (SIMD_HAS_VB16, SIMD_HAS_VB32), which compute nothing:
 *   vb16_load, vb16_store (unaligned), vb16_load_half (8 bytes, the rest zero),
 *   vb16_twice_lo_B, vb16_twice_hi_B (B = 8, 16, 32, 64 bits an element): each element twice,
 *     the first 16 bytes of the result and the second;
 *   vb32_load, vb32_store, vb32_twice_B(v, &first, &second), vb32_permute_u32(v, idx),
 *   vb32_from_halves(lo, hi), vb32_shuffle_bytes(v, pick) (within each 16-byte half).
 * The streaming stores (SIMD_HAS_STREAM): stream_u32 (a 4-byte word), stream_vb16 (16 bytes
 * to a 16-byte-aligned address), stream_fence (streamed stores are ordered before any
 * store that follows).
 *
 * Every float operation is one IEEE operation per lane, as the scalar code performs it: the
 * vector loops compute several outputs at once, each in its own order, never two parts of
 * one output's sum at once; so every backend gives the scalar loops' bits. Adding a backend
 * (AVX-512, RISC-V V, SVE) is one file defining these names, and its line below.
 */
#ifndef ONNX_UPSAMPLE_SIMD_H
#define ONNX_UPSAMPLE_SIMD_H

#if defined(ONNX_UPSAMPLE_NO_SIMD)
#include "simd_scalar.h" /* the portable build: scalar loops on every target */
#elif defined(SIMD_TARGET_AVX2)
#include "simd_avx2.h"
#elif defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include "simd_sse2.h"
#elif defined(__aarch64__) || defined(_M_ARM64)
#include "simd_neon.h"
#else
#include "simd_scalar.h"
#endif

#endif
