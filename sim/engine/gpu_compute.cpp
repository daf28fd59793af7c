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
  const double done = wait_done(e);
  rec_.timed_in_flight--;
  return done * work / host->get_speed();
}

void GpuCompute::run(const std::vector<sg4::Host*>& hosts, const std::vector<double>& work,
                     std::vector<double>& busy_s) {
  std::vector<sg4::ExecPtr> running;  // local: other actors run this too, between this one's simcalls
  start_all(hosts, work, running);
  wait_all(running, hosts, work, busy_s);
}

void GpuCompute::start_all(const std::vector<sg4::Host*>& hosts, const std::vector<double>& work,
                           std::vector<sg4::ExecPtr>& running) {
  SIM_CHECK(hosts.size() == work.size(), "GPU work for {} hosts, {} plans", hosts.size(), work.size());
  running.clear();
  // The GPU that takes longest (the first of equals): its execution is the group's.
  size_t last = hosts.size();
  double last_end = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (work[i] <= 0) continue;
    const double end = work[i] / hosts[i]->get_speed();
    if (last == hosts.size() || end > last_end) {
      last_end = end;
      last = i;
    }
  }
  if (last == hosts.size()) return;
  running.push_back(start(hosts[last], work[last]));
  rec_.compute_activities++;
}

void GpuCompute::wait_all(std::vector<sg4::ExecPtr>& execs, const std::vector<sg4::Host*>& hosts,
                          const std::vector<double>& work, std::vector<double>& busy_s) {
  SIM_CHECK(busy_s.size() == work.size(), "busy times for {} hosts, {} plans", busy_s.size(), work.size());
  double done = 1;  // the group's part done: all of it, unless halt() cancelled its execution
  for (auto& e : execs) {
    done = std::min(done, wait_done(e));
    rec_.timed_in_flight--;
  }
  execs.clear();
  // A GPU of the group computes its own work at its host's speed.
  for (size_t i = 0; i < hosts.size(); ++i)
    if (work[i] > 0) busy_s[i] += done * work[i] / hosts[i]->get_speed();
}

sg4::ExecPtr GpuCompute::start(sg4::Host* host, double work) {
  sg4::ExecPtr plan = sg4::Exec::init();
  // Sized, placed and started in one simcall (each setter would be a simcall of its own). After a halt
  // the execution is empty: it ends at once.
  const double flops = halted_ ? 0 : work;
  simgrid::kernel::actor::simcall_answered([&]() { plan->set_flops_amount(flops)->set_host(host)->start(); });
  started(rec_, t_);
  slot_[plan.get()] = running_.size();
  running_.push_back({plan, work, flops, sg4::Engine::get_clock()});
  return plan;
}

GpuCompute::Running GpuCompute::untrack(const sg4::ExecPtr& e) {
  const auto it = slot_.find(e.get());
  SIM_CHECK(it != slot_.end(), "an execution waited for twice");
  const size_t i = it->second;
  slot_.erase(it);
  const Running r = running_[i];
  if (i + 1 < running_.size()) {  // the last entry takes its place
    running_[i] = running_.back();
    slot_[running_[i].exec.get()] = i;
  }
  running_.pop_back();
  return r;
}

double GpuCompute::wait_done(const sg4::ExecPtr& e) {
  const Running r = untrack(e);
  if (r.work <= 0) return 1;
  try {
    e->wait();
  } catch (const simgrid::CancelException&) {
    // halt(): alone on its host, the execution ran at the host's speed until now.
    return std::clamp((sg4::Engine::get_clock() - r.start_s) * e->get_host()->get_speed() / r.work, 0.0, 1.0);
  }
  return r.flops / r.work;  // 0 for one started empty after the halt
}

double GpuCompute::finish(const sg4::ExecPtr& exec, double work, bool cut, double t_start) {
  double busy = 0;
  if (cut) {
    if (exec->get_state() != sg4::Activity::State::CANCELED) exec->cancel();
    // Alone on its host, the execution ran at the host's speed: the work done is the time it ran.
    busy = sg4::Engine::get_clock() - t_start;
    untrack(exec);
  } else {
    busy = wait_done(exec) * work / exec->get_host()->get_speed();  // its end, or later on a slowed host
  }
  rec_.timed_in_flight--;
  return busy;
}

void GpuCompute::halt() {
  if (halted_) return;
  halted_ = true;
  // One simcall for all (each cancel would be one of its own).
  simgrid::kernel::actor::simcall_answered([this]() {
    for (auto& r : running_)  // a simcall inside one runs directly
      if (r.exec->get_state() == sg4::Activity::State::STARTED) r.exec->cancel();
  });
}

}  // namespace sim::engine
