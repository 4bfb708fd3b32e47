#pragma once
// Minimal reader for .zip archives (PKWARE APPNOTE: end-of-central-directory record, central directory,
// local headers), enough for data sets shipped zipped (NLTK's corpora): members stored (method 0) or
// deflated (method 8, inflated with zlib), CRC-32 checked. No ZIP64, encryption or multi-disk archives.
#include <filesystem>
#include <string>
#include <vector>

namespace nl::data {

/// One member of a zip archive, decompressed.
struct ZipMember {
  std::string name;  ///< path inside the archive, e.g. "dependency_treebank/wsj_0001.dp"
  std::string data;  ///< uncompressed bytes
};

/// Reads every non-directory member of `path`, in central-directory order. Throws std::runtime_error
/// naming the archive (and member) if the file is missing, not a zip, uses an unsupported feature, or a
/// member fails to inflate or its CRC-32 does not match.
std::vector<ZipMember> read_zip(const std::filesystem::path& path);

}  // namespace nl::data
