#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "data/text/batching.h"
#include "data/text/dictionary.h"
#include "data/text/parallel_text.h"
#include "data/text/shuffle.h"
#include "data/text/token_dataset.h"
#include "data/text/utf8.h"
#include "data_text/temp_dir.h"
#include "test_paths.h"

using namespace nl::data;

namespace {
void check_plan(const BatchPlan& plan, const std::vector<int64_t>& src, const std::vector<int64_t>& tgt,
                const BatchingOptions& o) {
  std::vector<int> seen(src.size(), 0);
  for (const auto& b : plan.batches) {
    REQUIRE_FALSE(b.empty());
    int64_t longest = 0;
    for (int64_t i : b) {
      longest = std::max({longest, src[static_cast<std::size_t>(i)], tgt.empty() ? 0 : tgt[static_cast<std::size_t>(i)]});
      ++seen[static_cast<std::size_t>(i)];
    }
    REQUIRE(static_cast<int64_t>(b.size()) * longest <= o.max_tokens);  // padding counts
  }
  for (int64_t i : plan.dropped) ++seen[static_cast<std::size_t>(i)];
  CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));  // each example exactly once
}
}  // namespace

TEST_CASE("batching on real Multi30k lengths: max_tokens with padding, each pair once, seeded epochs",
          "[data][batching][real]") {
  auto d = nltest::data_path("multi30k/tok");
  NL_SKIP_IF_MISSING(d);
  auto c = read_parallel(d / "train.lc.norm.tok.en", d / "train.lc.norm.tok.de");
  std::vector<int64_t> src, tgt;
  for (std::size_t i = 0; i < c.size(); ++i) {
    src.push_back(static_cast<int64_t>(split_whitespace(c.source[i]).size()) + 1);  // + </s>
    tgt.push_back(static_cast<int64_t>(split_whitespace(c.target[i]).size()) + 1);
  }
  BatchingOptions o;
  o.max_tokens = 1024;
  o.max_source_positions = 40;
  o.max_target_positions = 40;
  auto plan = plan_batches(src, tgt, o);
  int64_t expect_dropped = 0;
  for (std::size_t i = 0; i < src.size(); ++i) expect_dropped += src[i] > 40 || tgt[i] > 40;
  CHECK(static_cast<int64_t>(plan.dropped.size()) == expect_dropped);
  CHECK(expect_dropped > 0);
  CHECK(plan.num_examples_kept + expect_dropped == 29000);
  check_plan(plan, src, tgt, o);
  auto e1 = shuffled_batches(plan, 7, 1), e1b = shuffled_batches(plan, 7, 1), e2 = shuffled_batches(plan, 7, 2);
  CHECK(e1 == e1b);
  CHECK(e1 != e2);
  CHECK(e1 != plan.batches);
  auto sorted = [](std::vector<std::vector<int64_t>> v) { std::sort(v.begin(), v.end()); return v; };
  CHECK(sorted(e1) == sorted(plan.batches));
  o.max_sentences = 16;
  o.required_batch_size_multiple = 8;
  auto p2 = plan_batches(src, tgt, o);
  check_plan(p2, src, tgt, o);
  for (std::size_t k = 0; k + 1 < p2.batches.size(); ++k) {
    CHECK(p2.batches[k].size() <= 16);
    CHECK(p2.batches[k].size() % 8 == 0);
  }
}

TEST_CASE("batching: randomized lengths keep the invariants, oversize example throws", "[data][batching]") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> src(500), tgt(500);
    for (auto& x : src) x = 1 + static_cast<int64_t>(uniform_below(rng, 120));
    for (auto& x : tgt) x = 1 + static_cast<int64_t>(uniform_below(rng, 120));
    BatchingOptions o;
    o.max_tokens = 128 + static_cast<int64_t>(uniform_below(rng, 1000));
    o.max_source_positions = 100;
    o.max_target_positions = 110;
    check_plan(plan_batches(src, tgt, o), src, tgt, o);
    check_plan(plan_batches(src, {}, o), src, {}, o);
  }
  BatchingOptions o;
  o.max_tokens = 10;
  CHECK_THROWS_WITH(plan_batches({5, 11}, {}, o), Catch::Contains("max_tokens=10"));
}

TEST_CASE("shuffle: mt19937_64 Fisher-Yates is a fixed, unbiased permutation", "[data][batching]") {
  auto p = seeded_permutation(10, 42);
  auto q = p;
  std::sort(q.begin(), q.end());
  CHECK(q == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(seeded_permutation(10, 42) == p);
  // mt19937_64's 10000th output with the default seed is fixed by the C++ standard.
  std::mt19937_64 g;
  g.discard(9999);
  CHECK(g() == 9981545732273789042ULL);
  // uniform_below: every residue appears with roughly equal frequency
  std::mt19937_64 r(1);
  std::vector<int> hist(3, 0);
  for (int i = 0; i < 30000; ++i) ++hist[uniform_below(r, 3)];
  for (int h : hist) CHECK(std::abs(h - 10000) < 400);
}

TEST_CASE("collate: right/left padding, prev_output_tokens, LM blocks", "[data][batching]") {
  std::vector<int32_t> a{5, 6, 7, 2}, b{8, 2};
  auto r = collate_tokens({a, b}, 1, false);
  CHECK(r.batch_size == 2);
  CHECK(r.max_len == 4);
  CHECK(r.ids == std::vector<int64_t>{5, 6, 7, 2, 8, 2, 1, 1});
  CHECK(r.lengths == std::vector<int64_t>{4, 2});
  CHECK(collate_tokens({a, b}, 1, true).ids == std::vector<int64_t>{5, 6, 7, 2, 1, 1, 8, 2});
  CHECK(collate_tokens({a, b}, 1, false, true).ids == std::vector<int64_t>{2, 5, 6, 7, 2, 8, 1, 1});
  std::vector<int32_t> c{5, 6};
  CHECK_THROWS_AS(collate_tokens({c}, 1, false, true), std::invalid_argument);

  std::vector<int32_t> stream(23);
  for (int i = 0; i < 23; ++i) stream[static_cast<std::size_t>(i)] = 10 + i;
  auto blocks = make_lm_blocks(23, 5);
  REQUIRE(blocks.size() == 5);  // 22 inputs -> 5+5+5+5+2
  CHECK(blocks.back().length == 2);
  int64_t covered = 0;
  for (const auto& bl : blocks) covered += bl.length;
  CHECK(covered == 22);
  auto lm = collate_lm_blocks(stream, blocks, {4, 0}, 1);
  CHECK(lm.source.ids == std::vector<int64_t>{30, 31, 1, 1, 1, 10, 11, 12, 13, 14});
  CHECK(lm.target.ids == std::vector<int64_t>{31, 32, 1, 1, 1, 11, 12, 13, 14, 15});
}

TEST_CASE("token dataset: write, memory-map, read back, corrupt files give clear errors", "[data][binary][errors]") {
  nltest::TempDir t("tokds");
  std::vector<std::vector<int32_t>> seqs{{4, 5, 2}, {}, {7, 2}};
  write_token_dataset(t.path / "x.bin", seqs, 8);
  CHECK(std::filesystem::file_size(t.path / "x.bin") == 64 + 4 * 8 + 5 * 4);
  {
    TokenDataset ds(t.path / "x.bin");
    REQUIRE(ds.size() == 3);
    CHECK(ds.num_tokens() == 5);
    CHECK(ds.vocab_size() == 8);
    CHECK(ds.lengths() == std::vector<int64_t>{3, 0, 2});
    CHECK(std::vector<int32_t>(ds[2].begin(), ds[2].end()) == seqs[2]);
    CHECK_THROWS_AS(ds[3], std::out_of_range);
  }
  CHECK_THROWS_WITH(write_token_dataset(t.path / "y.bin", {{9}}, 8), Catch::Contains("outside [0, 8)"));
  std::filesystem::resize_file(t.path / "x.bin", 70);
  CHECK_THROWS_WITH(TokenDataset(t.path / "x.bin"), Catch::Contains("truncated"));
  CHECK_THROWS_WITH(TokenDataset(t.write("z.bin", std::string(80, 'x'))), Catch::Contains("bad magic"));
  CHECK_THROWS_WITH(TokenDataset(t.path / "none.bin"), Catch::Contains("normlab data prepare"));
}
