#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

#include "cli_util.h"
#include "data_text/temp_dir.h"
#include "optim/average_checkpoints.h"

using namespace nl;
using Catch::Matchers::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// A tiny trainer-like checkpoint: model.w (float32), model.d (float64), model.n (int64), optimizer state.
fs::path write_ck(const fs::path& dir, const std::string& name, float w0, float w1, double d, int64_t n = 7,
                  const std::string& task = "mnist") {
  const auto p = dir / name;
  save_checkpoint(p,
                  {{"model.w", Tensor::from_vector<float>({w0, w1}, {2})},
                   {"model.d", Tensor::from_vector<double>({d}, {1})},
                   {"model.n", Tensor::from_vector<int64_t>({n}, {1})},
                   {"optimizer.g0.p0.exp_avg", Tensor::full({2}, 1.0)}},
                  json{{"format", "normlab-train-v2"}, {"task", task}, {"settings", {{"lr", w0}}}});
  return p;
}
}  // namespace

TEST_CASE("average_model_checkpoints: the hand average of 3 checkpoints", "[checkpoint][average]") {
  nltest::TempDir t("avg_hand");
  // listed newest first: its settings are the ones kept
  std::vector<fs::path> in{write_ck(t.path, "c3.safetensors", 3.f, 0.25f, 0.3),
                           write_ck(t.path, "c2.safetensors", 2.f, 0.5f, 0.2),
                           write_ck(t.path, "c1.safetensors", 1.f, 1.0f, 0.1)};
  AveragedModel m = average_model_checkpoints(in);
  CHECK(m.tensors.size() == 3);  // optimizer.* dropped
  CHECK(m.tensors.at("model.w").dtype() == DType::Float32);
  CHECK(m.tensors.at("model.w").to_vector<float>() == std::vector<float>{2.f, static_cast<float>(1.75 / 3.0)});
  CHECK(m.tensors.at("model.d").dtype() == DType::Float64);
  CHECK(m.tensors.at("model.d").to_vector<double>()[0] == Approx(0.2).epsilon(1e-15));
  CHECK(m.tensors.at("model.n").to_vector<int64_t>() == std::vector<int64_t>{7});
  CHECK(m.meta["format"] == "normlab-model-v2");
  CHECK(m.meta["task"] == "mnist");
  CHECK(m.meta["settings"]["lr"] == 3.0);
  CHECK(m.meta["averaged_from"] == json{"c3.safetensors", "c2.safetensors", "c1.safetensors"});
  // the generic average gives the same tensors
  CHECK(average_checkpoints(in).at("model.w").to_vector<float>() == m.tensors.at("model.w").to_vector<float>());
}

TEST_CASE("average_checkpoints: int64 tensors are floor-averaged as fairseq's sum // N", "[checkpoint][average]") {
  // BatchNorm's num_batches_tracked and PowerNorm's iteration counter differ between epoch checkpoints.
  nltest::TempDir t("avg_int");
  const auto a = write_ck(t.path, "a.safetensors", 1.f, 1.f, 0.1, 7);
  const auto b = write_ck(t.path, "b.safetensors", 1.f, 1.f, 0.1, 8);
  const auto c = write_ck(t.path, "c.safetensors", 1.f, 1.f, 0.1, 10);
  CHECK(average_model_checkpoints({a, b}).tensors.at("model.n").to_vector<int64_t>() == std::vector<int64_t>{7});  // 15 // 2
  CHECK(average_model_checkpoints({a, b, c}).tensors.at("model.n").to_vector<int64_t>() == std::vector<int64_t>{8});  // 25 // 3
  // negative sums round towards minus infinity, as Python's //: (-7 + -8) // 2 = -8
  TensorAverager avg;
  avg.add({{"n", Tensor::from_vector<int64_t>({-7, 3}, {2})}}, "x");
  avg.add({{"n", Tensor::from_vector<int64_t>({-8, 4}, {2})}}, "y");
  CHECK(avg.result().at("n").to_vector<int64_t>() == std::vector<int64_t>{-8, 3});
}

TEST_CASE("average_model_checkpoints: mismatches name the tensor and both files", "[checkpoint][average][errors]") {
  nltest::TempDir t("avg_err");
  const auto a = write_ck(t.path, "a.safetensors", 1.f, 1.f, 0.1);
  const auto s = t.path / "shape.safetensors";
  save_checkpoint(s, {{"model.w", Tensor::zeros({3})}, {"model.d", Tensor::zeros({1}, DType::Float64)},
                      {"model.n", Tensor::from_vector<int64_t>({7}, {1})}});
  CHECK_THROWS_WITH(average_checkpoints({a, s}),
                    Contains("tensor 'model.w' is float32 [3] in '" + s.string() + "' but float32 [2] in '" + a.string()));
  const auto x = t.path / "extra.safetensors";
  save_checkpoint(x, {{"model.w", Tensor::zeros({2})}, {"model.d", Tensor::zeros({1}, DType::Float64)},
                      {"model.n", Tensor::from_vector<int64_t>({7}, {1})}, {"model.z", Tensor::zeros({1})}});
  CHECK_THROWS_WITH(average_checkpoints({a, x}), Contains("'model.z' is in '" + x.string() + "' but not in '" + a.string()));
  CHECK_THROWS_WITH(average_checkpoints({x, a}), Contains("'model.z' is in '" + x.string() + "' but not in '" + a.string()));
  CHECK_THROWS_WITH(average_model_checkpoints({a, write_ck(t.path, "o.safetensors", 1.f, 1.f, 0.1, 7, "sst")}),
                    Contains("belongs to task 'sst'"));
  CHECK_THROWS_WITH(average_model_checkpoints({x}), Contains("has no \"task\""));
  CHECK_THROWS_WITH(average_model_checkpoints({a, t.path / "missing.safetensors"}), Contains("missing.safetensors"));
  CHECK_THROWS_WITH(average_checkpoints({a}, "encoder."), Contains("has no tensor whose name starts with 'encoder.'"));
  CHECK_THROWS_AS(average_model_checkpoints({}), std::invalid_argument);
  CHECK_THROWS_WITH(average_tensor_maps({{{"a", Tensor::zeros({2})}}, {{"b", Tensor::zeros({2})}}}),
                    Contains("'b' is in 'map 1' but not in 'map 0'"));
}

TEST_CASE("average-checkpoints: an input holding a NaN or an infinity is refused, naming the file and tensor",
          "[checkpoint][average][errors][cli]") {
  nltest::TempDir t("avg_nan");
  const auto ok = write_ck(t.path, "ok.safetensors", 1.f, 2.f, 0.5);
  const auto nan = write_ck(t.path, "nan.safetensors", 1.f, std::numeric_limits<float>::quiet_NaN(), 0.5);
  const auto inf = write_ck(t.path, "inf.safetensors", 1.f, 2.f, std::numeric_limits<double>::infinity());
  CHECK_THROWS_WITH(average_model_checkpoints({ok, nan}),
                    Contains("tensor 'model.w' in '" + nan.string() + "' holds a NaN (element 1)"));
  CHECK_THROWS_WITH(average_model_checkpoints({nan, ok}), Contains("'" + nan.string() + "' holds a NaN"));  // as first
  CHECK_THROWS_WITH(average_checkpoints({ok, inf}),
                    Contains("tensor 'model.d' in '" + inf.string() + "' holds an infinity") &&
                        Contains("leave it out of the inputs"));
  const auto out = t.path / "avg.safetensors";
  auto [rc, text] = nltest::run_cli("average-checkpoints --inputs '" + ok.string() + "' '" + nan.string() +
                                    "' --output '" + out.string() + "'");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("nan.safetensors' holds a NaN"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("last_n_checkpoints: newest by epoch or update number", "[checkpoint][average]") {
  nltest::TempDir t("avg_pick");
  for (const char* f : {"checkpoint9.safetensors", "checkpoint10.safetensors", "checkpoint8.safetensors",
                        "checkpoint_last.safetensors", "checkpoint_best.safetensors", "checkpoint_3_900.safetensors",
                        "checkpoint_2_1000.safetensors", "checkpoint_1_99.safetensors", "checkpoint11.pt",
                        "checkpoint7.safetensors.tmp"})
    t.write(f, "");
  auto e = last_n_checkpoints(t.path, 2, CheckpointSeries::kEpoch);
  CHECK(e == std::vector<fs::path>{t.path / "checkpoint10.safetensors", t.path / "checkpoint9.safetensors"});
  CHECK(last_n_checkpoints(t.path, 2, CheckpointSeries::kEpoch, 9) ==
        std::vector<fs::path>{t.path / "checkpoint9.safetensors", t.path / "checkpoint8.safetensors"});
  auto u = last_n_checkpoints(t.path, 3, CheckpointSeries::kUpdate);
  CHECK(u == std::vector<fs::path>{t.path / "checkpoint_2_1000.safetensors", t.path / "checkpoint_3_900.safetensors",
                                   t.path / "checkpoint_1_99.safetensors"});
  CHECK_THROWS_WITH(last_n_checkpoints(t.path, 4, CheckpointSeries::kEpoch),
                    Contains("found 3 checkpoint(s) named checkpoint{epoch}.safetensors") &&
                        Contains("checkpoint10.safetensors, checkpoint9.safetensors, checkpoint8.safetensors") &&
                        Contains("but 4 were asked for"));
  CHECK_THROWS_WITH(last_n_checkpoints(t.path / "nope", 1, CheckpointSeries::kEpoch), Contains("is not a directory"));
  CHECK_THROWS_AS(last_n_checkpoints(t.path, 0, CheckpointSeries::kEpoch), std::invalid_argument);
}

TEST_CASE("normlab average-checkpoints: newest N epochs of a run folder", "[checkpoint][average][cli]") {
  nltest::TempDir t("avg_cli");
  write_ck(t.path, "checkpoint8.safetensors", 100.f, 100.f, 100.0);  // oldest: not averaged
  write_ck(t.path, "checkpoint9.safetensors", 1.f, 2.f, 0.5);
  write_ck(t.path, "checkpoint10.safetensors", 3.f, 4.f, 1.5);
  const auto out = t.path / "avg.safetensors";
  auto [rc, text] = nltest::run_cli("average-checkpoints --inputs '" + t.path.string() +
                                    "' --num-epoch-checkpoints 2 --output '" + out.string() + "'");
  INFO(text);
  REQUIRE(rc == 0);
  Checkpoint ck = load_checkpoint(out);
  CHECK(ck.tensors.at("model.w").to_vector<float>() == std::vector<float>{2.f, 3.f});
  CHECK(ck.tensors.at("model.d").to_vector<double>() == std::vector<double>{1.0});
  CHECK(ck.tensors.count("optimizer.g0.p0.exp_avg") == 0);
  CHECK(ck.meta["format"] == "normlab-model-v2");
  CHECK(ck.meta["averaged_from"] == json{"checkpoint10.safetensors", "checkpoint9.safetensors"});
  CHECK(ck.meta["settings"]["lr"] == 3.0);
  // explicit files
  auto [rc2, text2] = nltest::run_cli("average-checkpoints --inputs '" + (t.path / "checkpoint9.safetensors").string() +
                                      "' '" + (t.path / "checkpoint8.safetensors").string() + "' --output '" +
                                      out.string() + "'");
  INFO(text2);
  REQUIRE(rc2 == 0);
  CHECK(load_checkpoint(out).tensors.at("model.w").to_vector<float>() == std::vector<float>{50.5f, 51.f});
  // too few, and an input as output
  auto [rc3, text3] = nltest::run_cli("average-checkpoints --inputs '" + t.path.string() +
                                      "' --num-epoch-checkpoints 5 --output '" + out.string() + "'");
  CHECK(rc3 != 0);
  CHECK(text3.find("found 3 checkpoint(s)") != std::string::npos);
  auto [rc4, text4] = nltest::run_cli("average-checkpoints --inputs '" + (t.path / "checkpoint9.safetensors").string() +
                                      "' --output '" + (t.path / "checkpoint9.safetensors").string() + "'");
  CHECK(rc4 != 0);
  CHECK(text4.find("is one of the inputs") != std::string::npos);
}
