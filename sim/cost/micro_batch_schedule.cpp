#include "sim/cost/micro_batch_schedule.h"

#include <algorithm>

#include "sim/core/check.h"

namespace sim::cost {

namespace {

// One in-order stream: a stage starts when the stream is free and its inputs are ready.
struct Stream {
  double free = 0;
  double run(double ready, double length) {
    free = std::max(free, ready) + length;
    return free;
  }
};

}  // namespace

double two_stream_pass_s(const MicroBatchStages& s, int layers) {
  SIM_CHECK(layers >= 1, "a pass of {} layers", layers);
  SIM_CHECK(s.attention >= 0 && s.shared >= 0 && s.experts >= 0 && s.dispatch >= 0 && s.combine >= 0,
            "negative stage");
  Stream compute, comm;
  // The end of each micro-batch's last stage of each kind, of the layer being built (or the one before).
  double attention[2] = {0, 0}, experts[2] = {0, 0}, combine[2] = {0, 0}, shared[2] = {0, 0};
  for (int l = 0; l < layers; ++l) {
    // COMBINE(mb0) of the layer before: after its routed experts.
    if (l > 0) combine[0] = comm.run(experts[0], s.combine);
    // ATTN(mb1): after its combine and its shared experts of the layer before.
    attention[1] = compute.run(std::max(combine[1], shared[1]), s.attention);
    // SHARED(mb0) of the layer before: after that layer's attention of mb0.
    if (l > 0) shared[0] = compute.run(attention[0], s.shared);
    const double dispatch1 = comm.run(attention[1], s.dispatch);
    // ATTN(mb0): after its combine and its shared experts of the layer before.
    attention[0] = compute.run(std::max(combine[0], shared[0]), s.attention);
    const double dispatch0 = comm.run(attention[0], s.dispatch);
    experts[1] = compute.run(dispatch1, s.experts);
    experts[0] = compute.run(dispatch0, s.experts);
    combine[1] = comm.run(experts[1], s.combine);
    shared[1] = compute.run(attention[1], s.shared);
  }
  // The last layer's COMBINE(mb0) and SHARED(mb0).
  comm.run(experts[0], s.combine);
  compute.run(attention[0], s.shared);
  return std::max(compute.free, comm.free);
}

}  // namespace sim::cost
