// `normlab generate mt` (fairseq-generate: translate a prepared split with beam search, write the
// detokenised hypotheses, print BLEU) and `normlab translate` (fairseq-interactive: translate lines
// from standard input).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "common/command_registry.h"
#include "data/metrics/bleu.h"
#include "data/text/utf8.h"
#include "report/atomic_file.h"
#include "tasks/mt/mt_generate.h"
#include "tasks/mt/mt_task.h"

namespace nlapp {
namespace {
namespace fs = std::filesystem;

struct GenArgs {
  std::string path, data, split = "test", results_path, tokenize = "auto";
  nl::GenerationOptions gen;
  int64_t batch_size = 128;
  int64_t buffer_size = 1;
};

void add_common(CLI::App* c, GenArgs& a) {
  c->add_option("--path", a.path, "Checkpoint (checkpoint_best, checkpoint{N}, an average-checkpoints output)")->required();
  c->add_option("--data", a.data, "Prepared corpus folder (default: the one the checkpoint was trained on)");
  c->add_option("--beam", a.gen.beam, "Beam size (1 = greedy) [1 to 1000]")
      ->check(CLI::Range((int64_t)1, nl::GenerationOptions::kMaxBeam).description(""))
      ->capture_default_str();
  c->add_option("--lenpen", a.gen.lenpen, "Length penalty exponent (fairseq)")->capture_default_str();
  c->add_option("--max-len-a", a.gen.max_len_a, "Output length limit a*src_len + b: a")->capture_default_str();
  c->add_option("--max-len-b", a.gen.max_len_b, "Output length limit a*src_len + b: b")->capture_default_str();
  c->add_option("--min-len", a.gen.min_len, "No </s> before this many tokens")->capture_default_str();
  c->add_option("--unkpen", a.gen.unk_penalty, "Penalty on <unk>")->capture_default_str();
}

void generate(const GenArgs& a) {
  a.gen.validate();
  MtModel m = load_mt_model(a.path, a.data);
  Translations t = translate_split(*m.model, *m.corpus, a.split, a.gen, a.batch_size);
  // Default: beside the checkpoint, named after the split and the checkpoint, so that it never replaces the
  // generate-test.txt that `normlab train mt` wrote there.
  const fs::path out = a.results_path.empty()
                           ? fs::path(a.path).parent_path() / ("generate-" + a.split + "-" + fs::path(a.path).stem().string() + ".txt")
                           : fs::path(a.results_path);
  std::string text;
  for (const auto& h : t.text) text += h + "\n";
  write_file_atomic(out, text);
  nl::metrics::BleuOptions bo;
  bo.tokenize = nl::metrics::parse_bleu_tokenize(a.tokenize == "auto" ? m.corpus->bleu_tokenize() : a.tokenize);
  auto refs = m.corpus->references(a.split);
  nl::metrics::BleuScore b = nl::metrics::corpus_bleu(t.text, refs, bo);
  std::printf("%lld sentences in %.1f s (%.1f sentences/s), beam %lld, lenpen %g; hypotheses: %s\n",
              (long long)t.text.size(), t.seconds, t.sentences_per_second(), (long long)a.gen.beam, a.gen.lenpen,
              out.string().c_str());
  std::printf("%s  [%s]\n", b.to_string().c_str(),
              nl::metrics::bleu_signature(bo, 1).c_str());
}

// One stdin line as source ids, or why it cannot be translated ("" when it can). CR of a CRLF line end is
// stripped first, so CRLF and LF input translate alike.
std::string encode_input_line(const MtCorpus& corpus, std::string& line, int64_t max_positions, std::vector<int32_t>& ids) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find('\0') != std::string::npos) return "contains a NUL byte (binary input?)";
  if (const size_t bad = nl::data::find_invalid_utf8(line); bad != std::string::npos)
    return "is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")";
  try {
    ids = corpus.encode_source(line);
  } catch (const std::exception& e) {
    return std::string("cannot be encoded (") + e.what() + ")";
  }
  if ((int64_t)ids.size() > max_positions)
    return "has " + std::to_string(ids.size()) + " tokens, more than the model's " + std::to_string(max_positions) +
           " source positions (it was trained with --max-source-positions " + std::to_string(max_positions) +
           "); split the line";
  return "";
}

void translate(const GenArgs& a) {
  a.gen.validate();
  if (a.buffer_size < 1) throw std::invalid_argument("--buffer-size must be at least 1");
  MtModel m = load_mt_model(a.path, a.data);
  const int64_t max_positions = m.model->config().max_source_positions;
  // One output line per input line: a line that cannot be translated is skipped with a warning on stderr
  // naming it, and leaves an empty output line so that outputs stay aligned with inputs.
  std::vector<std::vector<int32_t>> buf;
  std::vector<bool> skip;
  int64_t line_no = 0, translated = 0;
  std::vector<int64_t> skipped;
  auto flush = [&] {
    if (skip.empty()) return;
    Translations t = translate_ids(*m.model, *m.corpus, buf, a.gen, a.batch_size);
    size_t j = 0;
    for (bool s : skip) std::cout << (s ? std::string() : t.text[j++]) << "\n";
    std::cout.flush();
    translated += (int64_t)buf.size();
    buf.clear();
    skip.clear();
  };
  std::string line;
  while (std::getline(std::cin, line)) {
    ++line_no;
    std::vector<int32_t> ids;
    const std::string why = encode_input_line(*m.corpus, line, max_positions, ids);
    if (!why.empty()) {
      std::cerr << "translate: warning: line " << line_no << " " << why << ": skipped (empty output line)\n";
      skipped.push_back(line_no);
      skip.push_back(true);
    } else {
      buf.push_back(std::move(ids));
      skip.push_back(false);
    }
    if ((int64_t)skip.size() >= a.buffer_size) flush();
  }
  flush();
  if (!skipped.empty()) {
    std::string list;
    for (size_t i = 0; i < skipped.size() && i < 10; ++i) list += (i ? ", " : "") + std::to_string(skipped[i]);
    std::cerr << "translate: " << translated << " line(s) translated, " << skipped.size() << " skipped (line "
              << list << (skipped.size() > 10 ? ", ..." : "") << ")\n";
  }
}

void setup(CLI::App& app) {
  auto a = std::make_shared<GenArgs>();
  auto* gen = app.add_subcommand("generate", "Translate a prepared split with beam search and score BLEU (fairseq-generate)");
  gen->require_subcommand(1);
  auto* mt = gen->add_subcommand("mt", "A checkpoint of `normlab train mt`");
  add_common(mt, *a);
  mt->add_option("--split", a->split, "valid | test")->check(CLI::IsMember({"valid", "test"}))->capture_default_str();
  mt->add_option("--batch-size", a->batch_size, "Sentences per batch")->capture_default_str();
  mt->add_option("--results-path", a->results_path,
                 "Hypotheses file (default: generate-SPLIT-CHECKPOINT.txt beside --path, e.g. generate-test-checkpoint_best.txt)");
  mt->add_option("--tokenize", a->tokenize,
                 "BLEU tokenisation: 13a (sacreBLEU's default, for detokenised text), none (pre-tokenised corpora such "
                 "as fairseq's IWSLT14 files, as the papers report), auto (13a for SentencePiece corpora, else none)")
      ->check(CLI::IsMember({"auto", "13a", "none"}))
      ->capture_default_str();
  mt->callback([a] { generate(*a); });

  auto* tr = app.add_subcommand("translate", "Translate lines from standard input with an mt checkpoint (fairseq-interactive)");
  add_common(tr, *a);
  tr->add_option("--buffer-size", a->buffer_size, "Lines read before translating them as one batch")->capture_default_str();
  tr->add_option("--batch-size", a->batch_size, "Sentences per beam-search batch")->capture_default_str();
  tr->callback([a] { translate(*a); });
}

CommandRegistrar reg{{"generate", 25, setup}};
}  // namespace
}  // namespace nlapp
