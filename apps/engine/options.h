#pragma once
// Settings of a run: one schema per task (and one for the trainer) gives every setting's key, type,
// default, allowed range and help. From it come the command-line flags (key `max_update` ↔ flag
// `--max-update`, fairseq's names), the validation of JSON config files and flags, and the error
// messages, so no name list or range is written twice.
//
// Resolution order: schema defaults, then the JSON config file (--config), then the flags given.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace nlapp {

/// What kind of value a setting holds.
enum class OptKind { Int, Float, String, Bool, IntList };

/// One setting. Ranges are inclusive unless `lo_open`; floats must also be finite.
struct OptionSpec {
  std::string key;            ///< JSON key, snake_case; the flag is "--" + key with '_' → '-'
  OptKind kind = OptKind::Int;
  nlohmann::json def;         ///< default value (null: unset, e.g. an optional path)
  std::string help;
  double lo = -1e308, hi = 1e308;  ///< allowed range for Int/Float/IntList elements
  bool lo_open = false;       ///< lo itself is not allowed (e.g. lr > 0)
  std::vector<std::string> choices;  ///< String: the allowed values (empty: any non-empty string)
  bool allow_empty = false;   ///< String: "" is a valid value
  /// May differ on --resume: the new value is applied and recorded (run length, threads, output
  /// verbosity). Any other setting that differs makes the resume an error naming it.
  bool resumable = false;
};

/// A numeric, text or bool setting with an inclusive range [lo, hi] (lo excluded when `lo_open`).
OptionSpec option(std::string key, OptKind kind, nlohmann::json def, std::string help, double lo = -1e308,
                  double hi = 1e308, bool lo_open = false);
/// A text setting restricted to `choices`.
OptionSpec choice_option(std::string key, std::string def, std::vector<std::string> choices, std::string help);
/// `s` marked resumable (may differ on --resume).
OptionSpec resumable(OptionSpec s);

/// The flag of a key: "max_update" → "--max-update".
std::string flag_of(const std::string& key);

/// The name in `names` nearest to `word` by edit distance (Levenshtein), or "" when none is within
/// `max_distance` edits: what "did you mean ...?" suggests.
std::string closest_name(const std::string& word, const std::vector<std::string>& names, size_t max_distance = 3);

/// The allowed values of a setting in words, e.g. "a whole number from 1 to 256" or
/// "a finite number greater than 0" or "one of: fused, composite".
std::string describe_range(const OptionSpec& s);

/// Checks `v` against `s` and returns it in canonical JSON form (ints as integers). Throws
/// std::invalid_argument "<source>: --lr must be a finite number greater than 0 (got inf)".
nlohmann::json check_value(const OptionSpec& s, const nlohmann::json& v, const std::string& source);

/// Parses a command-line string for `s` (strictly: "12x", "1e999" and "" are errors), then checks it.
nlohmann::json parse_flag_value(const OptionSpec& s, const std::string& text);

/// A set of specs with unique keys.
class OptionSchema {
 public:
  OptionSchema() = default;
  explicit OptionSchema(std::vector<OptionSpec> specs);
  /// Adds specs; a key already present is replaced (a task may change a trainer default).
  void add(const std::vector<OptionSpec>& specs);
  /// Changes the default of an existing key (throws std::logic_error if absent).
  void set_default(const std::string& key, const nlohmann::json& v);
  const OptionSpec* find(const std::string& key) const;
  const std::vector<OptionSpec>& specs() const { return specs_; }
  /// Every key's default, as a JSON object.
  nlohmann::json defaults() const;

  /// Validates a config object read from `source` (a file name): unknown keys (the error lists the
  /// valid ones and the closest match), wrong types and out-of-range values are errors. The keys
  /// "task" and "description" are allowed and ignored.
  nlohmann::json check_config(const nlohmann::json& cfg, const std::string& source) const;

  /// Adds one CLI11 option per spec to `cmd`, storing the raw text into `raw` (parsed later by
  /// resolve(), so that errors come in words from check_value, not from CLI11).
  void add_flags(CLI::App* cmd, std::map<std::string, std::string>& raw,
                 const std::vector<std::string>& skip = {}) const;

  /// defaults ← `file_cfg` (already checked) ← the flags present in `raw`. Returns the settings.
  nlohmann::json resolve(const nlohmann::json& file_cfg, const std::map<std::string, std::string>& raw) const;

 private:
  std::vector<OptionSpec> specs_;
};

/// Finds a config: a path (contains '/' or ends in ".json") is used as it is; a bare NAME means
/// apps/configs/<task>/NAME.json. Throws std::invalid_argument on an empty name, std::runtime_error
/// "<path> is a folder, not a config file" for a directory, "config file '<path>' not found" for a
/// missing path, or listing the available names when NAME is absent.
std::string find_config(const std::string& task, const std::string& name);
/// Reads and parses a JSON object from `path`. Throws std::runtime_error "<path> is a folder, not a
/// config file", "cannot read config", "<path> is not valid JSON (line L, column C: <what>)" (without
/// the library's exception id), or "is not a JSON object".
nlohmann::json read_json_file(const std::string& path);
/// Names of the configs shipped for `task` (apps/configs/<task>/*.json without ".json"), sorted.
std::vector<std::string> config_names(const std::string& task);

}  // namespace nlapp
