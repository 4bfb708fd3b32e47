// `normlab data ...`: prepare data sets once (tokenize, build dictionaries, write token binaries and a
// summary) and score translations with corpus BLEU. The work is done by src/data; this file is the CLI.
#include <iostream>
#include <memory>
#include <stdexcept>

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
  prep->add_option("--vocab-size", opts->vocab_size, "SentencePiece vocabulary size")->capture_default_str();
  auto sep = std::make_shared<bool>(false);
  prep->add_flag("--separate-dict", *sep, "MT: one dictionary/spm model per language (default: joint, as --share-all-embeddings)");
  prep->add_option("--threshold", opts->threshold, "dictionary: keep symbols seen at least this often in train")->capture_default_str();
  prep->add_option("--nwords", opts->nwords, "dictionary: at most this many symbols incl. specials (-1 = all)")->capture_default_str();
  prep->add_option("--padding-factor", opts->padding_factor, "dictionary: pad size to a multiple (fairseq uses 8)")->capture_default_str();
  prep->add_option("--seed", opts->seed, "seed for the RT split and SentencePiece sampling")->capture_default_str();
  prep->add_option("--text", opts->text, "multi30k: raw (cased) | tok (lowercased, Moses-tokenized)")->capture_default_str();
  prep->add_option("--format", opts->format, "sst5: sentences | trees")->capture_default_str();
  prep->add_option("--copy", opts->copy, "rt: kim (Latin-1 copy) | nltk (utf8/ copy)")->capture_default_str();
  prep->add_flag("--json", *json_only, "print summary.json instead of the table");
  prep->callback([opts, task, json_only, sep] {
    opts->joint = !*sep;
    auto summary = nl::data::prepare_task(*task, *opts);
    if (*json_only) std::cout << summary.dump(2) << "\n";
    else std::cout << nl::data::summary_table(summary);
  });

  // ---- data bleu ----
  auto hyp = std::make_shared<std::string>(), ref = std::make_shared<std::string>();
  auto lc = std::make_shared<bool>(false), rm_bpe = std::make_shared<bool>(false);
  auto* bleu = data->add_subcommand("bleu", "Corpus BLEU-4 of tokenized hypotheses against one reference per line");
  bleu->add_option("--hyp", *hyp, "hypothesis file, one sentence per line")->required();
  bleu->add_option("--ref", *ref, "reference file, same number of lines")->required();
  bleu->add_flag("--lc", *lc, "case-insensitive (lowercase both sides)");
  bleu->add_flag("--remove-bpe", *rm_bpe, "remove '@@ ' continuation markers from both sides first");
  bleu->callback([hyp, ref, lc, rm_bpe] {
    nl::data::require_file(*hyp, "--hyp file");
    nl::data::require_file(*ref, "--ref file");
    auto h = nl::data::read_lines(*hyp);
    auto r = nl::data::read_lines(*ref);
    if (h.size() != r.size())
      throw std::runtime_error(*hyp + " has " + std::to_string(h.size()) + " lines but " + *ref + " has " +
                               std::to_string(r.size()) + "; give one hypothesis line per reference line");
    if (*rm_bpe) {
      for (auto& s : h) s = nl::data::remove_bpe(s);
      for (auto& s : r) s = nl::data::remove_bpe(s);
    }
    std::cout << nl::metrics::corpus_bleu(h, r, *lc).to_string() << "\n";
  });
}

nlapp::CommandRegistrar reg{{"data", 50, setup_data}};

}  // namespace
