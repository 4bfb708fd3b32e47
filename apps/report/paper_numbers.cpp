// The papers' numbers (paper_numbers.h). Columns:
//   xu2019:   en-de (WMT14, big), de-en (IWSLT14), en-vi (IWSLT15) BLEU; enwiki8 BPC; rt, sst5 test
//             accuracy %; mnist accuracy %; ptb UAS (Chen & Manning parser) — Xu et al. 2019, Tables 1-4
//             (RT / SST5 from the poster table of seed-code.md 1.6 and Table 3);
//   shen2020: iwslt14 (De-En), wmt14 (En-De) BLEU (Table 1), ptb, wt103 test PPL (Table 2), the
//             Pre-Norm Transformer / Tensor-Transformer 1core rows read from the paper's text
//             (../shared/seeds/shen2020-powernorm.txt): all verified ('V');
//   ni2024:   iwslt14-de-en BLEU, vit-cifar test accuracy % (Tiny-ViT), resnet-cifar-train and
//             resnet-cifar-test accuracy % — the LN-G slides.
#include "report/paper_numbers.h"

#include <cmath>
#include <initializer_list>
#include <utility>

namespace nlapp {

namespace {
std::vector<PaperValue> build() {
  std::vector<PaperValue> t;
  auto add = [&](const char* paper, const char* source, const char* column,
                 std::initializer_list<std::pair<const char*, double>> cells, char status = 0) {
    for (const auto& [norm, v] : cells) t.push_back({paper, column, norm, v, false, status, source});
  };
  auto diverged = [&](const char* paper, const char* source, const char* column, std::initializer_list<const char*> norms) {
    for (const char* norm : norms) t.push_back({paper, column, norm, std::nan(""), true, 0, source});
  };
  const char* xu = "Tables 1-4";
  diverged("xu2019", xu, "en-de", {"none", "detachnorm", "detach-variance"});
  add("xu2019", xu, "en-de", {{"layernorm", 28.3}, {"layernorm-simple", 28.4}, {"detach-mean", 28.3}, {"adanorm", 28.5}});
  add("xu2019", xu, "de-en", {{"none", 34.0}, {"layernorm", 35.5}, {"layernorm-simple", 35.5}, {"detachnorm", 33.9},
                              {"detach-mean", 35.6}, {"detach-variance", 34.2}, {"adanorm", 35.6}});
  add("xu2019", xu, "en-vi", {{"none", 28.4}, {"layernorm", 31.2}, {"layernorm-simple", 31.6}, {"detachnorm", 27.7},
                              {"detach-mean", 31.3}, {"detach-variance", 29.8}, {"adanorm", 31.4}});
  add("xu2019", xu, "enwiki8", {{"none", 1.04}, {"layernorm", 1.07}, {"layernorm-simple", 1.07}, {"detachnorm", 1.12},
                                {"detach-mean", 1.07}, {"detach-variance", 1.10}, {"adanorm", 1.07}});
  add("xu2019", xu, "rt", {{"none", 76.85}, {"layernorm", 77.21}, {"layernorm-simple", 76.66}, {"detachnorm", 76.40},
                           {"detach-mean", 75.02}, {"detach-variance", 77.04}, {"adanorm", 77.50}});
  add("xu2019", xu, "sst5", {{"none", 38.55}, {"layernorm", 39.23}, {"layernorm-simple", 40.54}, {"detachnorm", 40.04},
                             {"detach-mean", 40.99}, {"detach-variance", 41.74}, {"adanorm", 40.54}});
  add("xu2019", xu, "mnist", {{"none", 99.14}, {"layernorm", 99.13}, {"layernorm-simple", 99.09}, {"detachnorm", 99.10},
                              {"detach-mean", 99.25}, {"detach-variance", 99.10}, {"adanorm", 99.35}});
  add("xu2019", xu, "ptb", {{"none", 88.31}, {"layernorm", 89.12}, {"layernorm-simple", 89.19}, {"detachnorm", 89.79},
                            {"detach-mean", 89.45}, {"detach-variance", 89.80}, {"adanorm", 89.23}});

  add("shen2020", "Table 1", "iwslt14", {{"layernorm", 35.5}, {"batchnorm", 34.4}, {"powernorm-v", 35.5}, {"powernorm", 35.9}}, 'V');
  add("shen2020", "Table 1", "wmt14", {{"layernorm", 29.5}, {"batchnorm", 28.1}, {"powernorm-v", 28.5}, {"powernorm", 30.1}}, 'V');
  add("shen2020", "Table 2", "ptb", {{"layernorm", 53.2}, {"batchnorm", 60.7}, {"powernorm-v", 55.3}, {"powernorm", 47.6}}, 'V');
  add("shen2020", "Table 2", "wt103", {{"layernorm", 20.9}, {"batchnorm", 27.2}, {"powernorm-v", 21.3}, {"powernorm", 17.9}}, 'V');

  add("ni2024", "slides", "iwslt14-de-en", {{"layernorm", 35.01}, {"lng", 35.23}});
  add("ni2024", "slides", "vit-cifar", {{"layernorm", 88.81}, {"lng", 89.26}});
  add("ni2024", "slides", "resnet-cifar-train", {{"instancenorm", 10}, {"batchnorm", 36.0}, {"layernorm", 59.5},
                                                 {"groupnorm", 82.16}, {"lng", 99.66}});
  add("ni2024", "slides", "resnet-cifar-test", {{"instancenorm", 10}, {"batchnorm", 39.3}, {"layernorm", 62.85},
                                                {"groupnorm", 69.37}, {"lng", 86.66}});
  return t;
}
}  // namespace

const std::vector<PaperValue>& paper_values() {
  static const std::vector<PaperValue> t = build();
  return t;
}

const PaperValue* find_paper_value(const std::string& paper, const std::string& column, const std::string& norm) {
  for (const PaperValue& v : paper_values())
    if (v.paper == paper && v.column == column && v.norm == norm) return &v;
  return nullptr;
}

double paper_number(const std::string& paper, const std::string& column, const std::string& norm) {
  const PaperValue* v = find_paper_value(paper, column, norm);
  return v ? v->value : std::nan("");
}

}  // namespace nlapp
