#include "common/cli_errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "engine/options.h"

namespace nlapp {
namespace {

// Global options that take a value (given before the command).
const std::vector<std::string> kGlobalWithValue = {"--device"};

bool is_global_with_value(const std::string& a) {
  for (const auto& g : kGlobalWithValue)
    if (a == g) return true;
  return false;
}

// A bound as a person writes it: "1", "0.5", "1e-08".
std::string bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// "--opt: Value X not in range A to B" in words; "" when `what` is not such a message.
std::string range_in_words(const std::string& what) {
  static const std::regex re(R"(^(\S+): Value (.*) not in range (\S+) to (\S+)$)");
  std::smatch m;
  if (!std::regex_search(what, m, re)) return "";
  const double lo = std::strtod(m[3].str().c_str(), nullptr), hi = std::strtod(m[4].str().c_str(), nullptr);
  const bool whole = m[3].str().find('.') == std::string::npos && m[4].str().find('.') == std::string::npos;
  const double v = std::strtod(m[2].str().c_str(), nullptr);
  std::string range;
  // CLI11 prints bounds with 6 decimals: CLI::PositiveNumber's lower bound DBL_MIN reads "0.000000", so a
  // value refused although it lies within the printed bounds sits at a bound that only looks like it.
  if ((lo > 0 && lo < 1e-300) || (v >= lo && v <= hi && v == lo)) range = "greater than " + bound(lo);
  else if (hi >= 1e15) range = "of at least " + bound(lo);
  else range = "from " + bound(lo) + " to " + bound(hi);
  const std::string opt = m[1].str();
  return (opt.rfind("-", 0) == 0 ? opt : "--" + opt) + " must be " + (whole ? "a whole number " : "a number ") + range +
         " (got " + m[2].str() + ")";
}

}  // namespace

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
  std::string all;
  for (const auto& c : commands) all += (all.empty() ? "" : ", ") + c;

  // The command: the first word that is neither an option nor a global option's value.
  size_t cmd = args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    if (is_global_with_value(args[i])) {
      ++i;
      continue;
    }
    if (args[i].rfind("-", 0) == 0) continue;
    cmd = i;
    break;
  }
  if (cmd < args.size() && std::find(commands.begin(), commands.end(), args[cmd]) == commands.end()) {
    const std::string best = closest_name(args[cmd], commands);
    return "unknown command '" + args[cmd] + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
           "; commands: " + all + " (normlab --help describes them)";
  }
  if (cmd == args.size() && dynamic_cast<const CLI::RequiredError*>(&e))
    return "normlab needs a command: one of " + all + " (normlab --help describes them)";
  // A global option after the command.
  for (size_t i = cmd + 1; dynamic_cast<const CLI::ExtrasError*>(&e) && i < args.size(); ++i)
    for (const auto& g : kGlobalWithValue)
      if (args[i] == g || args[i].rfind(g + "=", 0) == 0) {
        const std::string value = args[i] == g ? (i + 1 < args.size() ? args[i + 1] : "VALUE") : args[i].substr(g.size() + 1);
        return g + " is a global option: give it before the command, e.g. `normlab " + g + " " + value + " " + args[cmd] +
               " ...`";
      }
  if (dynamic_cast<const CLI::ValidationError*>(&e)) return range_in_words(e.what());
  return "";
}

}  // namespace nlapp
