#include "tasks/image_data.h"

#include <algorithm>
#include <stdexcept>

#include "autograd/functions.h"
#include "data/cifar10.h"
#include "data/image_ops.h"
#include "engine/run_folder.h"
#include "report/atomic_file.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
constexpr double kBig = 9007199254740992.0;  // 2^53

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
}  // namespace

std::vector<OptionSpec> image_data_settings(const std::string& default_dataset) {
  OptionSpec data = option("data", OptKind::String, "",
                           "Data folder; empty: ../shared/data/<dataset> (MNIST: the four IDX files; CIFAR-10: the "
                           "binary batches data_batch_1..5 and test_batch, .bin or .bin.gz)");
  data.allow_empty = true;
  return {choice_option("dataset", default_dataset, {"mnist", "cifar10"}, "Image set"),
          data,
          option("batches", OptKind::IntList, json::array({1, 2, 3, 4, 5}),
                 "CIFAR-10 training batches to load (data_batch_K, K in 1..5)", 1, 5),
          option("valid_size", OptKind::Int, 5000,
                 "Validation images held out of the training images (MNIST: the last ones; CIFAR-10: drawn with "
                 "--split-seed)", 0, 1e6),
          option("split_seed", OptKind::Int, 0, "Seed of the CIFAR-10 train/valid split (recorded in data.json)", 0, kBig),
          option("train_subset", OptKind::Int, 0, "Train on the first N training images only; 0: all", 0, 1e7),
          option("test_subset", OptKind::Int, 0, "Test on the first N test images only (quick CPU checks); 0: all", 0, 1e7),
          option("random_labels", OptKind::Int, -1,
                 "Permute every split's labels once with this seed (MNIST-RL, CIFAR-10-RL; written to data.json); "
                 "-1: real labels", -1, kBig),
          option("grayscale", OptKind::Bool, false, "CIFAR-10 as one BT.601 luma channel")};
}

ImageData load_image_data(const json& s) {
  const std::string ds = s.at("dataset").get<std::string>();
  std::string dir = s.at("data").get<std::string>();
  if (dir.empty()) dir = "../shared/data/" + ds;
  const int64_t valid_size = s.at("valid_size").get<int64_t>();
  const int64_t subset = s.at("train_subset").get<int64_t>();
  const int64_t test_subset = s.at("test_subset").get<int64_t>();
  const int64_t rl = s.at("random_labels").get<int64_t>();
  const bool gray = s.at("grayscale").get<bool>();
  ImageData d;
  json& r = d.record;
  r = {{"dataset", ds},           {"data", dir},       {"valid_size", valid_size}, {"train_subset", subset},
       {"test_subset", test_subset}, {"grayscale", gray}};
  std::string what;
  if (ds == "mnist") {
    nl::MnistLikeOptions o;
    o.valid_size = valid_size;
    o.valid_size_flag = "--valid-size";
    o.rows = o.cols = 0;  // any size (MNIST and Fashion-MNIST are 28×28)
    nl::MnistLikeSplits m = nl::load_mnist_like(dir, o);
    d.train = m.train;
    d.valid = m.valid;
    d.test = m.test;
    r["split"] = "valid = the last " + std::to_string(valid_size) + " images of the training file";
    what = "mnist";
    if (gray) what += " (already one channel)";
  } else {
    nl::Cifar10Options o;
    o.batches.clear();
    for (int64_t b : s.at("batches").get<std::vector<int64_t>>()) o.batches.push_back((int)b);
    o.valid_size = valid_size;
    o.split_seed = s.at("split_seed").get<uint64_t>();
    o.grayscale = gray;
    o.normalize = false;  // normalised below, after the subset, as MNIST
    nl::Cifar10Splits c = nl::load_cifar10(dir, o);
    d.train = c.train;
    d.valid = c.valid;
    d.test = c.test;
    r["batches"] = c.batches;
    r["split_seed"] = o.split_seed;
    r["valid_indices"] = c.valid_indices;
    r["split"] = "valid = valid_indices (into the chosen batches' images in batch order), drawn by shuffled_indices(N, "
                 "split_seed, 0)";
    what = "cifar10 batches " + join_ints(c.batches) + (gray ? " grayscale" : "");
  }
  const int64_t full = d.train.size();
  if (subset > 0) {
    if (subset > full)
      throw std::invalid_argument("--train-subset " + std::to_string(subset) + " exceeds the " + std::to_string(full) +
                                  " training images loaded; pass at most " + std::to_string(full) +
                                  (ds == "cifar10" ? " or load more --batches" : ""));
    d.train = nl::take_first(d.train, subset);
  }
  if (test_subset > 0) d.test = nl::take_first(d.test, std::min(test_subset, d.test.size()));
  std::vector<double> mean, sd;
  nl::channel_stats(d.train, mean, sd);
  for (double& x : sd)
    if (!(x > 0)) x = 1;  // a constant channel is only centred
  d.train = nl::normalize_channels(d.train, mean, sd);
  if (d.valid.size()) d.valid = nl::normalize_channels(d.valid, mean, sd);
  d.test = nl::normalize_channels(d.test, mean, sd);
  r["normalize"] = {{"mean", mean}, {"std", sd}, {"of", "x/255 of the train split"}};
  if (rl >= 0) {
    d.train = nl::permute_labels(d.train, (uint64_t)rl, 0);
    if (d.valid.size()) d.valid = nl::permute_labels(d.valid, (uint64_t)rl, 1);
    d.test = nl::permute_labels(d.test, (uint64_t)rl, 2);
    r["random_labels"] = {{"seed", rl},
                          {"rule", "new[i] = old[p[i]], p = shuffled_indices(N, seed, stream); streams 0/1/2 = train/valid/test"},
                          {"train", d.train.labels.to_vector<int64_t>()}};
  }
  d.summary = what + " (train " + std::to_string(d.train.size()) + (subset > 0 ? " of " + std::to_string(full) : "") +
              " / valid " + std::to_string(d.valid.size()) + " / test " + std::to_string(d.test.size()) +
              (rl >= 0 ? "; random labels, seed " + std::to_string(rl) : "") + ")";
  r["summary"] = d.summary;
  return d;
}

void write_image_data_record(const ImageData& data, const fs::path& out) {
  create_out_folder(out);  // a clear error when --out is a file
  write_file_atomic(out / "data.json", data.record.dump() + "\n");
}

Metrics image_accuracy(nl::Module& model, const nl::ImageDataset& d) {
  double count = 0;
  return image_accuracy(model, d, EvalShard{}, count);
}

Metrics image_accuracy(nl::Module& model, const nl::ImageDataset& d, EvalShard shard, double& count) {
  nl::NoGradGuard ng;
  const bool was = model.is_training();
  model.eval();
  const nl::Device dev = model.device();
  nl::Batcher b(d, 1000, 0, /*shuffle=*/false);
  int64_t correct = 0, scored = 0;
  double loss_sum = 0;
  for (int64_t i = shard.rank; i < b.num_batches(); i += shard.world) {
    nl::Batch batch = b.batch(i);
    batch.images = batch.images.to(dev);  // the loader's host tensors, where the model is
    batch.labels = batch.labels.to(dev);
    nl::Variable logits = model(nl::Variable(batch.images));
    loss_sum += nl::cross_entropy(logits, batch.labels).item() * (double)batch.labels.numel();
    correct += (int64_t)nl::sum(nl::eq(nl::argmax(logits.data(), 1), batch.labels)).item();
    scored += batch.labels.numel();
  }
  model.train(was);
  count = (double)scored;
  const double n = std::max<double>(1.0, (double)scored);
  return {{"acc", 100.0 * (double)correct / n}, {"loss", loss_sum / n}};
}

}  // namespace nlapp
