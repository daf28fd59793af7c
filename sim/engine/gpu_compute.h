// GPU work as SimGrid executions: a plan's FLOPs (cost/compute_plan.h) run on the GPU's host, whose
// speed is the hardware's gpu_flops, so the time a GPU computes, and what a speed profile or a failure
// of its host does to it, come from SimGrid. Busy time is the work done over the host's speed.
#pragma once

#include <simgrid/s4u/Exec.hpp>
#include <unordered_map>
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

  // A run stopped before its turns were done (control/run_control.h: a time limit, a signal, a stall, a
  // stop rule): every execution in flight is cancelled at once, and every one started afterwards is empty,
  // so that no GPU work outlives the stop (one execution may stand for 1e12 simulated seconds of an
  // engine's plan; the run then ends when its last transfers do). Their waiters return with the work done.
  void halt();
  // Executions in flight (the stall watchdog counts them as work in progress).
  size_t running() const { return running_.size(); }

 private:
  struct Running {
    simgrid::s4u::ExecPtr exec;
    double work;     // planned
    double flops;    // the execution's: the work planned, or 0 when it started after a halt
    double start_s;  // when it started
  };
  // The waited execution's end (or its cancellation by halt()): the fraction of its planned work done (0
  // for one started empty after the halt). It leaves running_.
  double wait_done(const simgrid::s4u::ExecPtr& e);
  // Its entry, which leaves running_.
  Running untrack(const simgrid::s4u::ExecPtr& e);

  Recorder& rec_;
  const transport::Transport& t_;
  std::vector<Running>
      running_;  // one per execution in flight, in a deterministic order (halt cancels in it)
  std::unordered_map<const simgrid::s4u::Exec*, size_t> slot_;  // each one's index in running_
  bool halted_ = false;
};

}  // namespace sim::engine
