// Checkpoint format (safetensors layout): round trip, layout, atomic writes, corrupt-file errors.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "optim/checkpoint.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("normlab_ckpt_test_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  size_t count() const { return std::distance(fs::directory_iterator(path), fs::directory_iterator{}); }
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void spit(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(s.data(), (std::streamsize)s.size());
}
// A file with the given header text and `data_bytes` zero bytes of data.
void write_raw(const fs::path& p, const std::string& header, size_t data_bytes) {
  uint64_t n = header.size();
  std::string s(reinterpret_cast<const char*>(&n), 8);
  s += header;
  s += std::string(data_bytes, '\0');
  spit(p, s);
}

template <typename T> bool same_bits(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<T>(), y = b.to_vector<T>();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}
}  // namespace

TEST_CASE("checkpoint: f32/f64/i64 tensors and JSON metadata round trip bit-exactly", "[checkpoint]") {
  TempDir d;
  manual_seed(1);
  TensorMap t;
  t["model.w"] = Tensor::randn({2, 3});
  t["model.w_t"] = Tensor::randn({3, 2}).transpose(0, 1);  // non-contiguous input
  t["double"] = Tensor::from_vector<double>({1.0 / 3, -0.0, 1e300}, {3});
  t["ids"] = Tensor::from_vector<int64_t>({-1, 0, 1, INT64_MAX}, {4});
  t["scalar"] = Tensor::scalar(2.5);
  t["empty"] = Tensor::empty({0, 5});  // (Tensor::zeros of a 0-size shape trips a core kernel)
  json meta = {{"step", 1234}, {"epoch", 3}, {"best_valid_acc", 0.987},
               {"rng", {{"seed", 7}, {"offset", 99}}}, {"config", {{"norm", "adanorm"}, {"C", 2}}}};
  const fs::path p = d.path / "model.safetensors";
  save_checkpoint(p, t, meta, {{"format", "pt"}});
  Checkpoint c = load_checkpoint(p);
  REQUIRE(c.tensors.size() == t.size());
  for (const auto& [name, x] : t) {
    INFO(name);
    const Tensor& y = c.tensors.at(name);
    CHECK(y.shape() == x.shape());
    CHECK(y.dtype() == x.dtype());
    CHECK(y.is_contiguous());
    if (x.dtype() == DType::Float32) CHECK(same_bits<float>(x, y));
    if (x.dtype() == DType::Float64) CHECK(same_bits<double>(x, y));
    if (x.dtype() == DType::Int64) CHECK(same_bits<int64_t>(x, y));
  }
  CHECK(c.meta == meta);
  CHECK(c.metadata.at("format") == "pt");
  CHECK(json::parse(c.metadata.at("normlab")) == meta);
  CHECK(d.count() == 1);  // no temporary file left behind
}

TEST_CASE("checkpoint: on-disk layout is safetensors", "[checkpoint]") {
  TempDir d;
  const fs::path p = d.path / "a.safetensors";
  save_checkpoint(p, {{"b", Tensor::from_vector<double>({1.5, 2.5}, {2})}, {"a", Tensor::from_vector<float>({1, 2, 3}, {3})}},
                  {{"k", "v"}});
  const std::string s = slurp(p);
  uint64_t n;
  std::memcpy(&n, s.data(), 8);
  CHECK(n % 8 == 0);  // header padded with spaces so the data is 8-byte aligned
  REQUIRE(8 + n <= s.size());
  json h = json::parse(s.substr(8, n));
  CHECK(h["a"]["dtype"] == "F32");
  CHECK(h["a"]["shape"] == json::array({3}));
  CHECK(h["b"]["dtype"] == "F64");
  CHECK(h["__metadata__"]["normlab"] == "{\"k\":\"v\"}");
  const uint64_t a0 = h["a"]["data_offsets"][0], a1 = h["a"]["data_offsets"][1];
  const uint64_t b0 = h["b"]["data_offsets"][0], b1 = h["b"]["data_offsets"][1];
  CHECK(a1 - a0 == 12);
  CHECK(b1 - b0 == 16);
  CHECK(s.size() == 8 + n + 28);
  float f[3];
  std::memcpy(f, s.data() + 8 + n + a0, 12);  // raw little-endian values
  CHECK(f[2] == 3.0f);
  double b[2];
  std::memcpy(b, s.data() + 8 + n + b0, 16);
  CHECK(b[1] == 2.5);
}

TEST_CASE("checkpoint: atomic overwrite, a failed write leaves the old file intact", "[checkpoint]") {
  TempDir d;
  const fs::path p = d.path / "ck.safetensors";
  save_checkpoint(p, {{"x", Tensor::full({4}, 1.0)}}, {{"step", 1}});
  save_checkpoint(p, {{"x", Tensor::full({4}, 2.0)}}, {{"step", 2}});
  CHECK(load_checkpoint(p).meta["step"] == 2);
  CHECK(d.count() == 1);
  const std::string before = slurp(p);

  // Make the next write fail for real: cap the file size this process may write (applies to root too).
  struct rlimit old;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  auto prev = signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  std::string msg;
  try {
    save_checkpoint(p, {{"x", Tensor::zeros({100000})}}, {{"step", 3}});
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  CHECK_THAT(msg, Contains("cannot write '" + p.string() + "'") && Contains("write failed"));
  CHECK(slurp(p) == before);  // old checkpoint untouched
  CHECK(d.count() == 1);      // temporary removed
  CHECK(load_checkpoint(p).meta["step"] == 2);

  CHECK_THROWS_WITH(save_checkpoint(d.path / "no_such_dir" / "x.safetensors", {{"x", Tensor::zeros({1})}}),
                    Contains("cannot create a temporary file"));
  CHECK_THROWS_WITH(save_checkpoint(p, {{"__metadata__", Tensor::zeros({1})}}), Contains("reserved"));
  CHECK_THROWS_WITH(save_checkpoint(p, {{"u", Tensor()}}), Contains("tensor 'u' is undefined"));
}

TEST_CASE("checkpoint: truncated and corrupt files give clear errors", "[checkpoint]") {
  TempDir d;
  const fs::path p = d.path / "bad.safetensors";
  auto err = [&] {
    try {
      load_checkpoint(p);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string prefix = "checkpoint '" + p.string() + "': ";

  CHECK_THROWS_WITH(load_checkpoint(d.path / "missing.safetensors"), Contains("no such file"));
  CHECK_THROWS_WITH(load_checkpoint(d.path), Contains("is a directory"));
  spit(p, "");
  CHECK_THAT(err(), Contains(prefix) && Contains("too short"));

  // Valid file, then cut short in the data and in the header.
  save_checkpoint(p, {{"w", Tensor::ones({10})}, {"b", Tensor::ones({3})}}, {{"step", 1}});
  const std::string good = slurp(p);
  spit(p, good.substr(0, good.size() - 5));
  CHECK_THAT(err(), Contains(prefix) && Contains("truncated"));
  spit(p, good.substr(0, 20));
  CHECK_THAT(err(), Contains("exceeds") && Contains("truncated"));
  spit(p, good + "xyz");
  CHECK_THAT(err(), Contains("trailing garbage"));

  // Garbage length field (e.g. some other file format).
  spit(p, std::string("PK\x03\x04garbage-garbage-garbage", 27));
  CHECK_THAT(err(), Contains("header length") && Contains("not a safetensors"));

  write_raw(p, "{\"w\": {\"dtype\": \"F32\", ", 0);
  CHECK_THAT(err(), Contains("header is not valid JSON"));
  write_raw(p, "[1, 2]  ", 0);
  CHECK_THAT(err(), Contains("not a JSON object"));
  write_raw(p, R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", 4);
  CHECK_THAT(err(), Contains("tensor 'w'") && Contains("dtype 'F16' is not supported"));
  write_raw(p, R"({"w":{"dtype":"Q7","shape":[2],"data_offsets":[0,4]}})", 4);
  CHECK_THAT(err(), Contains("unknown dtype 'Q7'"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
  CHECK_THAT(err(), Contains("shape [3] of F32 needs 12 bytes but data_offsets [0,8] span 8"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[-3],"data_offsets":[0,8]}})", 8);
  CHECK_THAT(err(), Contains("non-negative integers"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
  CHECK_THAT(err(), Contains("overlap"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16);
  CHECK_THAT(err(), Contains("belong to no tensor"));
  write_raw(p, R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 16);
  CHECK_THAT(err(), Contains("end before they begin"));
  write_raw(p, R"({"w":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", 8);
  CHECK_THAT(err(), Contains("exceed the 8 data bytes"));
  write_raw(p, R"({"w":{"shape":[2],"data_offsets":[0,8]}})", 8);
  CHECK_THAT(err(), Contains("missing or non-string 'dtype'"));
  write_raw(p, R"({"__metadata__":{"normlab":3}})", 0);
  CHECK_THAT(err(), Contains("__metadata__ entry 'normlab' is not a string"));
  write_raw(p, R"({"__metadata__":{"normlab":"{oops"}})", 0);
  CHECK_THAT(err(), Contains("metadata entry 'normlab' is not valid JSON"));
}

TEST_CASE("checkpoint: a shape dimension above 2^63 - 1 is rejected even when another dimension is 0",
          "[checkpoint][fuzz]") {
  TempDir d;
  // numel is 0, so the byte count matches the empty span; the huge dim must not reach Tensor as -1.
  write_raw(d.path / "c.st", R"({"t":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}})", 0);
  CHECK_THROWS_WITH(load_checkpoint(d.path / "c.st"),
                    Contains("tensor 't': shape [0,18446744073709551615] has a dimension above 2^63 - 1"));
}

TEST_CASE("checkpoint: read_checkpoint_bytes reads the same bytes from memory", "[checkpoint]") {
  TempDir d;
  TensorMap t;
  t["model.w"] = Tensor::from_vector<float>({1.5f, -2.0f}, {2});
  save_checkpoint(d.path / "a.st", t, json{{"step", 4}});
  Checkpoint ck = read_checkpoint_bytes(slurp(d.path / "a.st"), "in-memory");
  CHECK(ck.tensors.at("model.w").to_vector<float>() == std::vector<float>{1.5f, -2.0f});
  CHECK(ck.meta["step"] == 4);
  CHECK_THROWS_WITH(read_checkpoint_bytes(std::string("\x05\0\0\0\0\0\0\0{}", 10), "in-memory"),
                    Contains("checkpoint 'in-memory': header length 5 exceeds"));
}

TEST_CASE("checkpoint: a JSON number out of double range is a clear header error", "[checkpoint][fuzz]") {
  TempDir d;
  // Found by fuzz_checkpoint: nlohmann::json throws out_of_range (406), not parse_error, for 1e400, and it
  // escaped load_checkpoint as an undocumented exception type.
  write_raw(d.path / "c.st", R"({"t":{"dtype":"F32","shape":[1e400],"data_offsets":[0,0]}})", 0);
  CHECK_THROWS_AS(load_checkpoint(d.path / "c.st"), std::runtime_error);
  CHECK_THROWS_WITH(load_checkpoint(d.path / "c.st"), Contains("header is not valid JSON") && Contains("number overflow"));
  write_raw(d.path / "m.st", R"({"__metadata__":{"normlab":"[1e400]"}})", 0);
  CHECK_THROWS_WITH(load_checkpoint(d.path / "m.st"), Contains("metadata entry 'normlab' is not valid JSON"));
}

TEST_CASE("checkpoint: BF16 tensors round trip bit-exactly as safetensors 'BF16'", "[checkpoint][bf16]") {
  TempDir d;
  // Every special class: zeros, a subnormal, normals, the largest finite, infinities and a quiet NaN.
  const std::vector<uint16_t> bits = {0x0000, 0x8000, 0x0001, 0x3f80, 0xc049, 0x7f7f, 0x7f80, 0xff80, 0x7fc1};
  Tensor b = Tensor::empty({3, 3}, DType::BFloat16);
  std::memcpy(static_cast<void*>(b.data<bfloat16>()), bits.data(), bits.size() * 2);
  const fs::path p = d.path / "bf16.safetensors";
  save_checkpoint(p, {{"w", b}, {"w_t", b.transpose(0, 1)}}, json::object());
  const std::string s = slurp(p);
  uint64_t n;
  std::memcpy(&n, s.data(), 8);
  const json h = json::parse(s.substr(8, n));
  CHECK(h["w"]["dtype"] == "BF16");
  CHECK(h["w"]["data_offsets"][1].get<uint64_t>() - h["w"]["data_offsets"][0].get<uint64_t>() == 18);
  const Checkpoint c = load_checkpoint(p);
  const Tensor& y = c.tensors.at("w");
  REQUIRE(y.dtype() == DType::BFloat16);
  CHECK(y.shape() == Shape{3, 3});
  CHECK(std::memcmp(y.data<bfloat16>(), bits.data(), bits.size() * 2) == 0);
  const Tensor& yt = c.tensors.at("w_t");  // a transposed view is written in row-major order
  CHECK(yt.to_vector<float>()[1] == b.to_vector<float>()[3]);
}
