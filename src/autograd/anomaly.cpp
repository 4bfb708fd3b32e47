#include "autograd/anomaly.h"

#include <atomic>
#include <cmath>

namespace nl {

namespace {
std::atomic<bool> g_anomaly{false};
}

void set_anomaly_detection(bool on) { g_anomaly.store(on); }
bool anomaly_detection() { return g_anomaly.load(std::memory_order_relaxed); }

void check_finite(const Tensor& t, const std::string& op, const char* what) {
  if (!anomaly_detection() || !t.defined() || !is_floating(t.dtype())) return;
  const std::vector<double> v = t.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw AnomalyError("detect_anomaly: the " + std::string(what) + " of op '" + op + "' (shape " +
                         shape_str(t.shape()) + ") holds " + (std::isnan(v[i]) ? "nan" : "inf") + " at element " +
                         std::to_string(i) + ": this is the first op that produced a non-finite value");
}

}  // namespace nl
