/* Streaming (non-temporal) stores, for outputs much larger than the caches.
 *
 * An ordinary store first reads the cache line it writes (read for ownership): writing an
 * output that does not fit in the caches then moves every byte twice. A non-temporal store
 * writes whole lines straight to memory, so writing the output costs what `memset` costs
 * (the "write floor" of the benchmarks). The bytes written are the same; only the cache
 * traffic differs. Where the SIMD backend has no streaming stores (SIMD_HAS_STREAM 0), a
 * streaming copy is a plain memcpy.
 *
 * A unit of inline functions, no .c: each is compiled into the loops of the instruction set
 * that calls it (a header of the SIMD layer's operations, which a unit compiled for AVX2
 * takes in their AVX2 encoding).
 */
#ifndef ONNX_UPSAMPLE_STREAM_H
#define ONNX_UPSAMPLE_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"
#include "simd.h"

/* Bytes a kernel assembles in a small buffer before streaming them out. */
#define STREAM_BUFFER_BYTES 16384

/* Copy n bytes (less than a cache line, a whole number of 4-byte words, to a word-aligned
 * dst) that share their line with other writes, with streaming stores: 16 bytes at a time
 * where dst allows, whole words beside them. Rows written one after the other then fill the
 * line between them in the write-combining buffer. An ordinary store there would first read
 * the line from memory and hold back the streamed lines behind it: a volume's rows took
 * twice as long or more. No call to memcpy: a call here would make the vector loops around
 * it keep their registers on the stack. */
static inline void stream_words(char *dst, const char *src, size_t n)
{
#if SIMD_HAS_STREAM
    size_t i = 0;
    for (; i + 4 <= n && ((uintptr_t)(dst + i) & 15); i += 4)
        stream_u32(dst + i, src + i);
    for (; i + 16 <= n; i += 16)
        stream_vb16(dst + i, vb16_load(src + i));
    for (; i + 4 <= n; i += 4)
        stream_u32(dst + i, src + i);
#else
    memcpy(dst, src, n);
#endif
}

/* Up to 3 bytes with ordinary stores, at most 2 and 1 at a time (no call to memcpy). */
static inline void copy_few(char *dst, const char *src, size_t n)
{
    if (n & 2) {
        memcpy(dst, src, 2);
        dst += 2;
        src += 2;
    }
    if (n & 1)
        *dst = *src;
}

/* As stream_words, for any n bytes less than a cache line: the bytes beside the whole words
 * (elements of 1 or 2 bytes) with ordinary stores. */
static inline void stream_part(char *dst, const char *src, size_t n)
{
    size_t lead = (4 - ((uintptr_t)dst & 3)) & 3;
    if (lead >= n) {
        copy_few(dst, src, n);
        return;
    }
    copy_few(dst, src, lead);
    const size_t words = (n - lead) & ~(size_t)3;
    stream_words(dst + lead, src + lead, words);
    copy_few(dst + lead + words, src + lead + words, n - lead - words);
}

/* Copy n bytes to dst with streaming stores: whole cache lines a line at a time, the
 * partial lines at either end as stream_part does. */
static inline void stream_copy(char *dst, const char *src, size_t n)
{
#if SIMD_HAS_STREAM
    const size_t line = CACHE_LINE_BYTES;
    size_t head = (line - ((uintptr_t)dst & (line - 1))) & (line - 1);
    if (head > n)
        head = n;
    stream_part(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    size_t body = n & ~(line - 1);
    for (size_t i = 0; i < body; i += line) {
        VB16 a = vb16_load(src + i), b = vb16_load(src + i + 16);
        VB16 c = vb16_load(src + i + 32), d = vb16_load(src + i + 48);
        stream_vb16(dst + i, a);
        stream_vb16(dst + i + 16, b);
        stream_vb16(dst + i + 32, c);
        stream_vb16(dst + i + 48, d);
    }
    stream_part(dst + body, src + body, n - body);
#else
    memcpy(dst, src, n);
#endif
}

/* Streaming stores are weakly ordered: make them visible before a work item is reported
 * done (the pool's atomics order ordinary stores only). */
static inline void stream_done(void)
{
#if SIMD_HAS_STREAM
    stream_fence();
#endif
}

#endif
