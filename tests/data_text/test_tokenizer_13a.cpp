#include <catch2/catch.hpp>

#include "data/metrics/tokenizer_13a.h"
#include "data/text/utf8.h"

using nl::metrics::tokenize_13a;

// Expected strings derived by hand from the rules of mteval-v13a.pl as sacreBLEU's tokenizer_13a.py applies
// them (src/data/metrics/tokenizer_13a.h lists them).

TEST_CASE("13a: language-independent part (skipped tags / end-of-line hyphens / newlines / entities)", "[data][bleu][13a]") {
  CHECK(tokenize_13a("a<skipped>b") == "ab");
  CHECK(tokenize_13a("inter-\nnational trade") == "international trade");
  CHECK(tokenize_13a("line one\nline two") == "line one line two");
  CHECK(tokenize_13a("a &quot;b&quot; &amp; c &lt;d&gt;") == "a \" b \" & c < d >");
  // replaced in the order quot, amp, lt, gt, once each: "&amp;quot;" becomes "&quot;" and stays
  CHECK(tokenize_13a("&amp;quot;") == "& quot ;");
  CHECK(tokenize_13a("&amp;lt;") == "<");
  CHECK(tokenize_13a("&QUOT;") == "& QUOT ;");  // entities are case-sensitive
}

TEST_CASE("13a: punctuation padding", "[data][bleu][13a]") {
  CHECK(tokenize_13a("He said: \"hi\"; ok?") == "He said : \" hi \" ; ok ?");
  CHECK(tokenize_13a("(a)[b]{c}<d>") == "( a ) [ b ] { c } < d >");
  CHECK(tokenize_13a("a/b|c\\d~e^f_g`h@i#j$k%l*m+n=o!p&q") ==
        "a / b | c \\ d ~ e ^ f _ g ` h @ i # j $ k % l * m + n = o ! p & q");
  // the apostrophe and a dash not after a digit are not in the class
  CHECK(tokenize_13a("don't well-known e-mail") == "don't well-known e-mail");
  CHECK(tokenize_13a("  a \t b  ") == "a b");
  CHECK(tokenize_13a("") == "");
}

TEST_CASE("13a: periods and commas next to digits and dashes after digits", "[data][bleu][13a]") {
  CHECK(tokenize_13a("3.5 and 1,000 and 1,000.50") == "3.5 and 1,000 and 1,000.50");
  CHECK(tokenize_13a("The end.") == "The end .");
  CHECK(tokenize_13a("a,b") == "a , b");
  CHECK(tokenize_13a("costs 3.") == "costs 3 .");  // followed by the padding space, not a digit
  CHECK(tokenize_13a(".5") == ". 5");              // preceded by the padding space, not a digit
  CHECK(tokenize_13a("U.S.A.") == "U . S . A .");
  CHECK(tokenize_13a("wait...") == "wait . . .");
  CHECK(tokenize_13a("1990-2000, pages 5-7") == "1990 - 2000 , pages 5 - 7");
  CHECK(tokenize_13a("-5 a-5 5--6") == "-5 a-5 5 - -6");
}

TEST_CASE("13a: UTF-8 text passes through (rules are ASCII and non-ASCII is never a digit)", "[data][bleu][13a]") {
  CHECK(tokenize_13a("Müller's café — naïve") == "Müller's café — naïve");
  CHECK(tokenize_13a("Grüße, Welt.") == "Grüße , Welt .");
  CHECK(tokenize_13a("Ölpreis: 3,5 €.") == "Ölpreis : 3,5 € .");
  // Arabic-Indic digits are not [0-9] (Python's class is ASCII), so the period is split off
  CHECK(tokenize_13a("\u0663.\u0665") == "\u0663 . \u0665");
  // U+00A0 no-break space separates tokens (Python's str.split), U+3000 too
  CHECK(tokenize_13a("a\u00A0b\u3000c") == "a b c");
  CHECK(tokenize_13a("producţia de zahăr alb;") == "producţia de zahăr alb ;");
  CHECK(nl::data::is_valid_utf8(tokenize_13a("日本語、テスト。「引用」.")));
  CHECK(tokenize_13a("日本語、テスト。「引用」.") == "日本語、テスト。「引用」 .");
}

TEST_CASE("rstrip_whitespace strips Python's whitespace set from the right only", "[data][utf8]") {
  using nl::data::rstrip_whitespace;
  CHECK(rstrip_whitespace("  a b \t\n") == "  a b");
  CHECK(rstrip_whitespace("a\u00A0\u3000") == "a");
  CHECK(rstrip_whitespace("caf\u00E9 ") == "caf\u00E9");  // é's bytes C3 A9 are not whitespace
  CHECK(rstrip_whitespace(" \n") == "");
  CHECK(rstrip_whitespace("") == "");
}
