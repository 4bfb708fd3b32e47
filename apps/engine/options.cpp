#include "engine/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
// Plain decimal without exponent for integral bounds; %g otherwise.
std::string num(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) {
    std::ostringstream o;
    o << (long long)v;
    return o.str();
  }
  std::ostringstream o;
  o << v;
  return o.str();
}
bool has_lo(const OptionSpec& s) { return s.lo > -1e307; }
bool has_hi(const OptionSpec& s) { return s.hi < 1e307; }

std::string range_words(const OptionSpec& s, bool whole) {
  std::string what = whole ? "a whole number" : "a finite number";
  if (has_lo(s) && has_hi(s) && !s.lo_open) return what + " from " + num(s.lo) + " to " + num(s.hi);
  std::string out = what;
  if (has_lo(s)) out += (s.lo_open ? " greater than " : " of at least ") + num(s.lo);
  if (has_hi(s)) out += std::string(has_lo(s) ? " and" : "") + " at most " + num(s.hi);
  return out;
}

bool in_range(const OptionSpec& s, double v) {
  if (s.lo_open ? !(v > s.lo) : !(v >= s.lo)) return false;
  return v <= s.hi;
}

std::string shown(const json& v) { return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump(); }

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = d[0];
    d[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return d[b.size()];
}

json check_int(const OptionSpec& s, const json& v, const std::string& where) {
  // Compared as long double, which holds every 64-bit integer exactly: as a double, 2^53 + 1 would round onto
  // a bound of 2^53, pass, and come back as another number.
  long double x;
  if (v.is_number_unsigned())
    x = (long double)v.get<uint64_t>();
  else if (v.is_number_integer())
    x = (long double)v.get<int64_t>();
  else if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() == std::floor(v.get<double>()))
    x = (long double)v.get<double>();
  else
    throw std::invalid_argument(where + " must be " + range_words(s, true) + " (got " + shown(v) + ")");
  const bool low_ok = s.lo_open ? x > (long double)s.lo : x >= (long double)s.lo;
  if (!low_ok || x > (long double)s.hi || x > (long double)INT64_MAX)
    throw std::invalid_argument(where + " must be " + range_words(s, true) + " (got " + shown(v) + ")");
  return (int64_t)x;
}
}  // namespace

OptionSpec option(std::string key, OptKind kind, json def, std::string help, double lo, double hi, bool lo_open) {
  OptionSpec s;
  s.key = std::move(key);
  s.kind = kind;
  s.def = std::move(def);
  s.help = std::move(help);
  s.lo = lo;
  s.hi = hi;
  s.lo_open = lo_open;
  return s;
}

OptionSpec choice_option(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  OptionSpec s = option(std::move(key), OptKind::String, std::move(def), std::move(help));
  s.choices = std::move(choices);
  return s;
}

OptionSpec resumable(OptionSpec s) {
  s.resumable = true;
  return s;
}

std::string flag_of(const std::string& key) {
  std::string f = "--" + key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string closest_name(const std::string& word, const std::vector<std::string>& names, size_t max_distance) {
  std::string best;
  size_t bd = max_distance + 1;
  for (const auto& n : names)
    if (const size_t d = edit_distance(word, n); d < bd) bd = d, best = n;
  return best;
}

std::string describe_range(const OptionSpec& s) {
  switch (s.kind) {
    case OptKind::Int: return range_words(s, true);
    case OptKind::IntList: return "a comma-separated list of " + range_words(s, true) + "s";
    case OptKind::Float: return range_words(s, false);
    case OptKind::Bool: return "true or false";
    case OptKind::String: {
      if (s.choices.empty()) return s.allow_empty ? "any text" : "a non-empty text";
      std::string out = "one of: ";
      for (size_t i = 0; i < s.choices.size(); ++i) out += (i ? ", " : "") + s.choices[i];
      return out;
    }
  }
  return "";
}

json check_value(const OptionSpec& s, const json& v, const std::string& source) {
  const std::string where = (source.empty() ? "" : source + ": ") + flag_of(s.key);
  auto bad = [&] { return std::invalid_argument(where + " must be " + describe_range(s) + " (got " + shown(v) + ")"); };
  if (v.is_null()) {
    if (s.def.is_null()) return v;  // optional setting left unset
    throw bad();
  }
  switch (s.kind) {
    case OptKind::Int: return check_int(s, v, where);
    case OptKind::IntList: {
      if (!v.is_array() || v.empty()) throw bad();
      json out = json::array();
      for (const auto& e : v) out.push_back(check_int(s, e, where));
      return out;
    }
    case OptKind::Float: {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || !in_range(s, v.get<double>())) throw bad();
      return v.get<double>();
    }
    case OptKind::Bool:
      if (!v.is_boolean()) throw bad();
      return v;
    case OptKind::String: {
      if (!v.is_string()) throw bad();
      const auto& t = v.get_ref<const std::string&>();
      if (t.empty() && !s.allow_empty) throw bad();
      if (!s.choices.empty() && std::find(s.choices.begin(), s.choices.end(), t) == s.choices.end()) throw bad();
      return v;
    }
  }
  throw bad();
}

json parse_flag_value(const OptionSpec& s, const std::string& text) {
  auto bad = [&] {
    return std::invalid_argument(flag_of(s.key) + " must be " + describe_range(s) + " (got '" + text + "')");
  };
  auto parse_number = [&](const std::string& t) -> json {
    if (t.empty()) throw bad();
    errno = 0;
    char* end = nullptr;
    if (s.kind != OptKind::Float) {
      long long v = std::strtoll(t.c_str(), &end, 10);
      if (errno == ERANGE || *end) throw bad();
      return (int64_t)v;
    }
    double v = std::strtod(t.c_str(), &end);
    if (*end || errno == ERANGE) throw bad();
    return v;
  };
  // Range errors quote the text as typed ("inf", not JSON's null).
  auto checked = [&](const json& v) {
    try {
      return check_value(s, v, "");
    } catch (const std::invalid_argument&) {
      throw bad();
    }
  };
  switch (s.kind) {
    case OptKind::Int:
    case OptKind::Float: return checked(parse_number(text));
    case OptKind::IntList: {
      json arr = json::array();
      std::stringstream ss(text);
      std::string part;
      while (std::getline(ss, part, ',')) arr.push_back(parse_number(part));
      if (text.empty() || text.back() == ',') throw bad();
      return checked(arr);
    }
    case OptKind::Bool:
      if (text == "true" || text == "1" || text == "on") return true;
      if (text == "false" || text == "0" || text == "off") return false;
      throw bad();
    case OptKind::String: return check_value(s, text, "");
  }
  throw bad();
}

OptionSchema::OptionSchema(std::vector<OptionSpec> specs) { add(specs); }

void OptionSchema::add(const std::vector<OptionSpec>& specs) {
  for (const auto& s : specs) {
    auto it = std::find_if(specs_.begin(), specs_.end(), [&](const OptionSpec& o) { return o.key == s.key; });
    if (it != specs_.end())
      *it = s;
    else
      specs_.push_back(s);
  }
}

void OptionSchema::set_default(const std::string& key, const json& v) {
  for (auto& s : specs_)
    if (s.key == key) {
      s.def = check_value(s, v, "default");
      return;
    }
  throw std::logic_error("OptionSchema::set_default: no setting '" + key + "'");
}

const OptionSpec* OptionSchema::find(const std::string& key) const {
  for (const auto& s : specs_)
    if (s.key == key) return &s;
  return nullptr;
}

json OptionSchema::defaults() const {
  json d = json::object();
  for (const auto& s : specs_) d[s.key] = s.def;
  return d;
}

json OptionSchema::check_config(const json& cfg, const std::string& source) const {
  if (!cfg.is_object()) throw std::invalid_argument(source + ": a config must be a JSON object of settings");
  json out = json::object();
  for (const auto& [k, v] : cfg.items()) {
    if (k == "task" || k == "description") continue;
    const OptionSpec* s = find(k);
    if (!s) {
      std::vector<std::string> keys;
      std::string all;
      for (const auto& o : specs_) {
        keys.push_back(o.key);
        all += (all.empty() ? "" : ", ") + o.key;
      }
      const std::string best = closest_name(k, keys);
      throw std::invalid_argument(source + ": unknown setting '" + k + "'" +
                                  (best.empty() ? "" : " (did you mean '" + best + "'?)") + "; valid settings: " + all);
    }
    out[k] = check_value(*s, v, source);
  }
  return out;
}

void OptionSchema::add_flags(CLI::App* cmd, std::map<std::string, std::string>& raw,
                             const std::vector<std::string>& skip) const {
  for (const auto& s : specs_) {
    if (std::find(skip.begin(), skip.end(), s.key) != skip.end()) continue;
    std::string help = s.help + " [" + describe_range(s) + "; default " +
                       (s.def.is_null() ? std::string("unset") : s.def.is_string() ? s.def.get<std::string>() : s.def.dump()) +
                       "]";
    // Only flags actually given end up in `raw`.
    if (s.kind == OptKind::Bool) {
      // --flag sets true; --flag=false or --no-flag clears it.
      cmd->add_flag_callback(flag_of(s.key), [&raw, k = s.key] { raw[k] = "true"; }, help);
      if (s.key.rfind("no_", 0) != 0)
        cmd->add_flag_callback("--no-" + flag_of(s.key).substr(2), [&raw, k = s.key] { raw[k] = "false"; },
                               "Turn " + flag_of(s.key) + " off");
    } else {
      const char* type = s.kind == OptKind::Int ? "INT" : s.kind == OptKind::Float ? "FLOAT" : s.kind == OptKind::IntList ? "INT,..." : "TEXT";
      cmd->add_option_function<std::string>(flag_of(s.key), [&raw, k = s.key](const std::string& v) { raw[k] = v; }, help)
          ->type_name(type);
    }
  }
}

json OptionSchema::resolve(const json& file_cfg, const std::map<std::string, std::string>& raw) const {
  json out = defaults();
  for (const auto& [k, v] : file_cfg.items()) out[k] = v;
  for (const auto& [k, text] : raw) {
    const OptionSpec* s = find(k);
    if (!s) throw std::logic_error("flag for unknown setting '" + k + "'");
    out[k] = parse_flag_value(*s, text);
  }
  return out;
}

namespace {
std::vector<fs::path> config_roots() {
  std::vector<fs::path> roots;
  if (const char* e = std::getenv("NORMLAB_CONFIG_DIR")) roots.emplace_back(e);
#ifdef NORMLAB_CONFIG_DIR
  roots.emplace_back(NORMLAB_CONFIG_DIR);
#endif
  return roots;
}
}  // namespace

std::vector<std::string> config_names(const std::string& task) {
  std::vector<std::string> names;
  for (const auto& r : config_roots()) {
    std::error_code ec;
    if (!fs::is_directory(r / task, ec)) continue;
    for (const auto& e : fs::directory_iterator(r / task, ec))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
// "<path> is a folder, not a config file; ..." for a --config that names a directory.
[[noreturn]] void throw_config_is_folder(const std::string& path) {
  throw std::runtime_error(path + " is a folder, not a config file; pass --config with a .json file in it, or the "
                                  "name of a shipped config (normlab train TASK --help lists them)");
}
}  // namespace

std::string find_config(const std::string& task, const std::string& name) {
  if (name.empty()) throw std::invalid_argument("--config must name a config or a .json file");
  std::error_code ec;
  if (name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".json")) {
    if (fs::is_directory(name, ec)) throw_config_is_folder(name);
    if (!fs::is_regular_file(name, ec)) throw std::runtime_error("config file '" + name + "' not found");
    return name;
  }
  for (const auto& r : config_roots()) {
    fs::path p = r / task / (name + ".json");
    if (fs::is_regular_file(p)) return p.string();
  }
  if (fs::is_directory(name, ec)) throw_config_is_folder(name);  // a folder named without a '/'
  std::string avail;
  for (const auto& n : config_names(task)) avail += (avail.empty() ? "" : ", ") + n;
  throw std::runtime_error("no config '" + name + "' for task " + task + "; available: " +
                           (avail.empty() ? "none (set NORMLAB_CONFIG_DIR to the apps/configs folder)" : avail) +
                           ", or pass a path to a .json file");
}

json read_json_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw_config_is_folder(path);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read config '" + path + "'");
  try {
    json j = json::parse(in);
    if (!j.is_object()) throw std::runtime_error("config '" + path + "' is not a JSON object");
    return j;
  } catch (const json::exception& e) {  // syntax errors, and numbers too large for a double
    // nlohmann's what() is "[json.exception.parse_error.101] parse error at line L, column C: <what>":
    // keep the position and the description, drop the library's id.
    std::string m = e.what();
    if (m.rfind("[json.exception.", 0) == 0)
      if (auto close = m.find("] "); close != std::string::npos) m = m.substr(close + 2);
    for (const char* lead : {"parse error at ", "parse error: "})
      if (m.rfind(lead, 0) == 0) {
        m = m.substr(std::string(lead).size());
        break;
      }
    throw std::runtime_error(path + " is not valid JSON (" + m + "); fix the file (a config is one JSON object, e.g. "
                                    "{\"lr\": 0.001})");
  }
}

}  // namespace nlapp
