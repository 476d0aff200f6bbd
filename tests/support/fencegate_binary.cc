#include "tests/support/gateway_instance.h"

namespace fencegate::integration {

std::string FencegateBinary() { return FENCEGATE_BINARY; }

}  // namespace fencegate::integration
