// Learning-rate schedules against hand-computed values, their JSON round trip and factory errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "optim/schedule.h"

using namespace nl;
using Catch::Matchers::Contains;
using nlohmann::json;

TEST_CASE("schedule: constant", "[optim][schedule]") {
  auto s = make_schedule("constant", {{"lr", 0.01}});
  CHECK(s->lr(0) == 0.01);
  CHECK(s->lr(123456) == 0.01);
  CHECK(s->name() == "constant");
}

TEST_CASE("schedule: inverse_sqrt follows fairseq at and around the warmup boundary", "[optim][schedule]") {
  // lr = 0.5, warmup_updates = 4, warmup_init_lr = 0.1: lr_step = (0.5 − 0.1)/4 = 0.1;
  // decay_factor = 0.5·√4 = 1, so after warmup lr = 1/√step.
  auto s = make_schedule("inverse_sqrt", {{"lr", 0.5}, {"warmup_updates", 4}, {"warmup_init_lr", 0.1}});
  CHECK(s->lr(0) == Approx(0.1));
  CHECK(s->lr(1) == Approx(0.2));
  CHECK(s->lr(3) == Approx(0.4));  // last warmup step
  CHECK(s->lr(4) == Approx(0.5));  // boundary: decay_factor/√warmup = lr exactly
  CHECK(s->lr(5) == Approx(1.0 / std::sqrt(5.0)));
  CHECK(s->lr(9) == Approx(1.0 / 3.0));
  CHECK(s->lr(16) == Approx(0.25));
  CHECK(s->lr(100) == Approx(0.1));
  // fairseq's default warmup_init_lr is 0 when warmup_updates > 0.
  auto d = make_schedule("inverse_sqrt", {{"lr", 0.5}, {"warmup_updates", 4}});
  CHECK(d->lr(0) == 0.0);
  CHECK(d->lr(2) == Approx(0.25));
  // The lr is continuous at the boundary and decreasing after it.
  auto big = make_schedule("inverse_sqrt", {{"lr", 1e-3}, {"warmup_updates", 4000}, {"warmup_init_lr", 1e-7}});
  CHECK(big->lr(3999) == Approx(1e-7 + 3999 * (1e-3 - 1e-7) / 4000));
  CHECK(big->lr(4000) == Approx(1e-3));
  CHECK(big->lr(4001) < big->lr(4000));
  CHECK(big->lr(16000) == Approx(5e-4));
}

TEST_CASE("schedule: linear warmup + linear decay to 0", "[optim][schedule]") {
  auto s = make_schedule("linear", {{"lr", 1.0}, {"warmup_steps", 10}, {"total_steps", 110}});
  CHECK(s->lr(0) == 0.0);
  CHECK(s->lr(5) == Approx(0.5));
  CHECK(s->lr(10) == Approx(1.0));
  CHECK(s->lr(60) == Approx(0.5));
  CHECK(s->lr(109) == Approx(0.01));
  CHECK(s->lr(110) == 0.0);
  CHECK(s->lr(500) == 0.0);
  auto nw = make_schedule("linear", {{"lr", 2.0}, {"total_steps", 4}});
  CHECK(nw->lr(0) == 2.0);
  CHECK(nw->lr(1) == Approx(1.5));
}

TEST_CASE("schedule: linear warmup + cosine decay to min_lr", "[optim][schedule]") {
  auto s = make_schedule("cosine", {{"lr", 1.0}, {"warmup_steps", 10}, {"total_steps", 110}, {"min_lr", 0.1}});
  CHECK(s->lr(0) == 0.0);
  CHECK(s->lr(5) == Approx(0.5));
  CHECK(s->lr(10) == Approx(1.0));
  CHECK(s->lr(35) == Approx(0.1 + 0.9 * 0.5 * (1 + std::sqrt(0.5))));  // a quarter of the way: cos(π/4)
  CHECK(s->lr(60) == Approx(0.55));                                    // half way: the mean of lr and min_lr
  CHECK(s->lr(110) == Approx(0.1));
  CHECK(s->lr(1000) == Approx(0.1));
}

TEST_CASE("schedule: step halves the lr every step_size updates (PyTorch StepLR)", "[optim][schedule]") {
  auto s = make_schedule("step", {{"lr", 0.8}, {"step_size", 20}, {"gamma", 0.5}});
  CHECK(s->lr(0) == 0.8);
  CHECK(s->lr(19) == 0.8);
  CHECK(s->lr(20) == 0.4);
  CHECK(s->lr(39) == 0.4);
  CHECK(s->lr(40) == 0.2);
  CHECK(s->lr(149) == Approx(0.8 / 128));  // 150 epochs of 1 update: halved 7 times
  CHECK(make_schedule("step", {{"lr", 1.0}, {"step_size", 3}})->lr(3) == Approx(0.1));  // default gamma
}

TEST_CASE("schedule: JSON round trip rebuilds the same schedule", "[optim][schedule]") {
  std::vector<json> cfgs = {
      {{"name", "constant"}, {"lr", 0.3}},
      {{"name", "inverse_sqrt"}, {"lr", 5e-4}, {"warmup_updates", 100}, {"warmup_init_lr", 1e-7}},
      {{"name", "linear"}, {"lr", 1e-3}, {"warmup_steps", 7}, {"total_steps", 50}, {"warmup_init_lr", 0.0}},
      {{"name", "cosine"}, {"lr", 1e-3}, {"warmup_steps", 7}, {"total_steps", 50}, {"min_lr", 1e-5},
       {"warmup_init_lr", 1e-6}},
      {{"name", "step"}, {"lr", 1e-3}, {"step_size", 7}, {"gamma", 0.5}}};
  for (const auto& c : cfgs) {
    auto s = schedule_from_json(c);
    CHECK(s->to_json() == c);
    auto r = schedule_from_json(json::parse(s->to_json().dump()));
    for (int64_t t : {0, 1, 6, 7, 8, 49, 50, 51, 1000}) CHECK(r->lr(t) == s->lr(t));
  }
}

TEST_CASE("schedule: factory errors are clear", "[optim][schedule]") {
  CHECK_THROWS_WITH(make_schedule("plateau", {{"lr", 1}}),
                    Contains("unknown schedule 'plateau'") && Contains("constant, inverse_sqrt, linear, cosine, step"));
  CHECK_THROWS_WITH(make_schedule("step", {{"lr", 1}, {"step_size", 0}}), Contains("step_size must be >= 1"));
  CHECK_THROWS_WITH(make_schedule("step", {{"lr", 1}, {"step_size", 5}, {"gamma", 0}}), Contains("gamma must be"));
  CHECK_THROWS_WITH(make_schedule("constant", json::object()), Contains("missing required key 'lr'"));
  CHECK_THROWS_WITH(make_schedule("inverse_sqrt", {{"lr", 1}, {"warmup", 10}}),
                    Contains("unknown key 'warmup'") && Contains("warmup_updates"));
  CHECK_THROWS_WITH(make_schedule("linear", {{"lr", "fast"}, {"total_steps", 10}}), Contains("'lr' must be a number"));
  CHECK_THROWS_WITH(make_schedule("linear", {{"lr", 1}, {"total_steps", 2.5}}), Contains("must be an integer"));
  CHECK_THROWS_WITH(make_schedule("cosine", {{"lr", 1}, {"warmup_steps", 10}, {"total_steps", 10}}),
                    Contains("total_steps (10) must be greater than warmup_steps (10)"));
  CHECK_THROWS_WITH(make_schedule("inverse_sqrt", {{"lr", 1}, {"warmup_updates", 0}}), Contains("warmup_updates must be >= 1"));
  CHECK_THROWS_WITH(make_schedule("constant", {{"lr", -1}}), Contains("lr must be a finite number >= 0"));
  CHECK_THROWS_WITH(make_schedule("constant", {{"lr", 1}, {"name", "cosine"}}), Contains("names another schedule"));
  CHECK_THROWS_WITH(schedule_from_json({{"lr", 1}}), Contains("needs a string \"name\""));
  CHECK_THROWS_WITH(make_schedule("constant", {{"lr", 1}})->lr(-1), Contains("step must be >= 0"));
}

TEST_CASE("schedule: min_lr and warmup_init_lr above lr are refused, naming the flags", "[optim][schedule]") {
  // cosine with min_lr 5 > lr 0.001 rose to 2.5; linear warm-up from 10 started at 10
  CHECK_THROWS_WITH(make_schedule("cosine", {{"lr", 0.001}, {"total_steps", 10}, {"min_lr", 5}}),
                    Contains("schedule 'cosine': min_lr (--min-lr) 5 is above lr (--lr) 0.001") &&
                        Contains("set --min-lr to at most --lr"));
  for (const char* name : {"linear", "cosine"})
    CHECK_THROWS_WITH(make_schedule(name, {{"lr", 0.001}, {"warmup_steps", 2}, {"total_steps", 10}, {"warmup_init_lr", 10}}),
                      Contains("warmup_init_lr (--warmup-init-lr) 10 is above lr (--lr) 0.001") &&
                          Contains("set --warmup-init-lr to at most --lr"));
  CHECK_THROWS_WITH(make_schedule("inverse_sqrt", {{"lr", 0.001}, {"warmup_updates", 2}, {"warmup_init_lr", 0.01}}),
                    Contains("--warmup-init-lr"));
  // equal to lr is a flat warm-up or no decay: allowed
  CHECK(make_schedule("cosine", {{"lr", 0.5}, {"total_steps", 10}, {"min_lr", 0.5}, {"warmup_init_lr", 0.5}})->lr(5) ==
        Approx(0.5));
}
