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
#include <limits>

namespace nlapp {

namespace {
constexpr double D = std::numeric_limits<double>::quiet_NaN();  // the paper prints "Diverge"

// One column of a paper's table: its numbers in the order of `norms` (NaN: "Diverge").
struct Column {
  const char* column;
  std::vector<double> values;
  char status = 0;
};

// A paper's table: its rows (norms), the columns, and where it is in the paper.
struct Table {
  const char* paper;
  const char* source;
  std::vector<const char*> norms;
  std::vector<Column> columns;
};

std::vector<Table> tables() {
  const std::vector<const char*> xu{"none", "layernorm", "layernorm-simple", "detachnorm", "detach-mean",
                                   "detach-variance", "adanorm"};
  const std::vector<const char*> shen{"layernorm", "batchnorm", "powernorm-v", "powernorm"};
  return {
      {"xu2019", "Tables 1-4", xu,
       {{"en-de", {D, 28.3, 28.4, D, 28.3, D, 28.5}},
        {"de-en", {34.0, 35.5, 35.5, 33.9, 35.6, 34.2, 35.6}},
        {"en-vi", {28.4, 31.2, 31.6, 27.7, 31.3, 29.8, 31.4}},
        {"enwiki8", {1.04, 1.07, 1.07, 1.12, 1.07, 1.10, 1.07}},
        {"rt", {76.85, 77.21, 76.66, 76.40, 75.02, 77.04, 77.50}},
        {"sst5", {38.55, 39.23, 40.54, 40.04, 40.99, 41.74, 40.54}},
        {"mnist", {99.14, 99.13, 99.09, 99.10, 99.25, 99.10, 99.35}},
        {"ptb", {88.31, 89.12, 89.19, 89.79, 89.45, 89.80, 89.23}}}},
      {"shen2020", "Table 1", shen, {{"iwslt14", {35.5, 34.4, 35.5, 35.9}, 'V'}, {"wmt14", {29.5, 28.1, 28.5, 30.1}, 'V'}}},
      {"shen2020", "Table 2", shen, {{"ptb", {53.2, 60.7, 55.3, 47.6}, 'V'}, {"wt103", {20.9, 27.2, 21.3, 17.9}, 'V'}}},
      {"ni2024", "slides", {"layernorm", "lng"}, {{"iwslt14-de-en", {35.01, 35.23}}, {"vit-cifar", {88.81, 89.26}}}},
      {"ni2024", "slides", {"instancenorm", "batchnorm", "layernorm", "groupnorm", "lng"},
       {{"resnet-cifar-train", {10, 36.0, 59.5, 82.16, 99.66}}, {"resnet-cifar-test", {10, 39.3, 62.85, 69.37, 86.66}}}},
  };
}

std::vector<PaperValue> build() {
  std::vector<PaperValue> t;
  for (const Table& tab : tables())
    for (const Column& c : tab.columns)
      for (size_t i = 0; i < c.values.size(); ++i)
        t.push_back({tab.paper, c.column, tab.norms.at(i), c.values[i], std::isnan(c.values[i]), c.status, tab.source});
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
