#pragma once
// sacreBLEU's default "13a" tokenizer: the tokenization of mteval-v13a.pl (NIST, the WMT scoring script)
// as sacreBLEU reimplements it (Post 2018, "A Call for Clarity in Reporting BLEU Scores";
// sacrebleu/tokenizers/tokenizer_13a.py + tokenizer_re.py). In order:
//   1. language-independent part: remove "<skipped>", remove "-\n" (end-of-line hyphenation), "\n" -> " ",
//      then (only if the line has a '&') &quot; -> "  &amp; -> &  &lt; -> <  &gt; -> >   (in that order);
//   2. pad the line with one space on each side and apply, each over the whole line, left to right,
//      non-overlapping (Python re.sub):
//        ([\{-~\[-`\ -&\(-\+\:-@\/])  -> " \1 "   i.e. each of  { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
//        ([^0-9])([\.,])            -> "\1 \2 "  period/comma not preceded by a digit
//        ([\.,])([^0-9])            -> " \1 \2"  period/comma not followed by a digit
//        ([0-9])(-)                 -> "\1 \2 "  dash preceded by a digit
//      (the apostrophe ' and a dash not after a digit are not split; "3.5" and "1,000" stay one token);
//   3. collapse whitespace runs to one space and strip both ends (Python ' '.join(s.split()), i.e. the
//      Unicode whitespace set of nl::data::split_whitespace).
// UTF-8: every rule matches ASCII only, and "not a digit" ([^0-9]) is true of every byte of a multi-byte
// sequence, so multi-byte characters pass through unchanged and the result equals sacreBLEU's, which works
// on code points. Invalid UTF-8 is not checked here (the line readers reject it).
#include <string>
#include <string_view>

namespace nl::metrics {

/// The 13a tokenization of one segment (rules above); returns the tokens joined by single spaces.
/// Never throws (except std::bad_alloc).
std::string tokenize_13a(std::string_view line);

}  // namespace nl::metrics
