#include "backends/backend.h"

#include <stdexcept>
#include <string>

#include "backends/composite/composite_kernels.h"

namespace nl {

Backend::Backend() : composite_(std::make_unique<CompositeKernels>(*this)) {}
Backend::~Backend() = default;

void check_attention_args(const Desc& scores, const AttentionKernelOpts& o, const char* kernel) {
  if (o.batch < 0 || o.heads < 0 || o.tq < 0 || o.tk < 0 || !(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument(std::string(kernel) + ": bad options (dropout " + std::to_string(o.dropout) +
                                "); sizes must be >= 0 and dropout in [0, 1)");
  if (!is_floating(scores.dtype) || !scores.contiguous() || scores.numel() != o.batch * o.heads * o.tq * o.tk)
    throw std::invalid_argument(std::string(kernel) + ": scores must be contiguous float with batch*heads*tq*tk = " +
                                std::to_string(o.batch * o.heads * o.tq * o.tk) + " elements");
}

}  // namespace nl
