// Lookup of the compiled kernel records linked into this library (defined in dispatch.cpp).
#pragma once
#include "launch.h"

namespace flygemm {
// The record named `name` (any arch), or nullptr.
const KernelRecord* find_kernel(const char* name);
}  // namespace flygemm
