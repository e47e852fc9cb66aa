/* A linear work item's taps (linear_taps.h). */
#include "linear_taps.h"

#include <string.h>

#include "linear_scratch.h"
#include "linear_types.h"

/* The taps of row position j: the input positions (row taps) and their weights. */
static void row_taps(const LinearJob *job, int64_t j, int64_t positions[AXIS_TAPS],
                     float weights[AXIS_TAPS])
{
    if (job->row_blend) {
        rule_linear(&job->axes[job->n_outer], j, &positions[0], &positions[1], &weights[0],
                    &weights[1]);
    } else {
        positions[0] = positions[1] = j;
        weights[0] = weights[1] = 1.0f;
    }
}

/* The row and block taps of the segment's positions as flat per-element tables: tap
 * t = row tap * block taps + block tap. */
static void flat_taps(const LinearJob *job, const Segment *seg, float *weights)
{
    const int64_t block = job->block, j0 = seg->j0;
    /* an identity block's second tap is the sums' to read: its weights are 0 or the first's */
    const int block_taps = job->block_blend && !job->identity_step ? AXIS_TAPS : 1;
    const int row_taps_n = job->row_blend ? AXIS_TAPS : 1;
    for (int64_t j = j0; j < seg->j1; j++) {
        int64_t positions[AXIS_TAPS];
        float row_w[AXIS_TAPS];
        row_taps(job, j, positions, row_w);
        for (int tr = 0; tr < row_taps_n; tr++) {
            const int64_t start = positions[tr] * job->block_in;
            const float wr = row_w[tr];
            for (int tb = 0; tb < block_taps; tb++) {
                const int t = tr * block_taps + tb;
                int64_t *o = seg->off + (size_t)t * (size_t)seg->stride;
                float *w = weights + (size_t)t * (size_t)seg->stride;
                const int64_t *inner = tb ? job->blk_hi : job->blk_lo;
                const float *inner_w = tb ? job->blk_w_hi : job->blk_w_lo;
                for (int64_t c = 0; c < block; c++) {
                    const size_t f = (size_t)((j - j0) * block + c);
                    if (job->block_blend) {
                        o[f] = start + inner[c];
                        /* innermost axis first: the block's axis, then the row axis */
                        w[f] = job->row_blend ? inner_w[c] * wr : inner_w[c];
                    } else {
                        o[f] = start + c;
                        w[f] = wr;
                    }
                }
            }
        }
    }
}

void segment_taps(const LinearJob *job, const TapTables *tables, Segment *seg)
{
    const int64_t block = job->block, k = job->row_repeat;
    seg->width = (seg->j1 - seg->j0) * block;
    seg->stride = job->segment * block;
    seg->taps = taps_per_element(job);
    seg->off = tables->off;
    for (int t = 0; t < seg->taps; t++)
        seg->weights[t] = tables->weights + (size_t)t * (size_t)seg->stride;
    flat_taps(job, seg, tables->weights);
    seg->last = tables->last;
    const int64_t d = job->identity_step;
    if (d)
        for (int64_t f = 0; f < seg->width + LAST_MARK_PAD; f++)
            seg->last[f] = f < seg->width && f % block >= block - d ? ~0u : 0u;
    seg->repeat = k > 1 && job->row_blend && (!job->block_blend || d)
        && seg->j0 % k == 0 && (seg->j1 - seg->j0) % k == 0;
    /* with a repeat the high taps are the low ones k * block elements on, except the last
     * k * block */
    seg->tap_offset = (size_t)(seg->repeat ? k * block : seg->stride);
    seg->repeat_from = seg->repeat ? (size_t)(seg->j0 / k * job->block_in)
                                         * linear_types[job->src].bytes : 0;
    seg->repeat_n = seg->repeat ? (seg->j1 - seg->j0) / k : 0;
}

int64_t periodic_end(const Segment *seg, int64_t lanes)
{
    int64_t end = seg->width;
    for (int t = 0; t < seg->taps; t++) {
        int64_t f = lanes;
        for (; f < end; f++) {
            uint32_t now, before;
            memcpy(&now, &seg->weights[t][f], sizeof now);
            memcpy(&before, &seg->weights[t][f - lanes], sizeof before);
            if (now != before)
                break;
        }
        end = f < end ? f : end;
    }
    return end;
}
