#pragma once
// The hook point for synchronised batch statistics (PyTorch's SyncBatchNorm): when a data-parallel
// trainer installs a cross-replica sum (--sync-batch-stats), the batch-statistic norms (batchnorm,
// powernorm-v, powernorm) pool their per-channel sums and kept-row counts over every replica in training
// forwards, and the backward of those sums adds the matching gradient sums over the replicas, so N
// replicas normalise exactly as one process would on the concatenated batch. nn/ knows nothing of how
// the sum is done (src/distributed/ installs it). Eval forwards never synchronise.
// PowerNorm's approximate backward (autograd/functions/power_norm.cpp) keeps its ema_gz statistic local.
#include <cstdint>
#include <functional>

#include "autograd/variable.h"

namespace nl {

/// Sums `n` doubles in place over all replicas; every replica calls it in the same order.
using BatchStatsAllReduce = std::function<void(double* data, int64_t n)>;

/// Installs (or, with an empty function, removes) the cross-replica sum for this process.
void set_batch_stats_all_reduce(BatchStatsAllReduce fn);

/// True while a cross-replica sum is installed.
bool batch_stats_synced();

/// `count` summed over the replicas (count itself when not synced).
int64_t synced_count(int64_t count);

/// x summed over the replicas, differentiably: the backward sums the incoming gradients over the
/// replicas as well (d(sum_r L_r)/dx_r = sum_r' dL_r'/dS). Identity when not synced. The sum runs in
/// float64 and is converted back to x's dtype.
Variable synced_sum(const Variable& x);

}  // namespace nl
