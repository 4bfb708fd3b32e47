// Padding masks in every Transformer norm slot (Shen et al. 2020, Sec. 3 "BN with padding masks"):
// pads change no statistic, no running buffer and no non-pad output of an encoder layer (pre- and
// post-norm); float64 gradchecks of encoder layers with the exact-gradient batch-statistic norms and
// padding; a sequence alone and inside a padded batch give the same eval output; the encoder/decoder
// norm defaults (PN in the encoder only, as the released code), the decoder batch-statistic error, the
// options the model wires (layer_scale_groups = n_heads, final-norm warmup 1000); a checkpoint round trip
// that restores every buffer.
#include <filesystem>
#include <unistd.h>

#include "nn/norm/batch_norm.h"
#include "nn/norm/power_norm.h"
#include "optim/checkpoint.h"
#include "transformer_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
const std::vector<std::string> kBatchNorms{"batchnorm", "powernorm-v", "powernorm"};

// Options that make powernorm leave its warm-up after one step, so that eval and later steps use the
// running statistics, and batchnorm's released reading once.
TransformerConfig batch_config(bool pre_norm, const std::string& norm) {
  TransformerConfig c = tiny_config(pre_norm, norm);
  if (norm == "powernorm") c.norm_options = {{"warmup_iters", 1}};
  return c;
}

// Buffers of every module, by name.
StateDict buffers_of(const Module& m) {
  StateDict out;
  const StateDict sd = m.state_dict();
  for (const auto& [n, t] : sd)
    if (n.find("running_") != std::string::npos || n.find("iters") != std::string::npos ||
        n.find("ema_gz") != std::string::npos || n.find("num_batches") != std::string::npos)
      out[n] = t;
  return out;
}
}  // namespace

TEST_CASE("transformer norm slots: pads change no statistic and no non-pad output of an encoder layer",
          "[transformer][masked_norm]") {
  for (bool pre : {true, false})
    for (const auto& norm : kBatchNorms) {
      INFO((pre ? "pre" : "post") << "-norm, " << norm);
      const TransformerConfig c = batch_config(pre, norm);
      manual_seed(31);
      TransformerEncoderLayer a(c);
      a.to(DType::Float64);
      TransformerEncoderLayer b(c);
      b.to(DType::Float64);
      b.load_state_dict(a.state_dict());
      REQUIRE(uses_batch_statistics(*a.self_attn_layer_norm));
      REQUIRE(uses_batch_statistics(*a.final_layer_norm));
      // Row 0 has two pads at the end, row 1 none.
      const Tensor pad = tokens({{0, 0, 0, 1, 1}, {0, 0, 0, 0, 0}});
      Tensor x = Tensor::randn({2, 5, 8}, 0, 1, DType::Float64);
      Tensor x2 = x.clone();
      x2.select(0, 0).slice(0, 3, 5).copy_(Tensor::randn({2, 8}, 50.0, 30.0, DType::Float64));
      for (int step = 0; step < 3; ++step) {  // running statistics evolve the same over several steps
        Variable ya = a(Variable(x), pad), yb = b(Variable(x2), pad);
        CHECK(max_abs_diff(ya.data().select(0, 0).slice(0, 0, 3), yb.data().select(0, 0).slice(0, 0, 3)) < 1e-12);
        CHECK(max_abs_diff(ya.data().select(0, 1), yb.data().select(0, 1)) < 1e-12);
        const StateDict ba = buffers_of(a), bb = buffers_of(b);
        REQUIRE(ba.size() >= 2);
        for (const auto& [n, t] : ba) {
          INFO(n);
          CHECK(max_abs_diff(t.to(DType::Float64), bb.at(n).to(DType::Float64)) < 1e-12);
        }
      }
      // The test can fail: without the mask the pad values reach the running statistics.
      TransformerEncoderLayer u(c), v(c);
      u.to(DType::Float64);
      v.to(DType::Float64);
      u.load_state_dict(a.state_dict());
      v.load_state_dict(a.state_dict());
      const Tensor none = tokens({{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}});
      u(Variable(x), none);
      v(Variable(x2), none);
      double most = 0;
      for (const auto& [n, t] : buffers_of(u))
        most = std::max(most, max_abs_diff(t.to(DType::Float64), buffers_of(v).at(n).to(DType::Float64)));
      CHECK(most > 1e-3);
    }
}

TEST_CASE("transformer norm slots: gradcheck of encoder layers with batch statistics and padding (float64)",
          "[transformer][masked_norm][gradcheck]") {
  for (bool pre : {true, false})
    for (const char* norm : {"batchnorm", "powernorm-v"}) {  // exact gradients (PN's backward is approximate)
      INFO((pre ? "pre" : "post") << "-norm, " << norm);
      manual_seed(32);
      auto l = std::make_shared<TransformerEncoderLayer>(tiny_config(pre, norm));
      l->to(DType::Float64);
      const Tensor pad = tokens({{0, 0, 1, 1}, {0, 0, 0, 1}});
      Variable x = leaf({2, 4, 8});
      std::vector<Variable> in{x};
      for (auto& p : l->parameters()) in.push_back(p);
      NL_GRADCHECK([&](const std::vector<Variable>&) { return (*l)(x, pad); }, in);
    }
}

TEST_CASE("transformer norm slots: in eval a sequence alone and inside a padded batch give the same output",
          "[transformer][masked_norm]") {
  for (const auto& norm : kBatchNorms) {
    INFO(norm);
    manual_seed(33);
    TransformerModel m(batch_config(true, norm));
    REQUIRE(uses_batch_statistics(*m.encoder->layer_list[0]->self_attn_layer_norm));
    const Tensor src = tokens({{5, 6, 7, 2, 1, 1}, {8, 9, 4, 5, 6, 2}, {7, 2, 1, 1, 1, 1}});
    const Tensor prev = tokens({{2, 5, 6, 1}, {2, 7, 8, 9}, {2, 4, 1, 1}});
    for (int i = 0; i < 3; ++i) m.forward(src, prev);  // training steps move the running statistics
    m.eval();
    NoGradGuard ng;
    const Tensor batch = m.forward(src, prev).data();
    const Tensor alone = m.forward(tokens({{5, 6, 7, 2}}), tokens({{2, 5, 6}})).data();
    CHECK(max_abs_diff(batch.select(0, 0).slice(0, 0, 3), alone.select(0, 0)) < 1e-10);
    const Tensor enc_batch = m.encoder->forward(src).out.data();
    const Tensor enc_alone = m.encoder->forward(tokens({{7, 2}})).out.data();
    CHECK(max_abs_diff(enc_batch.select(0, 2).slice(0, 0, 2), enc_alone.select(0, 0)) < 1e-10);
  }
}

TEST_CASE("transformer norm slots: encoder and decoder norms, their defaults and the decoder error",
          "[transformer][masked_norm]") {
  TransformerConfig c = tiny_config(true, "powernorm", DType::Float32);
  CHECK(c.encoder_norm_name() == "powernorm");
  CHECK(c.decoder_norm_name() == "layernorm");  // PN in the encoder only, as the released code
  REQUIRE_NOTHROW(c.validate());
  {
    TransformerModel m(c);
    auto* pn = dynamic_cast<PowerNorm*>(m.encoder->layer_list[0]->final_layer_norm.get());
    REQUIRE(pn);
    CHECK(pn->config().layer_scale_groups == c.n_heads);  // NormSelect passes the head count
    CHECK(pn->config().warmup_iters == PowerNormConfig{}.warmup_iters);
    auto* fin = dynamic_cast<PowerNorm*>(m.encoder->layer_norm.get());
    REQUIRE(fin);
    CHECK(fin->config().warmup_iters == 1000);
    CHECK(m.decoder->layer_list[0]->self_attn_layer_norm->type_name() == "LayerNorm");
    CHECK(m.decoder->layer_norm->type_name() == "LayerNorm");
  }
  c.norm_options = {{"warmup_iters", 7}};
  {
    TransformerModel m(c);
    CHECK(dynamic_cast<PowerNorm&>(*m.encoder->layer_list[0]->self_attn_layer_norm).config().warmup_iters == 7);
    CHECK(dynamic_cast<PowerNorm&>(*m.encoder->layer_norm).config().warmup_iters == 1000);
  }
  // An explicit batch-statistic decoder norm needs the opt-in.
  c = tiny_config(true, "layernorm", DType::Float32);
  c.decoder_norm = "batchnorm";
  CHECK_THROWS_WITH(c.validate(), Contains("decoder norm 'batchnorm' pools statistics over the batch") &&
                                      Contains("--allow-decoder-batch-stats"));
  CHECK_THROWS_AS(TransformerModel(c), std::invalid_argument);
  c.allow_decoder_batch_stats = true;
  REQUIRE_NOTHROW(c.validate());
  TransformerModel d(c);
  CHECK(d.decoder->layer_list[0]->encoder_attn_layer_norm->type_name() == "BatchNorm");
  CHECK(d.encoder->layer_list[0]->final_layer_norm->type_name() == "LayerNorm");
  // Per-token norms keep one name for both stacks; options of --norm's that the other stack's norm does
  // not take stay with --norm's stack.
  c = tiny_config(true, "adanorm", DType::Float32);
  c.norm_options = {{"C", 2.0}};
  CHECK(c.decoder_norm_name() == "adanorm");
  c.encoder_norm = "rmsnorm";
  REQUIRE_NOTHROW(c.validate());
  CHECK(c.encoder_norm_opts() == nlohmann::json::object());
  c.encoder_norm_options = {{"C", 2.0}};  // explicit options are checked
  CHECK_THROWS_WITH(c.validate(), Contains("encoder norm") && Contains("unknown option 'C'"));
}

TEST_CASE("transformer norm slots: a checkpoint round trip restores every buffer", "[transformer][masked_norm]") {
  const auto path = std::filesystem::temp_directory_path() / ("normlab-slots-" + std::to_string(::getpid()) + ".safetensors");
  for (const auto& norm : kBatchNorms) {
    INFO(norm);
    manual_seed(34);
    TransformerConfig c = batch_config(true, norm);
    TransformerModel a(c);
    const Tensor src = tokens({{5, 6, 7, 2, 1}, {8, 9, 4, 5, 2}}), prev = tokens({{2, 5, 6, 1}, {2, 7, 8, 9}});
    for (int i = 0; i < 3; ++i) {
      Variable loss = sum(a.forward(src, prev));
      loss.backward();
    }
    const StateDict sa = a.state_dict(), bufs = buffers_of(a);
    REQUIRE(bufs.size() >= 3);  // one encoder layer's two norms and the final norm
    if (norm == "powernorm") {
      CHECK(bufs.count("encoder.layers.0.self_attn_layer_norm.iters"));
      CHECK(bufs.at("encoder.layers.0.self_attn_layer_norm.iters").item() == 3.0);
      CHECK(max_abs(bufs.at("encoder.layers.0.self_attn_layer_norm.ema_gz")) > 0);
    }
    if (norm == "batchnorm") CHECK(bufs.at("encoder.layer_norm.num_batches_tracked").item() == 3.0);
    save_checkpoint(path, TensorMap(sa.begin(), sa.end()));
    manual_seed(35);
    TransformerModel b(c);
    const Checkpoint ck = load_checkpoint(path);
    b.load_state_dict(StateDict(ck.tensors.begin(), ck.tensors.end()));
    const StateDict sb = b.state_dict();
    REQUIRE(sb.size() == sa.size());
    for (const auto& [n, t] : sa) {
      INFO(n);
      CHECK(t.dtype() == sb.at(n).dtype());
      CHECK(t.to_vector<double>() == sb.at(n).to_vector<double>());
    }
    // And the restored model continues identically.
    Variable la = sum(a.forward(src, prev)), lb = sum(b.forward(src, prev));
    CHECK(la.item() == lb.item());
  }
  std::filesystem::remove(path);
}
