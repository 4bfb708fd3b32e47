// `normlab data ...`: prepare data sets once (tokenize, build dictionaries, write token binaries and a
// summary) and score translations with corpus BLEU. The work is done by src/data; this file is the CLI.
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/command_registry.h"
#include "data/metrics/bleu.h"
#include "data/text/corpus_summary.h"
#include "data/text/line_reader.h"
#include "data/text/parallel_text.h"
#include "data/text/prepare.h"

namespace {

void setup_data(CLI::App& app) {
  auto* data = app.add_subcommand("data", "Prepare text data sets (token ids, dictionaries) and score BLEU");
  data->require_subcommand(1);

  // ---- data prepare <task> ----
  auto opts = std::make_shared<nl::data::PrepareOptions>();
  auto task = std::make_shared<std::string>();
  auto json_only = std::make_shared<bool>(false);
  std::string tasks;
  for (const auto& n : nl::data::prepare_task_names()) tasks += (tasks.empty() ? "" : ", ") + n;
  auto* prep = data->add_subcommand("prepare", "Tokenize a data set once and write token binaries + dict.txt + summary.json");
  prep->add_option("task", *task, "one of: " + tasks)->required();
  prep->add_option("--data", opts->data_dir, "the data set's folder (e.g. shared/data/multi30k)")->required();
  prep->add_option("--out", opts->out_dir, "output folder (created if missing)")->required();
  prep->add_option("--direction", opts->direction, "MT: src-tgt, e.g. en-de, de-en (default: task's usual direction)");
  prep->add_option("--subword", opts->subword, "MT: bpe | unigram (SentencePiece) | none (default: bpe for multi30k, none for iwslt14/15)");
  prep->add_option("--vocab-size", opts->vocab_size, "SentencePiece vocabulary size")
      ->check(CLI::Range(8, 1000000))
      ->capture_default_str();
  auto sep = std::make_shared<bool>(false);
  prep->add_flag("--separate-dict", *sep, "MT: one dictionary/spm model per language (default: joint, as --share-all-embeddings)");
  prep->add_option("--threshold", opts->threshold, "dictionary: keep symbols seen at least this often in train")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  prep->add_option("--nwords", opts->nwords, "dictionary: at most this many symbols incl. specials (-1 = all)")
      ->check(CLI::Validator(
          [](const std::string& v) {  // the 4 specials (<s>, <pad>, </s>, <unk>) and at least one word
            try {
              const long long n = std::stoll(v);
              return n == -1 || n >= 5 ? std::string() : "must be -1 (all) or at least 5 (the 4 specials and a word)";
            } catch (const std::exception&) { return std::string("must be a whole number"); }
          },
          "-1 or >= 5"))
      ->capture_default_str();
  prep->add_option("--padding-factor", opts->padding_factor, "dictionary: pad size to a multiple (fairseq uses 8)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  prep->add_option("--seed", opts->seed, "seed for the RT split and SentencePiece sampling")
      ->check(CLI::Validator(
          [](const std::string& v) {  // CLI11 would wrap "-1" into an unsigned seed
            return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos ? std::string()
                                                                                      : "must be a whole number >= 0";
          },
          "a whole number >= 0"))
      ->capture_default_str();
  prep->add_option("--text", opts->text, "multi30k: raw (cased) | tok (lowercased, Moses-tokenized)")->capture_default_str();
  prep->add_option("--format", opts->format, "sst5: sentences | trees")->capture_default_str();
  prep->add_option("--copy", opts->copy, "rt: kim (Latin-1 copy) | nltk (utf8/ copy)")->capture_default_str();
  prep->add_flag("--json", *json_only, "print summary.json instead of the table");
  prep->callback([opts, task, json_only, sep] {
    opts->joint = !*sep;
    auto summary = nl::data::prepare_task(*task, *opts);
    if (*json_only) std::cout << summary.dump(2) << "\n";
    else std::cout << nl::data::summary_table(summary);
    // Tasks whose training reads the raw files itself (with its own dictionary): say so, so that nobody
    // trains from this folder and wonders why nothing in it is used.
    static const std::map<std::string, std::pair<std::string, std::string>> kReadRaw = {  // command, file in --data
        {"ptb-lm", {"train lm --config ptb", ""}}, {"tinyshakespeare", {"train lm --config tinyshakespeare", ""}},
        {"ud-ewt", {"train parse --config ud-ewt", ""}}, {"ptb-dep", {"train parse --config ptb-dep", "dependency_treebank.zip"}}};
    if (auto it = kReadRaw.find(*task); it != kReadRaw.end())
      std::cerr << "note: `normlab " << it->second.first << " --data "
                << (it->second.second.empty() ? opts->data_dir : opts->data_dir / it->second.second).string()
                << "` reads the raw files itself and builds its own dictionary; this folder is for inspection and "
                   "other tools (docs/data.md)\n";
  });

  // ---- data bleu ----
  auto hyp = std::make_shared<std::string>();
  auto refs = std::make_shared<std::vector<std::string>>();
  auto tok = std::make_shared<std::string>("13a"), smooth = std::make_shared<std::string>("exp");
  auto lc = std::make_shared<bool>(false), rm_bpe = std::make_shared<bool>(false);
  auto* bleu = data->add_subcommand(
      "bleu", "Corpus BLEU-4 as sacreBLEU computes it; prints the score and sacreBLEU's signature");
  bleu->add_option("--hyp", *hyp, "hypothesis file, one sentence per line")->required();
  bleu->add_option("--ref", *refs, "reference file(s), each with one line per hypothesis line")->required();
  bleu->add_option("--tokenize", *tok,
                   "13a: mteval-v13a tokenization of raw (detokenized) text, sacreBLEU's default; none: split on "
                   "whitespace only, for text that is already tokenized, e.g. fairseq's IWSLT14 BPE files (with "
                   "--remove-bpe) are scored with none, as the papers report")
      ->check(CLI::IsMember({"13a", "none"}))
      ->capture_default_str();
  bleu->add_option("--smooth", *smooth,
                   "exp: an n-gram order without matches gets precision 100/(2^k * total), sacreBLEU's default; "
                   "none: BLEU is 0 then, as multi-bleu.perl")
      ->check(CLI::IsMember({"exp", "none"}))
      ->capture_default_str();
  bleu->add_flag("--lc", *lc, "case-insensitive (lowercase both sides)");
  bleu->add_flag("--remove-bpe", *rm_bpe, "remove '@@ ' continuation markers from both sides first");
  bleu->callback([hyp, refs, tok, smooth, lc, rm_bpe] {
    nl::data::require_file(*hyp, "--hyp file");
    for (const auto& r : *refs) nl::data::require_file(r, "--ref file");
    auto h = nl::data::read_lines(*hyp);
    std::vector<std::vector<std::string>> streams;
    for (const auto& path : *refs) {
      auto r = nl::data::read_lines(path);
      if (h.size() != r.size())
        throw std::runtime_error(*hyp + " has " + std::to_string(h.size()) + " lines but " + path + " has " +
                                 std::to_string(r.size()) + "; give one hypothesis line per reference line");
      streams.push_back(std::move(r));
    }
    if (*rm_bpe) {
      for (auto& s : h) s = nl::data::remove_bpe(s);
      for (auto& stream : streams)
        for (auto& s : stream) s = nl::data::remove_bpe(s);
    }
    nl::metrics::BleuOptions opts;
    opts.tokenize = nl::metrics::parse_bleu_tokenize(*tok);
    opts.smooth = nl::metrics::parse_bleu_smooth(*smooth);
    opts.lowercase = *lc;
    std::cout << nl::metrics::corpus_bleu_multi(h, streams, opts).to_string() << "\n"
              << "signature: " << nl::metrics::bleu_signature(opts, static_cast<int>(streams.size())) << "\n";
  });
}

nlapp::CommandRegistrar reg{{"data", 50, setup_data}};

}  // namespace
