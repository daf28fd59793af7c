// GPU work as SimGrid executions: a plan's FLOPs (cost/compute_plan.h) run on the GPU's host, whose
// speed is the hardware's gpu_flops, so the time a GPU computes, and what a speed profile or a failure
// of its host does to it, come from SimGrid. Busy time is the work done over the host's speed.
#pragma once

#include <simgrid/s4u/Exec.hpp>
#include <vector>

#include "sim/engine/recorder.h"
#include "sim/transport/transport.h"

namespace sim::engine {

class GpuCompute {
 public:
  // REQUIRES: `rec` and `t` outlive this (`t`: its transfers in flight count into peak activities).
  GpuCompute(Recorder& rec, const transport::Transport& t) : rec_(rec), t_(t) {}

  // Runs work[i] FLOPs on hosts[i], all at once, and returns when all are done; adds each host's busy
  // seconds to busy_s[i]. REQUIRES: the three have the same size.
  void run(const std::vector<simgrid::s4u::Host*>& hosts, const std::vector<double>& work,
           std::vector<double>& busy_s);

  // A plan that another actor may cut short: start() it into `plan` (set before the execution starts,
  // so an actor that runs during the start sees it), then wait() with the same work; cut(plan), from any
  // actor, ends the wait at once. wait() returns the seconds of work done and whether the plan ran to its
  // end.
  void start(simgrid::s4u::Host* host, double work, simgrid::s4u::ExecPtr& plan);
  struct Done {
    double busy_s = 0;
    bool complete = true;
  };
  Done wait(const simgrid::s4u::ExecPtr& exec, double work, double t_start);
  static void cut(const simgrid::s4u::ExecPtr& exec);

 private:
  Recorder& rec_;
  const transport::Transport& t_;
};

}  // namespace sim::engine
