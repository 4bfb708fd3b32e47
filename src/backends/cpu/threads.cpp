#include "backends/cpu/threads.h"

#include <cblas.h>
#include <omp.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace nl {
namespace {
int& current() {
  static int n = [] {
    int t = 1;
    if (const char* e = std::getenv("OMP_NUM_THREADS")) t = std::max(1, std::atoi(e));
    omp_set_num_threads(t);
    openblas_set_num_threads(t);
    return t;
  }();
  return n;
}
}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads: need at least 1 thread, got " + std::to_string(n));
  current() = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int get_num_threads() { return current(); }

}  // namespace nl
