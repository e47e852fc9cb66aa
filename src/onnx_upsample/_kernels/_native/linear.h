/* The linear kernel (linear.c): the blend of each output element's corners.
 *
 * The output is `rows` x (`row_len` * `block`) elements, laid out as for the nearest kernel
 * (nearest.h); a call may fill only some rows and some row positions. Each output row blends
 * the 2**n input rows of its outer corners (n interpolated outer axes), each gathered at the
 * row's taps; a blended block (channels last, interpolated at a short axis) has two taps of
 * its own per element. A work item is made in three steps, each a unit: the taps of its
 * segment of the row axis (linear_taps.h), the corner rows (corner_cache.h) and the blend
 * (linear_blend.h), in a worker's scratch laid out by linear_scratch.h.
 */
#ifndef ONNX_UPSAMPLE_LINEAR_H
#define ONNX_UPSAMPLE_LINEAR_H

#include <stdint.h>

#include "linear_job.h"

/* One pool item (pool.h) of a LinearJob. */
int linear_item(void *job, int64_t item, int worker);

#endif
