#pragma once
#include <ATen/ATen.h>

#include "launch.h"

namespace flygemm {
// Loads a kernel's module on a device once (never during graph capture).
void ensure_loaded(const KernelRecord& k, int device);
// Loads every kernel for the device's arch (flygemm.warmup).
void warmup_device(const at::Device& device);
}  // namespace flygemm
