#pragma once
// How much memory an autograd graph keeps alive: for the memory benchmark (bench/autograd_memory.cpp)
// and tests that check intermediate results are freed when backward does not need them.
#include <cstddef>
#include <map>
#include <string>

#include "autograd/variable.h"

namespace nl {

/// Bytes of tensor storage that the graph behind `root` keeps alive: the sum over the unique Storages
/// reachable from root's producer node through the graph's edges — every node's saved tensors and the
/// data of the leaves whose gradients the graph accumulates (its leaf sinks keep them alive). Before
/// the lean graph (bench/README.md) nodes held their inputs' data too; the measurement then counted it. A storage shared by
/// several tensors (views, a tensor saved by two nodes) counts once. `root`'s own data is not counted
/// unless a node saved it. Returns 0 for a leaf or an undefined variable. Call it after the forward
/// and before backward (backward without retain_graph frees the saved tensors).
/// Relies on the op-implementer rule of tape.h: every tensor a backward closure captures is also
/// listed in the node's saved tensors.
size_t graph_held_bytes(const Variable& root);

/// graph_held_bytes split by who keeps each storage: the op name of the first node (depth-first from
/// root) that saved it ("MatMul", "LayerNorm", ...), or "parameters and leaves" for leaf data. The
/// values sum to graph_held_bytes(root). For `normlab bench`'s memory breakdown.
std::map<std::string, size_t> graph_held_bytes_by_op(const Variable& root);

}  // namespace nl
