// The Hessian measure of a trained LN-Net; definition and averaging in ln_net_hessian.h.
#include "nn/theory/ln_net_hessian.h"

#include <stdexcept>

#include "autograd/tape.h"
#include "nn/norm/factory.h"
#include "nn/theory/ln_hessian.h"

namespace nl::lntheory {
namespace {
// G of the network's norm (1 for layernorm), 0 for "none"; throws for a norm without a closed form.
int64_t closed_form_groups(const LnNetConfig& c) {
  const nl::NormDescriptor& d = nl::norm_descriptor(c.norm);
  if (d.family && d.family->identity) return 0;
  if (d.grouped_ln)
    return c.norm_opts.is_object() && c.norm_opts.contains("groups") ? c.norm_opts.at("groups").get<int64_t>() : 1;
  throw std::invalid_argument("ln_net_hessian: the closed form of H covers --norm none and the norms that are "
                              "LayerNorm per feature group (layernorm, lng, groupnorm), not '" + c.norm + "'");
}

std::vector<double> gain_of(const Module& norm) {
  for (const auto& [name, p] : norm.named_parameters())
    if (name == "weight") return p.data().to_vector<double>();
  return {};  // no affine: gain 1
}
}  // namespace

LnNetHessian ln_net_hessian(LnNet& net, const Tensor& images) {
  const LnNetConfig& c = net.config();
  const int64_t groups = closed_form_groups(c);
  if (images.dim() < 1 || images.size(0) < 1)
    throw std::invalid_argument("ln_net_hessian: the batch is empty; pass at least one sample [B, ...]");
  LnNetHessian out;
  out.samples = images.size(0);
  out.per_layer.assign(net.norms().size(), 0.0);
  if (groups == 0 || net.norms().empty()) return out;  // a linear map: H = 0
  const double eps = c.norm_opts.is_object() && c.norm_opts.contains("eps") ? c.norm_opts.at("eps").get<double>() : 1e-5;
  std::vector<Tensor> inputs(net.norms().size());
  std::vector<int> handles;
  for (size_t l = 0; l < net.norms().size(); ++l)
    handles.push_back(net.norms()[l]->register_forward_hook(
        [&inputs, l](Module&, const std::vector<Variable>& in, const Variable&) { inputs[l] = in.at(0).data(); }));
  const bool was_training = net.is_training();
  net.eval();
  {
    NoGradGuard ng;
    net(Variable(images));
  }
  net.train(was_training);
  for (size_t l = 0; l < net.norms().size(); ++l) net.norms()[l]->remove_forward_hook(handles[l]);
  for (size_t l = 0; l < inputs.size(); ++l) {
    const std::vector<double> gain = gain_of(*net.norms()[l]);
    const std::vector<double> h = inputs[l].to_vector<double>();
    const int64_t d = inputs[l].size(1);
    for (int64_t b = 0; b < out.samples; ++b) {
      const std::vector<double> row(h.begin() + b * d, h.begin() + (b + 1) * d);
      out.per_layer[l] += lng_hessian_closed(row, groups, eps, gain) / (double)out.samples;
    }
    out.total += out.per_layer[l];
  }
  return out;
}

}  // namespace nl::lntheory
