#pragma once

#include <string>
#include <string_view>

#include "lockstore/fence/fence_repair.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

// A fence repair record's value in the store (the sequence is the key, EncodeSequenceKey).
std::string EncodeFenceRepairValue(const FenceRepairRecord& record);
Status DecodeFenceRepairValue(std::string_view value, FenceRepairRecord* record);

}  // namespace fencegate::lockstore
