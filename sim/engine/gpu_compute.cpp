#include "sim/engine/gpu_compute.h"

#include <algorithm>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

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
  sg4::ExecPtr e = sg4::Exec::init();
  e->set_flops_amount(work);
  e->set_host(host);
  e->start();
  started(rec_, t_);
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
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (work[i] <= 0) continue;
    running.push_back(sg4::Exec::init());
    running.back()->set_flops_amount(work[i]);
    running.back()->set_host(hosts[i]);
    running.back()->start();
    started(rec_, t_);
    rec_.compute_activities++;
  }
}

void GpuCompute::wait_all(std::vector<sg4::ExecPtr>& execs, const std::vector<sg4::Host*>& hosts,
                          const std::vector<double>& work, std::vector<double>& busy_s) {
  SIM_CHECK(busy_s.size() == work.size(), "busy times for {} hosts, {} plans", busy_s.size(), work.size());
  for (auto& e : execs) {
    e->wait();
    rec_.timed_in_flight--;
  }
  execs.clear();
  // Alone on its host, an execution runs at the host's speed: its work over that speed is its busy time.
  for (size_t i = 0; i < hosts.size(); ++i)
    if (work[i] > 0) busy_s[i] += work[i] / hosts[i]->get_speed();
}

sg4::ExecPtr GpuCompute::start(sg4::Host* host, double work) {
  sg4::ExecPtr plan = sg4::Exec::init();
  plan->set_flops_amount(work);
  plan->set_host(host);
  plan->start();
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
