// Encoder and decoder layers in pre- and post-norm with every norm of Xu et al. (layernorm_family_names()):
// float64 gradchecks. (Batch-statistic norms with padding: test_transformer_norm_slots.cpp.)
// Norms whose backward is the true gradient (none, layernorm, layernorm-simple) are checked against
// finite differences in every input and parameter. The detach family (detachnorm, detach-mean,
// detach-variance, adanorm) stops gradient through the norm's statistics on purpose, so finite
// differences apply only to the parameters whose gradient never crosses a norm's input (in pre-norm: fc1,
// fc2 and the last norm; in post-norm: the last norm's own parameters); for those norms every gradient is
// also checked to agree between the fused and composite implementations of norm and attention.
#include "transformer_test_util.h"

using namespace nl;
using namespace nltest;

namespace {
bool exact_gradient(const std::string& norm) {
  return norm == "none" || norm == "layernorm" || norm == "layernorm-simple";
}

// Names of the parameters whose gradient does not pass through any norm's input.
bool downstream_of_norms(const std::string& name, bool pre_norm) {
  const bool last_norm = name.rfind("final_layer_norm.", 0) == 0;
  if (!pre_norm) return last_norm;
  return last_norm || name.rfind("fc1.", 0) == 0 || name.rfind("fc2.", 0) == 0;
}

struct LayerCase {
  std::shared_ptr<Module> layer;
  std::function<Variable(const Variable& x, const Variable& enc)> run;
};

LayerCase make_layer(bool decoder, bool pre_norm, const std::string& norm, const std::string& impl) {
  TransformerConfig c = tiny_config(pre_norm, norm);
  c.attention_impl = impl;
  c.norm_options = {{"impl", impl}};
  if (norm == "adanorm") c.norm_options["C"] = 2.0;
  const Tensor enc_pad = tokens({{0, 0, 0, 1}, {0, 0, 0, 0}});
  const Tensor self_pad = tokens({{0, 0, 0}, {0, 0, 0}});
  if (decoder) {
    auto l = std::make_shared<TransformerDecoderLayer>(c);
    l->to(DType::Float64);
    return {l, [l, enc_pad, self_pad](const Variable& x, const Variable& e) {
              return (*l)(x, e, enc_pad, self_pad);
            }};
  }
  auto l = std::make_shared<TransformerEncoderLayer>(c);
  l->to(DType::Float64);
  const Tensor pad = tokens({{0, 0, 1}, {0, 0, 0}});
  return {l, [l, pad](const Variable& x, const Variable&) { return (*l)(x, pad); }};
}

// Non-trivial norm gains/biases (init is 1/0) so that their gradients are exercised.
void perturb_norm_params(Module& m) {
  for (auto& [n, p] : m.named_parameters())
    if (n.find("norm") != std::string::npos) {
      Tensor t = p.data();
      t.copy_(Tensor::randn(t.shape(), 1.0, 0.3, DType::Float64));
    }
}
}  // namespace

TEST_CASE("transformer layers: gradcheck in pre- and post-norm with every norm (float64)", "[transformer][gradcheck]") {
  for (bool decoder : {false, true})
    for (bool pre : {true, false})
      for (const auto& norm : layernorm_family_names()) {
        INFO((decoder ? "decoder" : "encoder") << " layer, " << (pre ? "pre" : "post") << "-norm, " << norm);
        manual_seed(21);
        LayerCase lc = make_layer(decoder, pre, norm, "fused");
        perturb_norm_params(*lc.layer);
        Variable x = leaf({2, 3, 8}), enc = leaf({2, 4, 8});
        std::vector<Variable> in;
        if (exact_gradient(norm)) {
          in = {x, enc};
          for (auto& p : lc.layer->parameters()) in.push_back(p);
        } else {
          for (auto& [n, p] : lc.layer->named_parameters())
            if (downstream_of_norms(n, pre)) in.push_back(p);
          if (in.empty()) continue;  // post-norm AdaNorm has no parameter outside the norms' reach
        }
        NL_GRADCHECK([&](const std::vector<Variable>&) { return lc.run(x, enc); }, in);
      }
}

TEST_CASE("transformer layers: detach-family gradients agree between fused and composite implementations",
          "[transformer][gradcheck]") {
  for (bool decoder : {false, true})
    for (bool pre : {true, false})
      for (const char* norm : {"detachnorm", "detach-mean", "detach-variance", "adanorm"}) {
        INFO((decoder ? "decoder" : "encoder") << " layer, " << (pre ? "pre" : "post") << "-norm, " << norm);
        manual_seed(22);
        LayerCase a = make_layer(decoder, pre, norm, "fused");
        LayerCase b = make_layer(decoder, pre, norm, "composite");
        perturb_norm_params(*a.layer);
        b.layer->load_state_dict(a.layer->state_dict());
        Tensor xs = Tensor::randn({2, 3, 8}, 0, 1, DType::Float64), es = Tensor::randn({2, 4, 8}, 0, 1, DType::Float64);
        Tensor g = Tensor::randn({2, 3, 8}, 0, 1, DType::Float64);
        Variable xa(xs.clone(), true), ea(es.clone(), true), xb(xs.clone(), true), eb(es.clone(), true);
        Variable ya = a.run(xa, ea), yb = b.run(xb, eb);
        CHECK(max_abs_diff(ya.data(), yb.data()) < 1e-10);
        ya.backward(g);
        yb.backward(g);
        CHECK(max_abs(xa.grad()) > 1e-3);
        CHECK(max_abs_diff(xa.grad(), xb.grad()) < 1e-9);
        if (decoder) CHECK(max_abs_diff(ea.grad(), eb.grad()) < 1e-9);
        auto pa = a.layer->named_parameters(), pb = b.layer->named_parameters();
        REQUIRE(pa.size() == pb.size());
        for (size_t i = 0; i < pa.size(); ++i) {
          INFO(pa[i].first);
          CHECK(max_abs_diff(pa[i].second.grad(), pb[i].second.grad()) < 1e-9);
        }
      }
}

TEST_CASE("transformer layers: fairseq parameter names and norm placement", "[transformer]") {
  TransformerConfig c = tiny_config(true, "adanorm", DType::Float32);
  TransformerDecoderLayer all(c);
  std::vector<std::string> names;
  for (auto& [n, m] : all.named_children()) names.push_back(n + ":" + m->type_name());
  CHECK(names == std::vector<std::string>{"self_attn:MultiheadAttention", "self_attn_layer_norm:AdaNorm",
                                          "encoder_attn:MultiheadAttention", "encoder_attn_layer_norm:AdaNorm",
                                          "fc1:Linear", "fc2:Linear", "final_layer_norm:AdaNorm"});
  c.norm_placement = "final";
  TransformerEncoderLayer final_only(c);
  CHECK(final_only.self_attn_layer_norm->type_name() == "LayerNorm");
  CHECK(final_only.final_layer_norm->type_name() == "LayerNorm");
  TransformerEncoder enc(c);
  REQUIRE(enc.layer_norm);
  CHECK(enc.layer_norm->type_name() == "AdaNorm");
}
