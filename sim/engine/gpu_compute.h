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

  // Runs `work` FLOPs on `host`; returns when they are done, with the busy seconds.
  double run_one(simgrid::s4u::Host* host, double work);
  // The GPUs of a lock-step group (a prefill pass's DP group) run work[i] FLOPs each, together, and the
  // group goes on when the last is done. One execution stands for them all: it runs on the GPU whose work
  // takes longest (its work over its speed) and ends when that GPU would; each GPU's busy time, its own
  // work over its speed, is added to busy_s[i]. One execution per group, not one per GPU: SimGrid 3.32
  // keeps executions in its activity lists (the starting actor's, or the kernel's own when started inside
  // a simcall), and every transfer's end walks such a list, so a pass's executions over hundreds of GPUs
  // cost every transfer of the run a walk over them. Limitation: a speed profile on any GPU other than
  // the slowest would not stretch the pass (none is used; sim/README.md).
  // REQUIRES: the three have the same size.
  void run(const std::vector<simgrid::s4u::Host*>& hosts, const std::vector<double>& work,
           std::vector<double>& busy_s);

  // The same in two steps: start_all() starts the group's execution into `running`; wait_all() returns
  // when it is done and adds the busy seconds.
  void start_all(const std::vector<simgrid::s4u::Host*>& hosts, const std::vector<double>& work,
                 std::vector<simgrid::s4u::ExecPtr>& running);
  void wait_all(std::vector<simgrid::s4u::ExecPtr>& execs, const std::vector<simgrid::s4u::Host*>& hosts,
                const std::vector<double>& work, std::vector<double>& busy_s);

  // A plan its owner may cut short: start() it (the execution runs while the owner waits, on its own
  // condition variable, until the plan's end or a reason to stop early), then finish() it, at its end
  // (waits for the execution if a slower host made it later) or cut now (the execution is cancelled;
  // nobody waits on it, so nothing is thrown). finish() returns the seconds of work done.
  simgrid::s4u::ExecPtr start(simgrid::s4u::Host* host, double work);
  double finish(const simgrid::s4u::ExecPtr& exec, double work, bool cut, double t_start);

 private:
  Recorder& rec_;
  const transport::Transport& t_;
};

}  // namespace sim::engine
