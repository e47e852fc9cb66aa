/* The element types of the linear kernel, one line each: the one list that says how an
 * element code is stored, which type it accumulates in and which code its results are
 * written as. Everything indexed by an element code is made from it, by name (the codes, the
 * table of their properties, the names the extension exports, the loops' tables in
 * linear_io.inc), so no table depends on the order of another.
 *
 * Columns: the code's name (T_<name>, here and in Python, where each element type's
 * `kernel` in _spec/dtypes.py names its code); the C type of one stored element (T_HALF: the
 * 16-bit pattern of a float16 or bfloat16, read through the job's float32 table); the type it
 * accumulates in (docs/semantics.md: float32 for float16, bfloat16, float32, int8, uint8,
 * int16, uint16 and int32; float64 for float64, int64, uint32 and uint64); and the code its
 * results are written as (16-bit floats: float32, which the caller rounds).
 * tests/test_native_constants.py holds this list and _spec/dtypes.py to the same
 * accumulators, sizes and results, name by name.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_TYPES_H
#define ONNX_UPSAMPLE_LINEAR_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define LINEAR_TYPES(X)                   \
    X(INT8,    int8_t,   float,  INT8)    \
    X(UINT8,   uint8_t,  float,  UINT8)   \
    X(INT16,   int16_t,  float,  INT16)   \
    X(UINT16,  uint16_t, float,  UINT16)  \
    X(INT32,   int32_t,  float,  INT32)   \
    X(FLOAT32, float,    float,  FLOAT32) \
    X(HALF,    uint16_t, float,  FLOAT32) \
    X(INT64,   int64_t,  double, INT64)   \
    X(UINT64,  uint64_t, double, UINT64)  \
    X(UINT32,  uint32_t, double, UINT32)  \
    X(FLOAT64, double,   double, FLOAT64)

#define LINEAR_TYPE_CODE(name, stored, acc, out) T_##name,
enum { LINEAR_TYPES(LINEAR_TYPE_CODE) T_COUNT };
#undef LINEAR_TYPE_CODE

/* Each code's types by its name, for the loops instantiated per code: stored_INT8 (int8_t),
 * acc_INT8 (float)... */
#define LINEAR_TYPE_NAMES(name, stored, acc, out) \
    typedef stored stored_##name;                 \
    typedef acc acc_##name;
LINEAR_TYPES(LINEAR_TYPE_NAMES)
#undef LINEAR_TYPE_NAMES

typedef struct {
    const char *name;         /* the code's name, without T_ */
    size_t bytes;             /* one stored element */
    size_t acc_bytes;         /* its accumulator: sizeof(float) or sizeof(double) */
    int out;                  /* the code its results are written as */
} LinearType;

/* Indexed by code (linear_types.c). */
extern const LinearType linear_types[T_COUNT];

#endif
