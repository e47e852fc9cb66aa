/* CPU features the kernels choose between (cpu.c). */
#ifndef ONNX_UPSAMPLE_CPU_H
#define ONNX_UPSAMPLE_CPU_H

/* 1 when this CPU runs AVX2 instructions, else 0 (always 0 off x86). */
int cpu_has_avx2(void);

#endif
