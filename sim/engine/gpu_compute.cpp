#include "sim/engine/gpu_compute.h"

#include <algorithm>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include "sim/core/check.h"

namespace sim::engine {

namespace sg4 = simgrid::s4u;

namespace {

void started(Recorder& rec, const transport::Transport& t) {
  rec.timed_activities++;
  rec.timed_in_flight++;
  rec.peak_activities = std::max(rec.peak_activities, rec.timed_in_flight + t.in_flight());
}

}  // namespace

double GpuCompute::run_one(sg4::Host* host, double work) {
  if (work <= 0) return 0;
  sg4::ExecPtr e = start(host, work);
  rec_.compute_activities++;
  e->wait();
  rec_.timed_in_flight--;
  return work / host->get_speed();
}

void GpuCompute::run(const std::vector<sg4::Host*>& hosts, const std::vector<double>& work,
                     std::vector<double>& busy_s) {
  if (hosts.size() == 1) {
    busy_s[0] += run_one(hosts[0], work[0]);
    return;
  }
  // Local: other actors run this too, between this one's simcalls.
  std::vector<sg4::ExecPtr> running;
  start_all(hosts, work, running);
  wait_all(running, hosts, work, busy_s);
}

void GpuCompute::start_all(const std::vector<sg4::Host*>& hosts, const std::vector<double>& work,
                           std::vector<sg4::ExecPtr>& running) {
  SIM_CHECK(hosts.size() == work.size(), "GPU work for {} hosts, {} plans", hosts.size(), work.size());
  running.clear();
  // One simcall starts them all: inside it the code runs in SimGrid's kernel, where each start is a plain
  // call instead of a simcall of its own (the executions start at the same instant either way).
  simgrid::kernel::actor::simcall_answered([&]() {
    for (size_t i = 0; i < hosts.size(); ++i) {
      if (work[i] <= 0) continue;
      running.push_back(sg4::Exec::init());
      running.back()->set_flops_amount(work[i])->set_host(hosts[i])->start();
    }
  });
  for (size_t k = 0; k < running.size(); ++k) {
    started(rec_, t_);
    rec_.compute_activities++;
  }
}

void GpuCompute::wait_all(std::vector<sg4::ExecPtr>& execs, const std::vector<sg4::Host*>& hosts,
                          const std::vector<double>& work, std::vector<double>& busy_s) {
  SIM_CHECK(busy_s.size() == work.size(), "busy times for {} hosts, {} plans", busy_s.size(), work.size());
  // Wait for the one expected last (its work over its host's speed); when it is done the others usually
  // are too, and one simcall checks them all instead of a wait each. One on a host slowed meanwhile is
  // waited for.
  size_t last = 0;
  double last_end = -1;
  for (size_t i = 0, k = 0; i < hosts.size(); ++i) {
    if (work[i] <= 0) continue;
    const double end = work[i] / hosts[i]->get_speed();
    if (end > last_end) {
      last_end = end;
      last = k;
    }
    ++k;
  }
  if (!execs.empty()) execs[last]->wait();
  const bool all_done = simgrid::kernel::actor::simcall_answered([&]() {
    for (const auto& e : execs)
      if (e->get_remaining() > 0) return false;
    return true;
  });
  if (!all_done)
    for (auto& e : execs) e->wait();
  rec_.timed_in_flight -= static_cast<int>(execs.size());
  execs.clear();
  // Alone on its host, an execution runs at the host's speed: its work over that speed is its busy time.
  for (size_t i = 0; i < hosts.size(); ++i)
    if (work[i] > 0) busy_s[i] += work[i] / hosts[i]->get_speed();
}

sg4::ExecPtr GpuCompute::start(sg4::Host* host, double work) {
  sg4::ExecPtr plan = sg4::Exec::init();
  // Sized, placed and started in one simcall (each setter would be a simcall of its own).
  simgrid::kernel::actor::simcall_answered([&]() { plan->set_flops_amount(work)->set_host(host)->start(); });
  started(rec_, t_);
  return plan;
}

double GpuCompute::finish(const sg4::ExecPtr& exec, double work, bool cut, double t_start) {
  double busy = 0;
  if (cut) {
    exec->cancel();
    // Alone on its host, the execution ran at the host's speed: the work done is the time it ran.
    busy = sg4::Engine::get_clock() - t_start;
  } else {
    exec->wait();  // ends with the plan, or later on a slowed host
    busy = work / exec->get_host()->get_speed();
  }
  rec_.timed_in_flight--;
  return busy;
}

}  // namespace sim::engine
