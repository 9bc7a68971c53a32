// Launchers of every kernel the library ships; the registry (src/registry.cpp)
// is their only caller besides the K == 0 path of the API.
#pragma once

#include <tcgemm/tcgemm.h>

namespace tcgemm::kernels {

// C = beta * C for every batch entry (K == 0 or alpha == 0 in the API; beta == 0
// writes zeros without reading C). Any layout and output dtype.
Status launch_scale_c(const GemmArgs& args);

// Hopper ladder step 5: TMA + mbarrier ring, one producer and two consumer
// warpgroups issuing wgmma m64n256k16. See k05_warp_specialized.cu.
Status launch_k05_warp_specialized(const GemmArgs& args);

}  // namespace tcgemm::kernels
