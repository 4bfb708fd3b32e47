#pragma once
// UTF-8 helpers for the text readers: validation (RFC 3629), BOM stripping, Latin-1 decoding,
// whitespace splitting, code-point splitting and a simple lowercase used by case-insensitive BLEU.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nl::data {

/// Byte offset of the first invalid UTF-8 sequence in `s` (overlong forms, surrogates and code points
/// above U+10FFFF are invalid, as in RFC 3629), or std::string_view::npos when `s` is valid.
std::size_t find_invalid_utf8(std::string_view s);

/// True when `s` is valid UTF-8.
inline bool is_valid_utf8(std::string_view s) { return find_invalid_utf8(s) == std::string_view::npos; }

/// Throws std::runtime_error naming `file`, 1-based `line` and the byte column when `s` is not valid
/// UTF-8, with the fix (convert the file to UTF-8, e.g. from Latin-1 with iconv).
void check_utf8(std::string_view s, const std::string& file, std::size_t line);

/// Removes a leading UTF-8 byte-order mark (EF BB BF); returns whether one was removed.
bool strip_utf8_bom(std::string& s);

/// Decodes ISO-8859-1 bytes to UTF-8 (every byte is one code point U+0000..U+00FF).
std::string latin1_to_utf8(std::string_view s);

/// Splits on runs of whitespace as Python's str.split() does (ASCII whitespace, U+00A0 no-break space,
/// U+0085, U+2000..U+200A, U+3000, ...; the set fairseq and sacreBLEU use); no empty tokens.
std::vector<std::string> split_whitespace(std::string_view s);

/// Collapses runs of whitespace (as split_whitespace) to one ASCII space and trims both ends.
std::string normalize_whitespace(std::string_view s);

/// `s` without its trailing whitespace (the set of split_whitespace), as Python's str.rstrip().
std::string_view rstrip_whitespace(std::string_view s);

/// Splits valid UTF-8 into its code points, each returned as a UTF-8 string.
/// Throws std::runtime_error on invalid UTF-8.
std::vector<std::string> utf8_code_points(std::string_view s);

/// Lowercases ASCII, Latin-1, Latin Extended-A, Latin Extended Additional (Vietnamese), Greek and basic
/// Cyrillic capitals (Unicode simple lowercase mapping for those blocks); other bytes pass unchanged.
std::string utf8_lower(std::string_view s);

}  // namespace nl::data
