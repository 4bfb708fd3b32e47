#pragma once
// The Transformer's settings (fairseq's argument names) shared by every task and benchmark that builds
// one (mt, the classifiers, `normlab bench transformer`), and their conversion to nl::TransformerConfig.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.h"
#include "nn/transformer/transformer.h"

namespace nlapp {

/// Specs of d_model, n_heads, ffn_dim, encoder_layers, decoder_layers, dropout, attention_dropout,
/// activation_dropout, activation_fn, normalize_before, norm_placement, encoder_norm, decoder_norm
/// ("auto" = from --norm, see TransformerConfig::decoder_norm), bn_released, allow_decoder_batch_stats, learned_pos,
/// share_all_embeddings, share_decoder_input_output_embed, max_source_positions, max_target_positions.
/// Defaults: the `multi30k` config (pre-norm 256/1024/4 heads, 3 + 3 layers, dropout 0.3).
std::vector<OptionSpec> transformer_settings();

/// The specs of transformer_settings() named in `defaults`, each with that default instead (a task that
/// reads only part of the Transformer's settings, e.g. an encoder-only classifier or a decoder-only LM).
std::vector<OptionSpec> transformer_settings_with(const std::map<std::string, nlohmann::json>& defaults);

/// Specs of max_tokens (fairseq --max-tokens: tokens per batch, padding included; default 4096) and of the
/// synthetic batch `normlab bench` times without data: bench_vocab (default `bench_vocab`, described as
/// `vocab_help`), bench_batch (128 sentences) and bench_len (32 tokens, described as `len_help`).
std::vector<OptionSpec> token_batch_settings(int64_t bench_vocab, const std::string& vocab_help,
                                             const std::string& len_help);

/// The model config for resolved settings, norm options (norm_options(settings)) and vocabulary sizes.
/// A stack whose norm is not --norm's gets norm_options(settings, its norm); powernorm gets
/// warmup_iters = --warmup-updates (0 when absent) unless set (layer_scale_groups = n_heads and the
/// final norms' warmup 1000 come from TransformerConfig). Settings of checkpoints written before
/// encoder_norm / decoder_norm existed read as "auto". Throws std::invalid_argument
/// (TransformerConfig::validate) on an inconsistent combination.
nl::TransformerConfig transformer_config(const nlohmann::json& settings, const nlohmann::json& norm_opts,
                                         int64_t src_vocab, int64_t tgt_vocab);

}  // namespace nlapp
