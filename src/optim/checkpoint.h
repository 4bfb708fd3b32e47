#pragma once
// Checkpoints in the safetensors layout (docs/checkpoint-format.md):
//   [8 bytes: N, little-endian u64][N bytes: JSON header, space-padded][raw little-endian tensor bytes]
// The header maps each tensor name to {"dtype": "F32"|"F64"|"I64"|"BF16", "shape": [...],
// "data_offsets": [begin, end]} (offsets relative to the first byte after the header) and holds
// "__metadata__": {string: string}. normlab stores its own JSON (model config, optimizer and
// schedule state, step, epoch, RNG state, best metric, ...) serialised as a string under the
// metadata key "normlab". Files are readable by the `safetensors` Python package (safe_open /
// safetensors.torch.load_file / safetensors.numpy.load_file).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/tensor.h"

namespace nl {

/// Name → tensor, the currency of checkpoints (also used by optimizers' save_state).
using TensorMap = std::map<std::string, Tensor>;

/// What load_checkpoint returns.
struct Checkpoint {
  TensorMap tensors;  ///< contiguous CPU tensors (float32, float64, int64 or bfloat16)
  nlohmann::json meta;  ///< the parsed "normlab" metadata entry; null when the file has none
  std::map<std::string, std::string> metadata;  ///< the raw "__metadata__" map (includes "normlab")
};

/// The metadata key under which save_checkpoint stores `meta` (as a JSON string).
inline constexpr const char* kCheckpointMetaKey = "normlab";

/// Writes `tensors` (any device/strides; copied to contiguous CPU bytes) and `meta` to `path`
/// atomically: the bytes go to a temporary file in the same directory, which is fsync'ed and then
/// renamed over `path` (and the directory fsync'ed), so `path` holds either the old or the new
/// checkpoint, never a partial one; on failure the temporary file is removed.
/// `extra_metadata` adds further string entries to "__metadata__" (for other tools).
/// Throws std::invalid_argument for an undefined tensor, an empty name or the reserved name
/// "__metadata__"; std::runtime_error naming the path and the OS error when writing fails.
void save_checkpoint(const std::filesystem::path& path, const TensorMap& tensors,
                     const nlohmann::json& meta = nullptr,
                     const std::map<std::string, std::string>& extra_metadata = {});

/// Reads and fully validates a checkpoint: file length vs the 8-byte header length, header JSON
/// syntax and structure, dtype names, shape × dtype size = byte span, offsets inside the data area,
/// non-overlapping and covering it exactly (as the safetensors package requires), metadata values
/// being strings and the "normlab" entry being valid JSON. Throws std::runtime_error whose message
/// starts with "checkpoint '<path>': " and names the problem (e.g. "truncated", the tensor name).
Checkpoint load_checkpoint(const std::filesystem::path& path);

/// Same as load_checkpoint, on the file's bytes already in memory (`source` names them in errors:
/// "checkpoint '<source>': ..."). Used by load_checkpoint and by the fuzz target.
Checkpoint read_checkpoint_bytes(std::string_view bytes, const std::string& source);

/// Checkpoint averaging (fairseq average_checkpoints) lives in optim/average_checkpoints.h.

}  // namespace nl
