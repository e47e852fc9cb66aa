/* SIMD backend, none: targets with no vector backend (see simd.h). SIMD_LANES is 0, and the
 * kernels run their scalar C loops alone, which give the same bits as every vector backend.
 */
#ifndef ONNX_UPSAMPLE_SIMD_SCALAR_H
#define ONNX_UPSAMPLE_SIMD_SCALAR_H

#define SIMD_NAME "scalar"
#define SIMD_LANES 0
#define SIMD_HAS_VB16 0
#define SIMD_HAS_VB32 0
#define SIMD_HAS_PERMUTE 0
#define SIMD_HAS_MINMAX_I32 0
#define SIMD_HAS_SAT_U16 0
#define SIMD_HAS_STREAM 0

#endif
