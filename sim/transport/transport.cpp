#include "sim/transport/transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>

#include "sim/core/check.h"

// SimGrid 3.32's kernel-side comm. Its header is not installed; libsimgrid exports this member.
namespace simgrid::kernel::activity {
class CommImpl {
 public:
  CommImpl& set_rate(double rate);
};
}  // namespace simgrid::kernel::activity

namespace sim::transport {

namespace sg4 = simgrid::s4u;

namespace {

// A host-to-host comm of `bytes` whose rate is bounded by `rate` (B/s). In SimGrid 3.32 Comm::set_rate()
// keeps the rate on the s4u side, which only mailbox comms hand to the kernel: a host-to-host comm would
// run unbounded. So the rate is set on the kernel-side comm (a CommImpl, the only implementation behind a
// sendto comm) before its ends are set, which starts it.
sg4::CommPtr start_rated(sg4::Host* from, sg4::Host* to, uint64_t bytes, double rate) {
  sg4::CommPtr comm = sg4::Comm::sendto_init();
  comm->set_payload_size(bytes);
  simgrid::kernel::actor::simcall_answered(
      [&]() { reinterpret_cast<simgrid::kernel::activity::CommImpl*>(comm->get_impl())->set_rate(rate); });
  comm->set_source(from);
  comm->set_destination(to);
  if (comm->get_state() == sg4::Activity::State::INITED) comm->start();
  return comm;
}

}  // namespace

Transport::Transport(const platform::PlatformHandles& h) : h_(h), link_down_(h.links.size(), 0) {
  for (size_t i = 0; i < h.links.size(); ++i) link_index_[h.links[i].link] = static_cast<int>(i);
  qos_tags_.insert(h.qos_tags.begin(), h.qos_tags.end());
  for (const auto& n : h.nodes)
    if (n.exchange_pace != nullptr) qos_tags_.insert(n.exchange_pace);
  for (const auto& n : h.nodes)
    for (size_t j = 0; j < n.eps.size(); ++j) eps_[n.gpus[j]] = n.eps[j];
}

sg4::Host* Transport::endpoint(sg4::Host* host, TrafficClass c) const {
  if (c != TrafficClass::kCollective) return host;
  const auto it = eps_.find(host);
  return it == eps_.end() ? host : it->second;
}

const std::vector<int>& Transport::route(sg4::Host* from, sg4::Host* to) {
  auto it = routes_.find({from, to});
  if (it != routes_.end()) return *it->second;
  std::vector<sg4::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::vector<int> idx;
  for (const auto* l : links) {
    if (qos_tags_.count(l) != 0) continue;
    auto li = link_index_.find(l);
    SIM_CHECK(li != link_index_.end(), "link {} of route {} -> {} is not accounted", l->get_name(),
              from->get_name(), to->get_name());
    idx.push_back(li->second);
  }
  route_list_.push_back(std::move(idx));
  routes_.emplace(std::make_pair(from, to), &route_list_.back());
  return route_list_.back();
}

Transport::Handle Transport::start(sg4::Host* from, sg4::Host* to, double bytes, TrafficClass c,
                                   double max_rate_Bps) {
  from = endpoint(from, c);
  to = endpoint(to, c);
  Flow f;
  f.route = &route(from, to);
  f.cls = c;
  f.from = from;
  f.to = to;
  f.open = true;
  if (bytes >= 1 && crosses_down(*f.route)) {
    f.failed = true;  // a link of its route is down: it sends nothing
  } else if (bytes >= 1) {
    f.size = std::round(bytes);
    if (observer_ != nullptr) observer_->on_start(*f.route, f.size, c);
    if (max_rate_Bps > 0) {
      f.comm = start_rated(from, to, static_cast<uint64_t>(f.size), max_rate_Bps);
    } else {
      f.comm = sg4::Comm::sendto_async(from, to, static_cast<uint64_t>(f.size));
    }
    transfers_++;
    f.mark_s = sg4::Engine::get_clock();
  }
  Handle id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    f.closes = flows_[id].closes;
    flows_[id] = std::move(f);
  } else {
    id = static_cast<Handle>(flows_.size());
    flows_.push_back(std::move(f));
  }
  peak_in_flight_ = std::max(peak_in_flight_, in_flight());
  peak_activities_ = std::max(peak_activities_, in_flight() + (other_in_flight_ ? *other_in_flight_ : 0));
  return id;
}

void Transport::report(Flow& f, double done) {
  const double delta = done - f.reported;
  if (delta <= 0) return;
  if (observer_ != nullptr) observer_->on_progress(*f.route, delta, f.cls);
  f.reported = done;
}

Status Transport::wait(Handle handle, double* sent) {
  if (!flows_[handle].open) {  // abandon() closed it before this wait
    if (sent != nullptr) *sent = 0;
    return Status::error("transfer abandoned at the end of a stopped run");
  }
  Status st = Status::ok();
  // The comm is held here while waiting: abandon() may drop the flow's reference meanwhile.
  const simgrid::s4u::CommPtr comm = flows_[handle].comm;
  const uint64_t closes = flows_[handle].closes;
  if (comm) {
    try {
      comm->wait();
    } catch (const simgrid::Exception& e) {  // a link or host of the route failed, or abandon()
      const Flow& f = flows_[handle];
      st = Status::error(fmt::format("transfer {} -> {} of {} bytes failed: {}", f.from->get_name(),
                                     f.to->get_name(), f.size, e.what()));
    }
  }
  Flow& f = flows_[handle];  // flows_ may have grown while waiting
  if (f.closes != closes) {  // abandoned while waiting: closed already, and the slot may be another's now
    if (sent != nullptr) *sent = 0;
    return Status::error("transfer abandoned at the end of a stopped run");
  }
  // Started on a route that was down: it never ran. (A comm that SimGrid completed arrived whole, even if
  // its route went down in the same instant.)
  if (f.failed && !f.comm && st.is_ok())
    st = Status::error(fmt::format("transfer {} -> {} of {} bytes failed: a link of its route is down",
                                   f.from->get_name(), f.to->get_name(), f.size));
  if (st.is_ok()) report(f, f.size);
  if (sent != nullptr) *sent = st.is_ok() ? f.size : f.reported;
  close(handle);  // a failed transfer: what it had not sent never crosses its links
  return st;
}

double Transport::narrowest(const std::vector<int>& route) const {
  double bw = 0;
  for (int l : route) {
    const double b = h_.links[l].link->get_bandwidth();
    if (bw <= 0 || b < bw) bw = b;
  }
  return bw;
}

Status Transport::wait_until(Handle handle, double bytes) {
  // The first estimate is the route's narrowest link, the fastest the transfer can go: it wakes early rather
  // than late. (A rate remembered from an earlier transfer on the route was tried: a third fewer sleeps,
  // members released 4 ms late on average instead of 1.3 ms, bench 2P4D.)
  if (flows_[handle].rate <= 0) flows_[handle].rate = narrowest(*flows_[handle].route);
  while (true) {
    // Re-read by handle after every simcall: other actors may start transfers and grow flows_.
    const double done = sent(handle), now = sg4::Engine::get_clock();
    Flow& f = flows_[handle];
    if (done > f.mark_bytes && now > f.mark_s) {  // the rate since the last reading (piecewise constant)
      f.rate = (done - f.mark_bytes) / (now - f.mark_s);
      f.mark_bytes = done;
      f.mark_s = now;
    }
    // A comm of whole bytes: its members' ends are rounded as its size is.
    if (done >= std::min(bytes, f.size) - 0.5) return Status::ok();
    if (f.failed)
      return Status::error(fmt::format("transfer {} -> {} of {} bytes failed after {} bytes",
                                       f.from->get_name(), f.to->get_name(), f.size, done));
    polls_++;
    sg4::this_actor::sleep_for((bytes - done) / std::max(f.rate, 1.0));
  }
}

void Transport::close(Handle handle) {
  Flow& f = flows_[handle];
  if (observer_ != nullptr && f.comm && f.size - f.reported > 0)
    observer_->on_cancel(*f.route, f.size - f.reported, f.cls);
  f.comm = nullptr;
  f.failed = false;
  f.open = false;
  f.closes++;
  free_.push_back(handle);
}

double Transport::cancel(Handle handle) {
  // Reading the bytes sent and cancelling are simcalls, during which other actors may start transfers and
  // grow flows_: no reference into it is held across them.
  if (!flows_[handle].open) return 0;      // abandon() closed it already
  const double sent = this->sent(handle);  // reported
  if (!flows_[handle].open) return 0;
  if (flows_[handle].comm) flows_[handle].comm->cancel();
  close(handle);
  return sent;
}

double Transport::sent_in_kernel(Flow& f) {
  if (f.failed) return f.reported;  // SimGrid's remaining bytes of a failed comm say nothing
  if (!f.comm) return f.size;
  const double done = f.size - f.comm->get_remaining();
  report(f, done);
  return done;
}

double Transport::sent(Handle handle) {
  return simgrid::kernel::actor::simcall_answered([&]() { return sent_in_kernel(flows_[handle]); });
}

void Transport::sent(const std::vector<Handle>& handles, std::vector<double>& out) {
  out.resize(handles.size());
  simgrid::kernel::actor::simcall_answered([&]() {
    for (size_t i = 0; i < handles.size(); ++i) out[i] = sent_in_kernel(flows_[handles[i]]);
  });
}

void Transport::settle() {
  simgrid::kernel::actor::simcall_answered([&]() {
    for (auto& f : flows_)
      if (f.comm) sent_in_kernel(f);
  });
}

void Transport::abandon() {
  abandoned_ = true;
  simgrid::kernel::actor::simcall_answered([&]() {
    for (Handle hd = 0; hd < flows_.size(); ++hd) {
      Flow& f = flows_[hd];
      if (!f.comm) continue;
      sent_in_kernel(f);
      f.comm->cancel();  // a simcall inside one runs directly
      close(hd);
    }
  });
}

void Transport::cut(const std::vector<int>& links, const std::vector<sg4::Link*>& others) {
  simgrid::kernel::actor::simcall_answered([&]() {
    for (int l : links) link_down_[l] = 1;
    // Each flow crossing a link that goes down: its bytes so far, then it is failed (before SimGrid fails
    // the comm, after which its remaining bytes read 0).
    for (auto& f : flows_)
      if (f.comm && !f.failed && crosses_down(*f.route)) {
        sent_in_kernel(f);
        f.failed = true;
      }
    for (int l : links) h_.links[l].link->turn_off();
    for (sg4::Link* l : others) l->turn_off();
  });
}

void Transport::restore(const std::vector<int>& links, const std::vector<sg4::Link*>& others) {
  simgrid::kernel::actor::simcall_answered([&]() {
    for (int l : links) {
      link_down_[l] = 0;
      h_.links[l].link->turn_on();
    }
    for (sg4::Link* l : others) l->turn_on();
  });
}

}  // namespace sim::transport
