#include "nn/transformer/state.h"

#include "autograd/functions.h"

namespace nl {

EncoderOut EncoderOut::index_select(const Tensor& order) const {
  return {nl::index_select(out, 0, order), nl::index_select(padding_mask, 0, order)};
}

void IncrementalState::reorder(const Tensor& order) {
  for (auto& e : entries) {
    if (e.k.defined()) e.k = index_select(e.k, 0, order);
    if (e.v.defined()) e.v = index_select(e.v, 0, order);
  }
}

}  // namespace nl
