#include "optim/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <vector>

namespace nl {

static_assert(std::endian::native == std::endian::little,
              "checkpoint I/O writes host bytes and assumes a little-endian host");

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxHeader = 100u << 20;  // the safetensors package's limit

const char* st_dtype(DType t) {
  switch (t) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Int64: return "I64";
    case DType::BFloat16: return "BF16";
  }
  throw std::invalid_argument("checkpoint: invalid DType value " + std::to_string(static_cast<int>(t)));
}

[[noreturn]] void fail_at(const std::string& source, const std::string& m) {
  throw std::runtime_error("checkpoint '" + source + "': " + m);
}

std::string sys_err(const std::string& what) { return what + ": " + std::strerror(errno); }

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(sys_err("write failed"));
    }
    c += w;
    n -= (size_t)w;
  }
}

}  // namespace

void save_checkpoint(const fs::path& path, const TensorMap& tensors, const json& meta,
                     const std::map<std::string, std::string>& extra_metadata) {
  // Header first (validates the inputs before any file is created).
  std::vector<std::pair<const std::string*, Tensor>> blobs;
  json header = json::object();
  uint64_t off = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty()) throw std::invalid_argument("save_checkpoint: empty tensor name");
    if (name == "__metadata__") throw std::invalid_argument("save_checkpoint: '__metadata__' is a reserved name");
    if (!t.defined()) throw std::invalid_argument("save_checkpoint: tensor '" + name + "' is undefined");
    Tensor c = t.to(Device::cpu()).contiguous();
    const uint64_t n = (uint64_t)c.numel() * dtype_size(c.dtype());
    header[name] = {{"dtype", st_dtype(c.dtype())}, {"shape", c.shape()}, {"data_offsets", {off, off + n}}};
    off += n;
    blobs.emplace_back(&name, std::move(c));
  }
  json md = json::object();
  for (const auto& [k, v] : extra_metadata) md[k] = v;
  if (!meta.is_null()) md[kCheckpointMetaKey] = meta.dump();
  if (!md.empty()) header["__metadata__"] = md;
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // keep the data 8-byte aligned, as safetensors does
  uint64_t hlen = h.size();

  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string base(".");  // hidden temporary beside the target: .<name>.tmp.XXXXXX
  base += path.filename().string();
  base += ".tmp.XXXXXX";
  std::string tmpl = (dir / base).string();
  std::vector<char> tmp(tmpl.begin(), tmpl.end());
  tmp.push_back('\0');
  const std::string where = "save_checkpoint: cannot write '" + path.string() + "'";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error(where + ": " + sys_err("cannot create a temporary file in '" + dir.string() + "'"));
  try {
    ::fchmod(fd, 0644);
    write_all(fd, &hlen, 8);
    write_all(fd, h.data(), h.size());
    for (const auto& b : blobs)
      if (const size_t n = (size_t)b.second.numel() * dtype_size(b.second.dtype()); n > 0)
        write_all(fd, b.second.desc().data, n);
    if (::fsync(fd) != 0) throw std::runtime_error(sys_err("fsync failed"));
    if (::close(fd) != 0) {
      fd = -1;
      throw std::runtime_error(sys_err("close failed"));
    }
    fd = -1;
    if (::rename(tmp.data(), path.c_str()) != 0) throw std::runtime_error(sys_err("rename failed"));
  } catch (const std::exception& e) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.data());
    throw std::runtime_error(where + ": " + e.what());
  }
  // Make the rename itself durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

Checkpoint load_checkpoint(const fs::path& path) {
  auto fail = [&](const std::string& m) { fail_at(path.string(), m); };
  if (fs::is_directory(path)) fail("is a directory, expected a checkpoint file");
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(std::string("cannot open: ") + (fs::exists(path) ? std::strerror(errno) : "no such file"));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) fail("read error");
  return read_checkpoint_bytes(bytes, path.string());
}

Checkpoint read_checkpoint_bytes(std::string_view bytes, const std::string& source) {
  auto fail = [&](const std::string& m) { fail_at(source, m); };
  const uint64_t size = bytes.size();
  if (size < 8)
    fail("file is " + std::to_string(size) + " bytes, too short for the 8-byte header length (truncated or empty file)");
  uint64_t hlen;
  std::memcpy(&hlen, bytes.data(), 8);
  if (hlen > kMaxHeader)
    fail("header length " + std::to_string(hlen) + " is implausible (limit " + std::to_string(kMaxHeader) +
         "): not a safetensors/normlab checkpoint or corrupt");
  if (hlen > size - 8)
    fail("header length " + std::to_string(hlen) + " exceeds the " + std::to_string(size - 8) +
         " bytes after the length field (truncated file)");
  if (hlen < 2) fail("header length " + std::to_string(hlen) + " is too small for a JSON object");
  const uint64_t data_len = size - 8 - hlen;
  const char* data = bytes.data() + 8 + hlen;

  json header;
  try {
    header = json::parse(bytes.substr(8, hlen));
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    fail(std::string("header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail("header is not a JSON object");

  Checkpoint ck;
  struct Span {
    uint64_t b, e;
    std::string name;
  };
  std::vector<Span> spans;
  for (const auto& item : header.items()) {
    const std::string& name = item.key();
    const json& v = item.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail("__metadata__ must be an object of strings");
      for (const auto& m : v.items()) {
        if (!m.value().is_string()) fail("__metadata__ entry '" + m.key() + "' is not a string");
        ck.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string tn = "tensor '" + name + "': ";
    if (!v.is_object()) fail(tn + "header entry is not an object");
    if (!v.contains("dtype") || !v["dtype"].is_string()) fail(tn + "missing or non-string 'dtype'");
    if (!v.contains("shape") || !v["shape"].is_array()) fail(tn + "missing or non-array 'shape'");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
      fail(tn + "'data_offsets' must be an array [begin, end]");
    const std::string ds = v["dtype"].get<std::string>();
    DType dt = DType::Float32;
    if (ds == "F32") dt = DType::Float32;
    else if (ds == "F64") dt = DType::Float64;
    else if (ds == "I64") dt = DType::Int64;
    else if (ds == "BF16") dt = DType::BFloat16;
    else {
      static const char* other[] = {"BOOL", "U8", "I8", "I16", "U16", "F16", "I32", "U32", "U64",
                                    "F8_E5M2", "F8_E4M3"};
      bool known = std::find_if(std::begin(other), std::end(other), [&](const char* s) { return ds == s; }) !=
                   std::end(other);
      fail(tn + (known ? "dtype '" + ds + "' is not supported" : "unknown dtype '" + ds + "'") +
           " (normlab reads F32, F64, I64, BF16)");
    }
    Shape shape;
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) fail(tn + "shape " + v["shape"].dump() + " must hold non-negative integers");
      const uint64_t x = d.get<uint64_t>();
      if (x > (uint64_t)std::numeric_limits<int64_t>::max())
        fail(tn + "shape " + v["shape"].dump() + " has a dimension above 2^63 - 1");
      if (x != 0 && numel > std::numeric_limits<uint64_t>::max() / 16 / x) overflow = true;
      numel *= x;
      shape.push_back((int64_t)x);
    }
    const auto& o = v["data_offsets"];
    if (!o[0].is_number_unsigned() || !o[1].is_number_unsigned())
      fail(tn + "data_offsets " + o.dump() + " must be non-negative integers");
    const uint64_t b = o[0].get<uint64_t>(), e = o[1].get<uint64_t>();
    if (b > e) fail(tn + "data_offsets " + o.dump() + " end before they begin");
    if (e > data_len)
      fail(tn + "data_offsets " + o.dump() + " exceed the " + std::to_string(data_len) +
           " data bytes in the file (truncated file?)");
    const uint64_t need = numel * dtype_size(dt);
    if (overflow || need != e - b)
      fail(tn + "shape " + shape_str(shape) + " of " + ds + " needs " + (overflow ? "too many" : std::to_string(need)) +
           " bytes but data_offsets " + o.dump() + " span " + std::to_string(e - b));
    Tensor t = Tensor::empty(shape, dt);
    if (need) std::memcpy(t.desc().data, data + b, need);
    ck.tensors[name] = std::move(t);
    spans.push_back({b, e, name});
  }
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) { return x.b != y.b ? x.b < y.b : x.e < y.e; });
  uint64_t pos = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].b < pos)
      fail("tensors '" + spans[i - 1].name + "' and '" + spans[i].name + "' overlap in the data area");
    if (spans[i].b > pos)
      fail("data bytes [" + std::to_string(pos) + ", " + std::to_string(spans[i].b) + ") belong to no tensor (gap before '" +
           spans[i].name + "')");
    pos = spans[i].e;
  }
  if (pos != data_len)
    fail(std::to_string(data_len - pos) + " bytes after the last tensor belong to no tensor (trailing garbage)");
  if (auto it = ck.metadata.find(kCheckpointMetaKey); it != ck.metadata.end()) {
    try {
      ck.meta = json::parse(it->second);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
      fail(std::string("metadata entry '") + kCheckpointMetaKey + "' is not valid JSON (" + e.what() + ")");
    }
  }
  return ck;
}

}  // namespace nl
