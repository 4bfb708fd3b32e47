#include "engine/trainer_settings.h"

#include <iostream>

#include "backends/mixed_precision.h"

namespace nlapp {
using json = nlohmann::json;

namespace {
constexpr double kBig = 9007199254740992.0;  // 2^53: every such integer is exact in a double and in JSON

}  // namespace

std::vector<OptionSpec> trainer_settings() {
  std::vector<OptionSpec> v = {
      option("seed", OptKind::Int, 1, "Seed of initialisation, batch order and dropout", 0, kBig),
      resumable(option("max_epoch", OptKind::Int, 1, "Epochs to train", 1, 1e6)),
      resumable(option("max_update", OptKind::Int, 0, "Stop after this many updates in total; 0: no limit (fairseq)", 0, kBig)),
      choice_option("optimizer", "adam", {"adam", "adamw", "sgd"}, "Optimizer (torch semantics)"),
      option("lr", OptKind::Float, 1e-3, "Peak learning rate", 0, 10, true),
      option("adam_betas", OptKind::String, "(0.9, 0.999)", "Adam's betas, e.g. '(0.9, 0.98)'"),
      option("adam_eps", OptKind::Float, 1e-8, "Adam's epsilon", 0, 1, true),
      option("weight_decay", OptKind::Float, 0.0, "Weight decay (L2 for adam/sgd, decoupled for adamw)", 0, 10),
      option("momentum", OptKind::Float, 0.0, "SGD momentum", 0, 0.999999),
      choice_option("lr_scheduler", "fixed", {"fixed", "inverse_sqrt", "linear", "cosine", "step"},
             "Learning-rate schedule (inverse_sqrt as fairseq; linear/cosine decay to --max-update; step: "
             "multiply by --lr-gamma every --lr-step-epochs epochs, PyTorch's StepLR)"),
      option("lr_step_epochs", OptKind::Int, 0, "Epochs between lr decays of --lr-scheduler step (Ni et al.: 20)", 0, 1e6),
      option("lr_gamma", OptKind::Float, 0.1, "Decay factor of --lr-scheduler step (PyTorch default 0.1; Ni et al.: 0.5)",
             0, 1, true),
      option("warmup_updates", OptKind::Int, 0, "Linear warm-up updates", 0, kBig),
      option("warmup_init_lr", OptKind::Float, 0.0, "Learning rate at the start of warm-up (at most --lr)", 0, 10),
      option("min_lr", OptKind::Float, 0.0, "Floor of the cosine schedule (at most --lr)", 0, 10),
      option("bf16", OptKind::Bool, false,
             "Mixed precision (fairseq's flag): matrix products on bfloat16 operands with float32 accumulation; "
             "norms, softmax, loss, gradients, optimizer and checkpoints stay float32 (docs/mixed-precision.md)"),
      option("tf32", OptKind::Bool, false,
             "Let float32 matrix products on a GPU use TF32 tensor cores (PyTorch's allow_tf32; off by default; "
             "no effect on the cpu)"),
      option("update_freq", OptKind::Int, 1, "Micro-batches per update (gradient accumulation)", 1, 65536),
      option("clip_norm", OptKind::Float, 0.0, "Clip gradients to this global L2 norm; 0: no clipping", 0, 1e6),
      resumable(option("validate_interval", OptKind::Int, 1, "Validate every N epochs; 0: not at epoch ends", 0, 1e6)),
      resumable(option("validate_interval_updates", OptKind::Int, 0, "Also validate every N updates; 0: off", 0, kBig)),
      resumable(option("save_interval_updates", OptKind::Int, 0,
           "Write checkpoint_{epoch}_{update} (and checkpoint_last) every N updates; 0: at epoch ends only", 0, kBig)),
      resumable(option("save_interval", OptKind::Int, 1,
             "Write the model-only checkpoint{epoch}.safetensors every N epochs (fairseq); 0: none", 0, 1e6)),
      resumable(option("keep_last_epochs", OptKind::Int, 0, "Keep only the newest N checkpoint{epoch}; 0: keep all", 0, 1e6)),
      resumable(option("keep_last", OptKind::Int, 0, "Keep only the newest N checkpoint_{epoch}_{update}; 0: keep all", 0, 1e6)),
      resumable(option("log_interval", OptKind::Int, 50, "Updates between training-loss lines in metrics.jsonl", 1, 1e6)),
      resumable(option("out", OptKind::String, "runs/run",
                     "Run folder: config.json, metrics.jsonl, checkpoints, results.json")),
      resumable(option("no_save", OptKind::Bool, false, "Write no checkpoints (results and metrics still written)")),
      resumable(option("no_test", OptKind::Bool, false, "Skip the final test of the best weights (a short check run)")),
      resumable(option("resume", OptKind::Bool, false, "Continue from OUT/checkpoint_last.safetensors if it exists")),
      resumable(option("overwrite", OptKind::Bool, false,
                       "Replace the run records (results, metrics, checkpoints) already in --out; without it a new "
                       "run into a folder that holds another run is refused")),
      resumable(option("threads", OptKind::Int, 1, "CPU threads for OpenMP loops and OpenBLAS (one pool)", 1, 256)),
      resumable(option("quiet", OptKind::Bool, false, "No progress line")),
      resumable(option("distributed", OptKind::Bool, false,
                       "Data-parallel training over the ranks started by mpirun (docs/distributed.md)")),
      option("sync_batch_stats", OptKind::Bool, false,
             "With --distributed: pool batchnorm/powernorm-v/powernorm statistics over all ranks (SyncBatchNorm); "
             "off by default: PowerNorm's released code never syncs"),
      resumable(option("dist_timeout", OptKind::Float, 600.0,
                       "With --distributed: seconds a rank waits for the others before the whole job aborts; 0: forever",
                       0, 1e6)),
      resumable(option("detect_anomaly", OptKind::Bool, false,
                     "Check every op's output and gradient for NaN/inf and name the first op that made one (slow)")),
  };
  return v;
}

std::string precision_name(const json& s) { return s.value("bf16", false) ? "bfloat16" : "float32"; }

void set_precision(const json& s, nl::Device device) {
  nl::set_allow_tf32(s.value("tf32", false));
  if (!s.value("bf16", false) || !device.is_cpu()) return;
  if (!nl::cpu_bf16_products_available())
    throw std::invalid_argument("--bf16 needs bfloat16 products, and this normlab was built without oneDNN: install "
                                "libdnnl-dev (scripts/install-deps.sh) and rebuild, or drop --bf16");
  static bool said = false;  // one line per process, however many runs it trains
  if (!nl::cpu_bf16_products_native() && !said) {  // throws for a bad NORMLAB_BF16_PRODUCTS, before training
    said = true;
    std::cerr << "normlab: --bf16 products run in float32 on the bfloat16 operands on this CPU (" << nl::cpu_bf16_info()
              << "): the same values, but not faster than float32 here\n";
  }
}

std::string schedule_summary(const json& s) {
  const std::string sn = s.at("lr_scheduler").get<std::string>();
  if (sn == "fixed") return "fixed lr";
  if (sn == "step") {
    std::string g = std::to_string(s.at("lr_gamma").get<double>());
    g.erase(g.find_last_not_of('0') + 1);  // "0.500000" -> "0.5"
    return "lr × " + g + " every " + s.at("lr_step_epochs").dump() + " epochs";
  }
  return sn + " schedule, " + s.at("warmup_updates").dump() + " warm-up updates";
}

std::string resume_settings_mismatch(const OptionSchema& schema, const nlohmann::json& old, const nlohmann::json& now) {
  using nlohmann::json;
  std::string diff;
  bool precision = false;
  for (const auto& sp : schema.specs()) {
    if (sp.resumable) continue;
    const json o = old.contains(sp.key) ? old[sp.key] : sp.def.is_null() ? json("(absent)") : sp.def;
    const json n = now.contains(sp.key) ? now[sp.key] : json("(absent)");
    if (o == n) continue;
    diff += "\n  " + flag_of(sp.key) + ": " + o.dump() + " in the checkpoint, " + n.dump() + " now";
    precision = precision || sp.key == "bf16" || sp.key == "tf32";
  }
  if (diff.empty()) return diff;
  return diff +
         (precision ? "\na run trains in one precision (its float32 checkpoints load in either, but a resume "
                      "continues the same experiment)"
                    : "") +
         "\nrerun with the checkpoint's values, or start a new run in another --out";
}

}  // namespace nlapp
