// Writes small, valid, synthetic seed inputs for every fuzz target: make_seeds OUT_DIR creates
// OUT_DIR/<target>/seed-N files (<target> = the harness name without "fuzz_"). Inputs of the harnesses
// that use file_bytes() start with the mode byte (0: as is, 1: gzip-compressed by the harness).
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "data/text/token_dataset.h"
#include "optim/checkpoint.h"

namespace fs = std::filesystem;

namespace {
fs::path g_out;

void seed(const std::string& target, const std::string& bytes) {
  static std::map<std::string, int> count;
  fs::create_directories(g_out / target);
  std::ofstream f(g_out / target / ("seed-" + std::to_string(count[target]++)), std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
// Both modes of a file_bytes() harness: plain ("\0" + text) and gzip-by-the-harness ("\1" + text).
void text_seed(const std::string& target, const std::string& text) {
  seed(target, std::string(1, '\0') + text);
  seed(target, std::string(1, '\1') + text);
}
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}
std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)}; }
std::string le16(uint32_t v) { return {char(v & 0xff), char(v >> 8 & 0xff)}; }
std::string le32(uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }

// A zip archive with one stored and one deflated member (PKWARE APPNOTE 4.3).
std::string tiny_zip() {
  struct M { std::string name, data; int method; };
  std::vector<M> ms = {{"dir/a.dp", "The\tDT\t2\nman\tNN\t0\n", 0}, {"dir/b.dp", "Hello\tUH\t0\n\nHello\tUH\t0\n", 8}};
  std::string out, central;
  for (const auto& m : ms) {
    std::string comp = m.data;
    if (m.method == 8) {
      z_stream zs{};
      deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      comp.assign(deflateBound(&zs, m.data.size()), '\0');
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(m.data.data()));
      zs.avail_in = static_cast<uInt>(m.data.size());
      zs.next_out = reinterpret_cast<Bytef*>(comp.data());
      zs.avail_out = static_cast<uInt>(comp.size());
      deflate(&zs, Z_FINISH);
      comp.resize(zs.total_out);
      deflateEnd(&zs);
    }
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(m.data.data()), static_cast<uInt>(m.data.size()));
    const uint32_t local = static_cast<uint32_t>(out.size());
    std::string common = le16(20) + le16(0) + le16(static_cast<uint32_t>(m.method)) + le16(0) + le16(0) + le32(crc) +
                         le32(static_cast<uint32_t>(comp.size())) + le32(static_cast<uint32_t>(m.data.size())) +
                         le16(static_cast<uint32_t>(m.name.size())) + le16(0);
    out += le32(0x04034b50) + common + m.name + comp;
    central += le32(0x02014b50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(local) + m.name;
  }
  const uint32_t cd = static_cast<uint32_t>(out.size());
  out += central;
  out += le32(0x06054b50) + le16(0) + le16(0) + le16(static_cast<uint32_t>(ms.size())) +
         le16(static_cast<uint32_t>(ms.size())) + le32(static_cast<uint32_t>(central.size())) + le32(cd) + le16(0);
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds OUT_DIR\n";
    return 2;
  }
  g_out = argv[1];
  const fs::path tmp = g_out / "tmp";
  fs::create_directories(tmp);

  // IDX: images 2×3×3 and labels, both modes; a file gzip-compressed outside the harness too.
  std::string img = be32(0x803) + be32(2) + be32(3) + be32(3);
  for (int i = 0; i < 18; ++i) img += char(i * 14);
  const std::string lab = be32(0x801) + be32(3) + std::string("\x01\x07\x09", 3);
  text_seed("idx", img);
  text_seed("idx", lab);

  // Checkpoints written by save_checkpoint: several dtypes and shapes with metadata, and an empty one.
  nl::TensorMap tensors;
  tensors["model.w"] = nl::Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  tensors["model.b"] = nl::Tensor::from_vector<double>({0.5}, {});
  tensors["optim.step"] = nl::Tensor::from_vector<int64_t>({7, 8}, {2});
  nl::save_checkpoint(tmp / "a.safetensors", tensors, {{"step", 3}, {"norm", "layernorm"}}, {{"format", "pt"}});
  seed("checkpoint", slurp(tmp / "a.safetensors"));
  nl::save_checkpoint(tmp / "b.safetensors", {});
  seed("checkpoint", slurp(tmp / "b.safetensors"));

  text_seed("dictionary", "the 120\n, 80\nhouse 7\nmadeupword0000 0\n<unk> 1 #fairseq:overwrite\n");

  nl::data::write_token_dataset(tmp / "t.bin", {{4, 5, 2}, {}, {6, 2}}, 8);
  seed("token_dataset", slurp(tmp / "t.bin"));
  nl::data::write_token_dataset(tmp / "e.bin", {}, 0);
  seed("token_dataset", slurp(tmp / "e.bin"));

  text_seed("conllu",
            "# sent_id = s1\n# text = Don't go.\n1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
            "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
            "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n3.1\tx\tx\tX\tX\t_\t_\t_\t3:dep\t_\n"
            "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n");
  text_seed("conllu", "Pierre\tNNP\t2\tNMOD\nVinken\tNNP\t0\tROOT\n\nYes\tUH\t0\n");

  text_seed("lines", "\xEF\xBB\xBFhello w\xC3\xB6rld\r\nsecond  line\xC2\xA0with nbsp\nbp@@ e tok@@ ens\nno final newline");
  text_seed("lines", "one\ntwo\nthree\n\xCE\x91\xCE\xB2\xCE\xB3 \xE2\x80\x89 \xF0\x9F\x98\x80\n");

  text_seed("sst", "3 ||| The Rock is destined .\n0 ||| Bad .\n");
  text_seed("sst", "(3 (2 The) (3 (2 Rock) (4 (2 is) (3 good))))\n(1 (1 bad) (2 .))\n");

  seed("zip", tiny_zip());

  fs::remove_all(tmp);
  return 0;
}
