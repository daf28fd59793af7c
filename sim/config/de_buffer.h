// Where a request's KV waits for its decode between its storage read or prefill and the decode batch
// (scenario field cluster.de_buffer; sim/README.md, "The DE buffer in DRAM or in HBM"). Pure.
//   kDram  DualPath's DE buffer in the decode node's DRAM: KV lands there, goes on to the PE by RDMA,
//          and is copied H2D into the DE GPU's HBM when the decode starts (PAPER.md §4.2);
//   kHbm   GPUDirect RDMA into the DE GPU's HBM (the paper's §4.1 alternative): KV lands in the HBM the
//          decode will use, held from the first byte that lands there until the turn ends; no H2D.
#pragma once

namespace sim::config {

enum class DeBuffer { kDram, kHbm };

constexpr const char* name(DeBuffer b) {
  return b == DeBuffer::kDram ? "dram" : "hbm";
}

}  // namespace sim::config
