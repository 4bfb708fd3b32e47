#include "data/text/zip_archive.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "data/text/line_reader.h"

namespace nl::data {

namespace {
uint32_t u32(const std::string& b, std::size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}
uint16_t u16(const std::string& b, std::size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}
}  // namespace

std::vector<ZipMember> read_zip(const std::filesystem::path& path) {
  require_file(path, "zip archive");
  std::ifstream f(path, std::ios::binary);
  std::string buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string name = path.string();
  auto fail = [&](const std::string& why) -> void {
    throw std::runtime_error(name + ": " + why + "; re-download the archive or unzip it and use the files");
  };
  if (buf.size() < 22) fail("too small to be a zip archive");
  // End of central directory: signature 0x06054b50 within the last 22 + 65535 bytes.
  std::size_t eocd = std::string::npos;
  for (std::size_t i = buf.size() - 22 + 1; i-- > 0 && buf.size() - i <= 22 + 65535;)
    if (u32(buf, i) == 0x06054b50u) { eocd = i; break; }
  if (eocd == std::string::npos) fail("no end-of-central-directory record (not a zip archive)");
  const uint16_t entries = u16(buf, eocd + 10);
  std::size_t p = u32(buf, eocd + 16);
  std::vector<ZipMember> out;
  for (uint16_t e = 0; e < entries; ++e) {
    if (p + 46 > buf.size() || u32(buf, p) != 0x02014b50u) fail("corrupt central directory");
    const uint16_t flags = u16(buf, p + 8), method = u16(buf, p + 10);
    const uint32_t crc = u32(buf, p + 16), csize = u32(buf, p + 20), usize = u32(buf, p + 24);
    const uint16_t nlen = u16(buf, p + 28), xlen = u16(buf, p + 30), clen = u16(buf, p + 32);
    const std::size_t local = u32(buf, p + 42);  // size_t: "local + 30" must not wrap in 32 bits
    std::string member = buf.substr(p + 46, nlen);
    p += 46u + nlen + xlen + clen;
    if (!member.empty() && member.back() == '/') continue;  // directory
    if (flags & 1) fail("member " + member + " is encrypted (unsupported)");
    if (csize == 0xFFFFFFFFu || usize == 0xFFFFFFFFu) fail("ZIP64 archives are not supported");
    if (local + 30 > buf.size() || u32(buf, local) != 0x04034b50u) fail("corrupt local header of " + member);
    const std::size_t data = local + 30u + u16(buf, local + 26) + u16(buf, local + 28);
    if (data + csize > buf.size()) fail("member " + member + " is truncated");
    ZipMember m{member, {}};
    if (method == 0) {
      m.data = buf.substr(data, csize);
    } else if (method == 8) {
      // Deflate expands at most 1032:1 (RFC 1951 maximum-length matches); a larger recorded size is corrupt
      // and must not be allocated.
      if (usize > 1032ull * csize + 1024)
        fail("member " + member + " records " + std::to_string(usize) + " uncompressed bytes from only " +
             std::to_string(csize) + " compressed ones (more than deflate can produce): corrupt archive");
      m.data.resize(usize);
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) fail("zlib inflateInit2 failed");
      zs.next_in = reinterpret_cast<Bytef*>(buf.data() + data);
      zs.avail_in = csize;
      zs.next_out = reinterpret_cast<Bytef*>(m.data.data());
      zs.avail_out = usize;
      int rc = inflate(&zs, Z_FINISH);
      inflateEnd(&zs);
      if (rc != Z_STREAM_END || zs.total_out != usize) fail("member " + member + " does not inflate to its recorded size");
    } else {
      fail("member " + member + " uses compression method " + std::to_string(method) + " (only stored/deflate supported)");
    }
    if (crc32(0L, reinterpret_cast<const Bytef*>(m.data.data()), static_cast<uInt>(m.data.size())) != crc)
      fail("CRC-32 mismatch in member " + member);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace nl::data
