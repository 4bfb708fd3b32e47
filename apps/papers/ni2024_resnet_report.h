#pragma once
// Ni et al. 2024's "ResNet without ReLU on CIFAR-10" table (slides; ../shared/docs/ni-pn-details.md §5.2)
// from the experiment runner's records of task resnet-cifar (registered as resnet-cifar/<config>/<norm>/
// seed<N>, the runs of `normlab reproduce resnet-cifar`): our train and test accuracy of the
// best-validation weights per norm next to the slides' numbers, and the slides' order LN-G > GN > LN > BN
// > IN as claims judged over seeds (report/claims.h). What `normlab reproduce ni2024-resnet` writes and
// `normlab report` embeds (block ni2024/resnet).
#include <string>
#include <vector>

#include "engine/experiment.h"
#include "engine/task_cli.h"
#include "engine/task_reproduction.h"

namespace nlapp {

/// The five norms of the slides' table in the order it ranks them, best first: lng, groupnorm,
/// layernorm, batchnorm, instancenorm.
std::vector<std::string> ni2024_resnet_norms();

/// The table (markdown): a header paragraph (data, model, schedule, seeds, config by name), one row per
/// variant of `r` (train and test accuracy %, mean ± std over the finished seeds, the slides' two
/// numbers, diverged seeds, epochs run, minutes of training per run), then the claims section: every
/// adjacent pair of the slides' order among r.variants, on train and on test accuracy (Welch's t-test over
/// seeds, alpha 0.05; "inconclusive" with fewer than two seeds a side), or a sentence saying the order is not
/// judged when fewer than two of its norms are among r.variants.
std::string format_ni2024_resnet(const TaskInvocation& inv, const TaskReproduction& r,
                                 const std::vector<RunRecord>& records);

}  // namespace nlapp
