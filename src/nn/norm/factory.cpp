// The lookups of the norm table (norm_table.cpp): name lists, aliases, option keys, flags, and
// make_norm / make_image_norm. Nothing here names a particular norm.
#include "nn/norm/factory.h"

#include <algorithm>
#include <stdexcept>

namespace nl {

namespace {
std::vector<std::string> names_where(bool (*keep)(const NormDescriptor&)) {
  std::vector<std::string> v;
  for (const auto& e : norm_table())
    if (keep(e)) v.push_back(e.name);
  return v;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The descriptor of a name or alias, or nullptr.
const NormDescriptor* find(const std::string& name) {
  for (const auto& e : norm_table())
    if (e.name == name || contains(e.aliases, name)) return &e;
  return nullptr;
}

// The descriptor of a name or alias; throws the unknown-name error (listing every name) prefixed by `who`.
const NormDescriptor& entry(const std::string& name, const std::string& who) {
  if (const NormDescriptor* e = find(name)) return *e;
  throw std::invalid_argument(who + "unknown norm '" + name + "' (valid: " + join(all_norm_names()) + ")");
}
}  // namespace

const NormDescriptor& norm_descriptor(const std::string& name) { return entry(name, ""); }

const LayerNormVariant& layernorm_variant(const std::string& name) {
  const NormDescriptor& e = entry(name, "");
  if (!e.family)
    throw std::invalid_argument("'" + name + "' is not in the LayerNorm family of Xu et al. 2019 (valid: " +
                                join(layernorm_family_names()) + ")");
  return *e.family;
}

const std::vector<std::string>& layernorm_family_names() {
  static const auto names = names_where([](const NormDescriptor& e) { return e.family.has_value(); });
  return names;
}

const std::vector<std::string>& norm_names() {
  static const auto names = names_where([](const NormDescriptor& e) { return e.features; });
  return names;
}

const std::vector<std::string>& image_norm_names() {
  static const auto names = names_where([](const NormDescriptor& e) { return e.images; });
  return names;
}

const std::vector<std::string>& all_norm_names() {
  static const auto names = names_where([](const NormDescriptor&) { return true; });
  return names;
}

std::string canonical_norm_name(const std::string& name) {
  const NormDescriptor* e = find(name);
  return e ? e->name : name;
}

const std::vector<std::string>& norm_option_keys(const std::string& name) { return entry(name, "").keys; }

bool norm_accepts_option(const std::string& name, const std::string& key) {
  return contains(entry(name, "").keys, key);
}

bool norm_uses_batch_statistics(const std::string& name) { return entry(name, "").batch_statistics; }

std::shared_ptr<Module> make_norm(const std::string& name_in, int64_t d, const nlohmann::json& opts) {
  const NormDescriptor& e = entry(name_in, "make_norm: ");
  if (!opts.is_null() && !opts.is_object())
    throw std::invalid_argument("make_norm(" + e.name + "): options must be a JSON object, got " + opts.dump());
  if (opts.is_object())
    for (auto it = opts.begin(); it != opts.end(); ++it)
      if (!contains(e.keys, it.key()))
        throw std::invalid_argument("make_norm(" + e.name + "): unknown option '" + it.key() + "' (valid: " +
                                    join(e.keys) + ")");
  return e.make(d, NormOptions(e.name, opts));
}

std::shared_ptr<Module> make_image_norm(const std::string& name_in, int64_t c, int64_t groups) {
  const NormDescriptor* e = find(name_in);
  if (!e || !e->images)
    throw std::invalid_argument("image norm '" + canonical_norm_name(name_in) +
                                "' is unknown (valid on images [N, C, H, W]: " + join(image_norm_names()) + ")");
  if (e->make_image) return e->make_image(c, groups);
  return make_norm(e->name, c, contains(e->keys, "groups") ? nlohmann::json{{"groups", groups}} : nlohmann::json());
}

}  // namespace nl
