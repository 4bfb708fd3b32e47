// `normlab ln-theory hessian | ssr | merge`: the analysis tools of Ni et al. 2024 (docs/ln-theory.md).
// The reports live in apps/common/ln_theory_*.cpp on top of src/nn/theory/; this file only parses flags.
// Range checks happen in the report functions, whose errors name the flag (main prints "error: ...").
#include <iostream>
#include <memory>

#include "common/command_registry.h"
#include "common/ln_theory.h"

namespace nlapp {
namespace {

struct LnTheoryArgs {
  HessianConfig hessian;
  SsrConfig ssr;
  MergeConfig merge;
};

void setup_hessian(CLI::App* parent, const std::shared_ptr<LnTheoryArgs>& a) {
  auto* c = parent->add_subcommand("hessian", "H(f; x) of LN and LN-G: closed form vs numerical; the Proposition");
  c->add_option("--d", a->hessian.d, "Feature dim [>= 3; numerical H costs 2d passes over d x d rows]")
      ->capture_default_str()
      ->check(CLI::Range((int64_t)3, (int64_t)256).description(""));
  c->add_option("--groups", a->hessian.groups, "Group numbers g to show (default: every divisor of d with d/g >= 2)");
  c->add_option("--eps", a->hessian.eps, "eps of the eps rows (eps = 0 rows are always shown)")->capture_default_str();
  c->add_option("--samples", a->hessian.samples, "Random x per g for the Proposition check")->capture_default_str();
  c->add_option("--seed", a->hessian.seed, "Seed")->capture_default_str();
  c->callback([a]() { std::cout << hessian_report(a->hessian); });
}

void setup_ssr(CLI::App* parent, const std::shared_ptr<LnTheoryArgs>& a) {
  auto* c = parent->add_subcommand("ssr", "SSR/LSSR of the slides' toy sets; LN-Net features below the linear bound");
  c->add_option("--per-class", a->ssr.per_class, "Points per class in each toy set [2..5000]")->capture_default_str();
  c->add_option("--trials", a->ssr.trials, "Random Linear(2,3)+LN draws in the demonstration")->capture_default_str();
  c->add_option("--seed", a->ssr.seed, "Seed")->capture_default_str();
  c->callback([a]() { std::cout << ssr_report(a->ssr); });
}

void setup_merge(CLI::App* parent, const std::shared_ptr<LnTheoryArgs>& a) {
  auto* c = parent->add_subcommand("merge", "Projection-merge width-3 LN-Net on XOR and random binary labellings");
  c->add_option("--instances", a->merge.instances, "Random instances (0: XOR only)")->capture_default_str();
  c->add_option("--m-min", a->merge.m_min, "Smallest instance size m")->capture_default_str();
  c->add_option("--m-max", a->merge.m_max, "Largest instance size m [<= 1000]")->capture_default_str();
  c->add_option("--dim", a->merge.dim, "Input dimension of the random points [1..1000]")->capture_default_str();
  c->add_option("--seed", a->merge.seed, "Seed")->capture_default_str();
  c->callback([a]() { std::cout << merge_report(a->merge); });
}

void setup(CLI::App& app) {
  auto* t = app.add_subcommand("ln-theory", "The nonlinearity of LayerNorm (Ni et al. 2024): Hessian, SSR/LSSR, merge");
  t->require_subcommand(1);
  auto a = std::make_shared<LnTheoryArgs>();
  setup_hessian(t, a);
  setup_ssr(t, a);
  setup_merge(t, a);
}

CommandRegistrar reg{{"ln-theory", 45, setup}};
}  // namespace
}  // namespace nlapp
