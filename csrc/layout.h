// Weight layouts. The preshuffled layout is defined here once:
//   plain [N, K] element (n, k)  <->  preshuffled [N/16, K/kp, 16, kp] element [n/16, k/kp, n%16, k%kp]
// with kp = 16 bytes of elements (see preshuffle_kp). The Python utilities call these through
// torch.ops.flygemm.preshuffle / unshuffle.
#pragma once
#include <ATen/ATen.h>

namespace flygemm {

at::Tensor preshuffle(const at::Tensor& w);
at::Tensor unshuffle(const at::Tensor& w);
// The plain [N, K] view of a weight in either layout (copies only when preshuffled).
at::Tensor plain_weight(const at::Tensor& w);

}  // namespace flygemm
