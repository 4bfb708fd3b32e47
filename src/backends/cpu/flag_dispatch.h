#pragma once
// Two run-time flags turned into template arguments, so that a kernel's inner loop is compiled once per
// combination without its branches (and vectorises).
#include <type_traits>

namespace nl::cpu {

/// Calls f(std::bool_constant<a>{}, std::bool_constant<b>{}) and returns what it returns.
template <typename F>
decltype(auto) with_flags(bool a, bool b, F&& f) {
  if (a) {
    if (b) return f(std::true_type{}, std::true_type{});
    return f(std::true_type{}, std::false_type{});
  }
  if (b) return f(std::false_type{}, std::true_type{});
  return f(std::false_type{}, std::false_type{});
}

}  // namespace nl::cpu
