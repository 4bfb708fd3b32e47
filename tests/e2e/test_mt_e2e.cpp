// End to end on real Multi30k (../shared/data/multi30k): prepare, train a tiny Transformer for 200
// updates, translate the test set twice (identical output, BLEU above 0), and the clear errors of
// generate (missing prepared data, vocabulary mismatch) and of the model (over-long source).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli_util.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nltest::run_cli;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
const std::string kTiny =
    " --d-model 64 --n-heads 4 --ffn-dim 128 --encoder-layers 1 --decoder-layers 1 --dropout 0.1"
    " --attention-dropout 0 --max-tokens 2048 --warmup-updates 50 --lr 0.003 --quiet --threads 1";
}  // namespace

TEST_CASE("mt: 200 updates on Multi30k, then generate: finite BLEU above 0, identical twice", "[e2e][mt]") {
  const fs::path raw = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(raw);
  const fs::path tmp = fs::temp_directory_path() / ("normlab-mt-e2e-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  auto [rc, out] = run_cli("data prepare multi30k --data " + raw.string() + " --out " + (tmp / "data").string() +
                           " --vocab-size 2000");
  REQUIRE(rc == 0);
  std::tie(rc, out) = run_cli("train mt --config multi30k --data " + (tmp / "data").string() + " --out " +
                              (tmp / "run").string() + kTiny + " --max-update 200 --max-len-b 30 --beam 2");
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(fs::exists(tmp / "run" / "generate-test.txt"));
  for (int i = 0; i < 2; ++i) {
    std::tie(rc, out) = run_cli("generate mt --path " + (tmp / "run" / "checkpoint_last.safetensors").string() +
                                " --beam 2 --max-len-b 30 --results-path " + (tmp / ("hyp" + std::to_string(i))).string());
    INFO(out);
    REQUIRE(rc == 0);
    auto at = out.find("BLEU = ");
    REQUIRE(at != std::string::npos);
    const double bleu = std::stod(out.substr(at + 7));
    CHECK(bleu > 0.0);
    CHECK(bleu < 100.0);
    CHECK(out.find("tok:13a") != std::string::npos);
  }
  const std::string h0 = slurp(tmp / "hyp0");
  CHECK(h0 == slurp(tmp / "hyp1"));
  CHECK(std::count(h0.begin(), h0.end(), '\n') == 1000);

  SECTION("errors") {
    std::tie(rc, out) = run_cli("generate mt --path " + (tmp / "run" / "checkpoint_last.safetensors").string() +
                                " --data " + (tmp / "nothing").string());
    CHECK(rc != 0);
    CHECK(out.find("normlab data prepare") != std::string::npos);
    // Same corpus with another vocabulary size: the checkpoint's embeddings do not fit.
    std::tie(rc, out) = run_cli("data prepare multi30k --data " + raw.string() + " --out " + (tmp / "data2").string() +
                                " --vocab-size 1500");
    REQUIRE(rc == 0);
    std::tie(rc, out) = run_cli("generate mt --path " + (tmp / "run" / "checkpoint_last.safetensors").string() +
                                " --data " + (tmp / "data2").string());
    CHECK(rc != 0);
    CHECK(out.find("vocabulary differs") != std::string::npos);
    // A model whose positions are shorter than the test sentences.
    std::tie(rc, out) = run_cli("train mt --config multi30k --data " + (tmp / "data").string() + " --out " +
                                (tmp / "short").string() + kTiny + " --max-update 1 --max-source-positions 8");
    CHECK(rc != 0);
    CHECK(out.find("max_source_positions") != std::string::npos);

    // Issue 29: the data's direction must be the checkpoint's (a de-en folder with the same joint vocabulary
    // once translated the wrong way with exit 0).
    const std::string ckpt = (tmp / "run" / "checkpoint_last.safetensors").string();
    std::tie(rc, out) = run_cli("data prepare multi30k --data " + raw.string() + " --out " + (tmp / "de-en").string() +
                                " --vocab-size 2000 --direction de-en");
    REQUIRE(rc == 0);
    std::tie(rc, out) = run_cli("generate mt --path " + ckpt + " --data " + (tmp / "de-en").string() + " --beam 1");
    INFO(out);
    CHECK(rc != 0);
    CHECK(out.find("translates en-de, but " + (tmp / "de-en").string() + " is prepared de-en") != std::string::npos);
    // generate's default output never replaces the generate-test.txt that train wrote; BLEU is printed once.
    const std::string from_train = slurp(tmp / "run" / "generate-test.txt");
    std::tie(rc, out) = run_cli("generate mt --path " + ckpt + " --beam 1 --max-len-b 30");
    INFO(out);
    CHECK(rc == 0);
    CHECK(slurp(tmp / "run" / "generate-test.txt") == from_train);
    CHECK(fs::exists(tmp / "run" / "generate-test-checkpoint_last.txt"));
    CHECK(out.find("BLEU = ") == out.rfind("BLEU = "));
    // translate on hostile input: CRLF as LF, an over-long line and binary garbage skipped with a warning
    // naming the line (an empty output line keeps outputs aligned), the others translated.
    std::string words;
    for (int i = 0; i < 3000; ++i) words += "dog ";
    std::ofstream(tmp / "in.txt", std::ios::binary)
        << "a man is running .\n" << "a man is running .\r\n" << words << "\n" << "\xff\xfe\x01garbage\n" << "two dogs .\n";
    const std::string cmd = std::string(NORMLAB_BINARY) + " translate --path " + ckpt + " --beam 2 --max-len-b 30 < " +
                            (tmp / "in.txt").string() + " > " + (tmp / "hyp.txt").string() + " 2> " + (tmp / "err.txt").string();
    CHECK(std::system(cmd.c_str()) == 0);
    const std::string err = slurp(tmp / "err.txt");
    INFO(err);
    std::vector<std::string> hyp;
    std::istringstream hs(slurp(tmp / "hyp.txt"));
    for (std::string l; std::getline(hs, l);) hyp.push_back(l);
    REQUIRE(hyp.size() == 5);
    CHECK(hyp[0] == hyp[1]);
    CHECK(!hyp[0].empty());
    CHECK(hyp[2].empty());
    CHECK(hyp[3].empty());
    CHECK(err.find("line 3 has ") != std::string::npos);
    CHECK(err.find("source positions") != std::string::npos);
    CHECK(err.find("raise --max-source-positions") == std::string::npos);  // translate has no such flag
    CHECK(err.find("line 4 is not valid UTF-8") != std::string::npos);
    CHECK(err.find("3 line(s) translated, 2 skipped (line 3, 4)") != std::string::npos);
  }
  fs::remove_all(tmp);
}
