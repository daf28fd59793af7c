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

void GpuCompute::run(const std::vector<sg4::Host*>& hosts, const std::vector<double>& work,
                     std::vector<double>& busy_s) {
  SIM_CHECK(hosts.size() == work.size() && busy_s.size() == work.size(), "GPU work for {} hosts, {} plans",
            hosts.size(), work.size());
  // Local: other actors run this too, between this one's simcalls.
  std::vector<sg4::ExecPtr> running;
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (work[i] <= 0) continue;
    running.push_back(sg4::Exec::init());
    running.back()->set_flops_amount(work[i]);
    running.back()->set_host(hosts[i]);
    running.back()->start();
    started(rec_, t_);
    rec_.compute_activities++;
  }
  for (auto& e : running) {
    e->wait();
    rec_.timed_in_flight--;
  }
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
    exec->wait();
    busy = work / exec->get_host()->get_speed();
  }
  rec_.timed_in_flight--;
  return busy;
}

}  // namespace sim::engine
