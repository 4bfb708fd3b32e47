#include "version.h"

namespace nl {
const char* version() { return "0.1.0"; }
}  // namespace nl
