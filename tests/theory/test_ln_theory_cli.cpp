// `normlab ln-theory`: the tables print, and absurd flags give clear errors.
#include <catch2/catch.hpp>

#include "cli_util.h"

TEST_CASE("ln-theory CLI: merge and hessian print their tables", "[lntheory][cli]") {
  auto [rc, out] = nltest::run_cli("ln-theory merge --instances 6 --m-max 8");
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("network accuracy 4/4") != std::string::npos);
  CHECK(out.find("(100%)") != std::string::npos);
  auto [rc2, out2] = nltest::run_cli("ln-theory hessian --d 6 --samples 5");
  INFO(out2);
  CHECK(rc2 == 0);
  CHECK(out2.find("agree") != std::string::npos);
  CHECK(out2.find("The bound held on every sampled x.") != std::string::npos);
}

TEST_CASE("ln-theory CLI: absurd flags are refused with the flag's name", "[lntheory][cli]") {
  auto [rc, out] = nltest::run_cli("ln-theory hessian --d 12 --groups 5");
  CHECK(rc != 0);
  CHECK(out.find("--groups 5 must divide --d 12") != std::string::npos);
  auto [rc2, out2] = nltest::run_cli("ln-theory hessian --d 2");
  CHECK(rc2 != 0);
  CHECK(out2.find("--d") != std::string::npos);
  auto [rc3, out3] = nltest::run_cli("ln-theory merge --m-min 5 --m-max 3");
  CHECK(rc3 != 0);
  CHECK(out3.find("--m-min/--m-max") != std::string::npos);
  auto [rc4, out4] = nltest::run_cli("ln-theory ssr --per-class 1");
  CHECK(rc4 != 0);
  CHECK(out4.find("--per-class") != std::string::npos);
  auto [rc6, out6] = nltest::run_cli("ln-theory ssr --trials 0");
  CHECK(rc6 != 0);
  CHECK(out6.find("--trials must be in [1, 100000]") != std::string::npos);
  auto [rc5, out5] = nltest::run_cli("ln-theory hessian --eps -1");
  CHECK(rc5 != 0);
  CHECK(out5.find("--eps") != std::string::npos);
}
