#pragma once
#include <ATen/ATen.h>

#include "problem.h"

namespace flygemm {
// Writes the contract's result into `out` ([M, N], any row stride). The CPU oracle.
void cpu_gemm(const OpArgs& args, const Problem& p, at::Tensor& out);
}  // namespace flygemm
