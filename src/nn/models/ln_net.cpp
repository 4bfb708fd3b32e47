#include "nn/models/ln_net.h"

#include <stdexcept>

#include "autograd/functions.h"
#include "nn/norm/factory.h"

namespace nl {

LnNet::LnNet(const LnNetConfig& cfg) : Module("LnNet"), cfg_(cfg) {
  if (cfg.in < 1 || cfg.width < 1 || cfg.classes < 1 || cfg.depth < 0)
    throw std::invalid_argument("LnNet: in, width and classes must be >= 1 and depth >= 0 (got in " +
                                std::to_string(cfg.in) + ", width " + std::to_string(cfg.width) + ", depth " +
                                std::to_string(cfg.depth) + ", classes " + std::to_string(cfg.classes) + ")");
  int64_t d = cfg.in;
  for (int64_t l = 0; l < cfg.depth; ++l) {
    fcs_.push_back(register_module("fc" + std::to_string(l), std::make_shared<Linear>(d, cfg.width)));
    norms_.push_back(register_module("norm" + std::to_string(l), make_norm(cfg.norm, cfg.width, cfg.norm_opts)));
    d = cfg.width;
  }
  out_ = register_module("out", std::make_shared<Linear>(d, cfg.classes));
}

Variable LnNet::forward(const Variable& x) {
  if (x.dim() < 1) throw std::invalid_argument("LnNet: input must be [B, ...], got a scalar");
  Variable h = x.dim() == 2 ? x : flatten(x, 1);
  if (h.size(1) != cfg_.in)
    throw std::invalid_argument("LnNet: the input has " + std::to_string(h.size(1)) + " features per sample (shape " +
                                shape_str(x.shape()) + ") but the network was built for " + std::to_string(cfg_.in));
  for (size_t l = 0; l < fcs_.size(); ++l) h = (*norms_[l])((*fcs_[l])(h));
  return (*out_)(h);
}

}  // namespace nl
