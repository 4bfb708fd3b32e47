#include "data/metrics/attachment.h"

#include <stdexcept>

namespace nl::metrics {

bool is_punctuation(const std::string& upos, const std::string& xpos) {
  if (upos == "PUNCT") return true;
  return xpos == "``" || xpos == "''" || xpos == "." || xpos == "," || xpos == ":";
}

double AttachmentCounts::uas() const { return scored ? 100.0 * static_cast<double>(head_correct) / static_cast<double>(scored) : 0.0; }
double AttachmentCounts::las() const { return scored ? 100.0 * static_cast<double>(both_correct) / static_cast<double>(scored) : 0.0; }

AttachmentCounts& AttachmentCounts::operator+=(const AttachmentCounts& o) {
  scored += o.scored;
  head_correct += o.head_correct;
  both_correct += o.both_correct;
  return *this;
}

AttachmentCounts attachment_counts(const std::vector<int>& gh, const std::vector<std::string>& gl,
                                   const std::vector<int>& ph, const std::vector<std::string>& pl,
                                   const std::vector<std::string>& upos, const std::vector<std::string>& xpos) {
  const std::size_t n = gh.size();
  if (gl.size() != n || ph.size() != n || pl.size() != n || upos.size() != n || xpos.size() != n)
    throw std::invalid_argument("attachment_counts: gold/predicted heads, labels and tags must all have " +
                                std::to_string(n) + " entries (one per word)");
  AttachmentCounts c;
  for (std::size_t i = 0; i < n; ++i) {
    if (is_punctuation(upos[i], xpos[i])) continue;
    ++c.scored;
    if (gh[i] == ph[i]) {
      ++c.head_correct;
      if (gl[i] == pl[i]) ++c.both_correct;
    }
  }
  return c;
}

}  // namespace nl::metrics
