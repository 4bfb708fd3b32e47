// libFuzzer target: CoNLL-U (read_conllu, plain or gzip) and Malt-TAB (parse_malt_tab) readers of
// src/data/text/conllu.cpp, and the arc-standard oracle fed with the trees they return (what
// `normlab data prepare ud-ewt|ptb-dep` does). Contract checked: readers throw only std::runtime_error;
// returned heads lie in [0, n] and form a tree (tree_problem is empty; read_conllu's have one root); the
// oracle either throws std::invalid_argument (non-projective) or returns 2n transitions that rebuild the
// same heads.
#include <cstdlib>
#include <stdexcept>

#include "data/text/arc_standard.h"
#include "data/text/conllu.h"
#include "fuzz_input.h"

namespace {
void check_tree(const nl::data::ConlluSentence& s, bool single_root) {
  const auto heads = s.heads();
  const int n = static_cast<int>(heads.size());
  for (int h : heads)
    if (h < 0 || h > n) std::abort();
  if (!nl::data::tree_problem(heads, single_root).empty()) std::abort();
  if (single_root && n > 0 && nl::data::is_projective(heads)) {  // a projective one-root tree never gets it stuck
    auto t = nl::data::arc_standard_oracle(heads, s.deprels());
    if (t.size() != 2 * heads.size()) std::abort();
  }
  try {
    auto t = nl::data::arc_standard_oracle(heads, s.deprels());
    if (t.size() != 2 * heads.size()) std::abort();
    if (nl::data::apply_transitions(n, t).heads != heads) std::abort();
  } catch (const std::invalid_argument&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static nlfuzz::ScratchFile file("conllu");
  try {
    for (const auto& s : nl::data::read_conllu(file.write(nlfuzz::file_bytes(data, size)))) check_tree(s, true);
  } catch (const std::runtime_error&) {
  }
  try {
    for (const auto& s : nl::data::parse_malt_tab(std::string(reinterpret_cast<const char*>(data), size), "fuzz"))
      check_tree(s, false);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
