// The two streams of a prefill pass under two micro-batches (pure; no SimGrid). DeepSeek's prefill
// (deepseek-ai/profile-data, its prefill diagram) runs every layer's work on two CUDA streams, each in a
// fixed order: the compute stream (on the SMs the exchange leaves) runs ATTN(mb1) | SHARED(mb0) | ATTN(mb0) |
// MLP(mb1) | MLP(mb0) | SHARED(mb1), the communication stream COMBINE(mb0) | DISPATCH(mb1) | DISPATCH(mb0) |
// COMBINE(mb1), where ATTN is the attention with its projections and the small kernels, SHARED the shared
// experts, MLP the routed experts. A stage waits for its stream and for what it needs: a micro-batch's
// dispatch its attention, its routed experts its dispatch, its combine its routed experts, its next layer's
// attention its combine and its shared experts. Where the two streams' stages differ in length, a stream
// waits for the other: the pass takes longer than the busier stream (models/engine/README.md, "The
// prefill's two streams").
#pragma once

namespace sim::cost {

// One micro-batch's stages of one layer, seconds.
struct MicroBatchStages {
  double attention = 0;  // the attention, its projections, the small kernels, the fixed costs
  double shared = 0;     // the shared experts (run while the other micro-batch's exchange is in flight)
  double experts = 0;    // the routed experts
  double dispatch = 0;   // the exchange's dispatch (the communication stream)
  double combine = 0;    // the exchange's combine
};

// The time of `layers` layers of two identical micro-batches of stages `s`, from the first stage to the
// last (the pipeline's fill and drain included). REQUIRES: layers >= 1, every stage >= 0.
double two_stream_pass_s(const MicroBatchStages& s, int layers);

}  // namespace sim::cost
