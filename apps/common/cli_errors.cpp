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

// Every subcommand of `app` (CLI11's get_subcommands() without a filter lists only those on the command line).
std::vector<const CLI::App*> children(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// Long option names of `app` without their dashes ("max-epoch"), help excluded.
std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> v;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames())
      if (n != "help") v.push_back(n);
  return v;
}

// An option `app` does not have, among the words after its command path, in words: the nearest of its
// options, or those whose names hold the word's stem ("epochs" -> --max-epoch, --keep-last-epochs), or the
// sibling command that has it (`train cls --label-smoothing` -> an option of `normlab train mt`); and where its
// options are listed. "" when every option is known (then the extra word is a value or a positional).
std::string unknown_option(const CLI::App& app, const std::string& path, const std::vector<std::string>& words) {
  const std::vector<std::string> names = long_names(app);
  for (const std::string& w : words) {
    if (w.rfind("--", 0) != 0 || w.size() < 3) continue;
    const std::string name = w.substr(2, w.find('=') == std::string::npos ? std::string::npos : w.find('=') - 2);
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string hint;
    // At most a third of the word's letters changed (up to 3): "foo" is not a typo of "--d".
    if (const std::string best = closest_name(name, names, std::min<size_t>(3, name.size() / 3)); !best.empty()) {
      hint = " (did you mean --" + best + "?)";
    } else {
      std::string stem = name;
      if (stem.size() > 4 && stem.back() == 's') stem.pop_back();
      std::vector<std::string> holding;
      for (const auto& n : names)
        if (stem.size() >= 3 && n.find(stem) != std::string::npos) holding.push_back("--" + n);
      if (!holding.empty() && holding.size() <= 4) {
        hint = "; its options with '" + stem + "' in their name:";
        for (size_t i = 0; i < holding.size(); ++i) hint += (i ? ", " : " ") + holding[i];
      } else if (const CLI::App* parent = app.get_parent()) {
        for (const CLI::App* sib : children(*parent)) {
          const auto sn = long_names(*sib);
          if (sib != &app && std::find(sn.begin(), sn.end(), name) != sn.end()) {
            const std::string sib_path = path.substr(0, path.rfind(' ') + 1) + sib->get_name();
            hint = "; --" + name + " is an option of `" + sib_path + "`, not of `" + path + "`";
            break;
          }
        }
      }
    }
    return "unknown option --" + name + " for `" + path + "`" + hint + "; `" + path + " --help` lists its options";
  }
  return "";
}

}  // namespace

std::string explain_parse_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : children(app)) commands.push_back(sub->get_name());
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
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && cmd < args.size()) {
    // The deepest command the words name (normlab train cls ...), then the first option it does not have.
    const CLI::App* at = &app;
    std::string path = "normlab";
    size_t i = cmd;
    for (; i < args.size() && args[i].rfind("-", 0) != 0; ++i) {
      const CLI::App* sub = nullptr;
      for (const CLI::App* c : children(*at))
        if (c->get_name() == args[i]) sub = c;
      if (!sub) break;
      at = sub;
      path += " " + args[i];
    }
    if (const std::string u = unknown_option(*at, path, std::vector<std::string>(args.begin() + (long)i, args.end()));
        !u.empty())
      return u;
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e)) return range_in_words(e.what());
  return "";
}

}  // namespace nlapp
