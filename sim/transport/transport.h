// Transport: every transfer of the simulation. A transfer of `bytes` from one host to another, in a
// traffic class, is one SimGrid comm on the platform's route (platform/handles.h); its rate comes from
// SimGrid's max-min sharing. A transfer may carry several requests' bytes back to back (an aggregate,
// sim/README.md): wait_until() tells when each one's part has crossed. Waiting for it returns a Status: a
// transfer whose link failed is a value the caller handles, not an exception. Byte metering observes the
// transport (TransferObserver); it never carries traffic itself.
#pragma once

#include <cstdint>
#include <deque>
#include <simgrid/s4u/Comm.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "sim/platform/handles.h"
#include "sim/transport/traffic_class.h"

namespace sim::transport {

// Sees the bytes of every transfer, per accounted link (indices into PlatformHandles::links).
class TransferObserver {
 public:
  virtual ~TransferObserver() = default;
  // A transfer of `bytes` started whose route crosses `links`.
  virtual void on_start(const std::vector<int>& links, double bytes, TrafficClass c) = 0;
  // `bytes` more of a transfer crossed every link of `links` (its progress since the last report).
  virtual void on_progress(const std::vector<int>& links, double bytes, TrafficClass c) = 0;
  // A transfer was cancelled with `bytes` of it never sent: they will not cross `links`.
  virtual void on_cancel(const std::vector<int>& links, double bytes, TrafficClass c) = 0;
};

class Transport {
 public:
  using Handle = uint32_t;

  // REQUIRES: the platform of `h` is built; `h` outlives the transport.
  explicit Transport(const platform::PlatformHandles& h);

  // REQUIRES: before the first transfer. nullptr = no observer.
  void set_observer(TransferObserver* o) { observer_ = o; }

  // Starts a transfer of `bytes` from `from` to `to` (bytes < 1: nothing is sent, and waiting returns at
  // once). max_rate_Bps > 0 bounds its rate (a SimGrid bound: at most that, less when links are shared).
  // A collective runs between the GPUs' collective endpoints when the platform has them (network.qos =
  // priority, platform/handles.h); `from` and `to` name the GPUs either way. A collective from a GPU to
  // itself is its share of a balanced all-to-all (an EP exchange): it leaves through the GPU's CNIC and
  // comes back in, so it loads that CNIC with its bytes in each direction and no other node's links.
  Handle start(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
               TrafficClass c = TrafficClass::kKv, double max_rate_Bps = -1);
  // Waits for a transfer and reports its last bytes. Call once per handle. An error names the ends; a
  // transfer that failed (its route crossed a link that was cut) has its bytes sent until then reported and
  // the rest withdrawn, and `sent` (when given) tells how many it had sent.
  Status wait(Handle handle, double* sent = nullptr);
  // Stops a transfer nobody waits for; returns the bytes it had sent, which are reported, while the rest is
  // withdrawn from the observer's count. The handle is free afterwards (do not wait for it).
  double cancel(Handle handle);
  // The bytes a transfer in flight has sent so far (reported to the observer).
  double sent(Handle handle);
  // The same for several transfers, read in one simcall: out[i] for handles[i].
  void sent(const std::vector<Handle>& handles, std::vector<double>& out);
  // Waits until a transfer has sent at least `bytes` of its size, and leaves it running: a member of an
  // aggregate (one comm that carries several requests' bytes back to back, each done when the comm's
  // progress passes its end) is released this way; wait() then ends the transfer, once. It never returns
  // before the bytes have crossed: it reads the progress, sleeps for what is left at the rate it last saw
  // (at first the narrowest link of the route), and reads again. An error if the transfer failed first.
  Status wait_until(Handle handle, double bytes);
  // start() + wait().
  Status send(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
              TrafficClass c = TrafficClass::kKv) {
    return wait(start(from, to, bytes, c));
  }
  // Reports the progress of every transfer in flight to the observer (from SimGrid's remaining bytes), read
  // in one simcall.
  void settle();
  // A node failure (control/node_failures.h): `links` (indices into PlatformHandles::links) and `others`
  // (links that are not accounted: a pace link) go down, in SimGrid's own state (Link::turn_off), in one
  // simcall. Every transfer in flight whose route crosses one fails there, with its bytes sent so far
  // reported, and so does every transfer started on such a route while they are down (it sends nothing).
  void cut(const std::vector<int>& links, const std::vector<simgrid::s4u::Link*>& others);
  // The end of a stopped run's drain (control/watchdog.cpp): every transfer in flight stops where it is,
  // in one simcall; its bytes so far are reported and the rest withdrawn (as cancel() does), and the actors
  // waiting for them are ended next. Transfers started afterwards run as usual.
  void abandon();
  // Whether abandon() ran: a wait that fails afterwards is the stopped run's end, not a broken transfer.
  bool abandoned() const { return abandoned_; }
  // The links come back up (Link::turn_on).
  void restore(const std::vector<int>& links, const std::vector<simgrid::s4u::Link*>& others);
  // Whether a transfer in flight failed (it will send nothing more).
  bool failed(Handle handle) const { return flows_[handle].failed; }

  size_t in_flight() const { return flows_.size() - free_.size(); }
  size_t peak_in_flight() const { return peak_in_flight_; }
  uint64_t transfers() const { return transfers_; }
  // The sleeps of wait_until (timed activities of the transport's own).
  uint64_t polls() const { return polls_; }
  // Other activities in flight (executions, timers), counted into peak_activities().
  void count_other_in_flight(const int* n) { other_in_flight_ = n; }
  size_t peak_activities() const { return peak_activities_; }
  const platform::PlatformHandles& handles() const { return h_; }

 private:
  struct Flow {
    simgrid::s4u::CommPtr comm;
    double size = 0;
    double reported = 0;
    const std::vector<int>* route = nullptr;
    TrafficClass cls = TrafficClass::kKv;
    simgrid::s4u::Host* from = nullptr;
    simgrid::s4u::Host* to = nullptr;
    bool failed = false;
    bool open = false;    // started and not yet closed
    uint64_t closes = 0;  // times this slot was closed: a waiter tells its transfer was abandoned meanwhile
    // wait_until's reading: the bytes sent at mark_s, and the rate since the reading before (B/s).
    double mark_s = 0, mark_bytes = 0, rate = 0;
  };
  bool crosses_down(const std::vector<int>& route) const {
    for (int l : route)
      if (link_down_[l]) return true;
    return false;
  }
  const std::vector<int>& route(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
  // The narrowest bandwidth of an accounted route (B/s; 0 for an empty route).
  double narrowest(const std::vector<int>& route) const;
  simgrid::s4u::Host* endpoint(simgrid::s4u::Host* host, TrafficClass c) const;
  void report(Flow& f, double done);
  // f's bytes sent so far, reported. REQUIRES: in SimGrid's kernel (inside a simcall), so that reading the
  // comm's remaining bytes is a plain call, not a simcall of its own (a simcall is a switch to SimGrid's
  // kernel and back: reading a thousand transfers one simcall each cost a thousand switches).
  double sent_in_kernel(Flow& f);
  // Frees the handle; the bytes of the transfer not reported yet are withdrawn from the observer's count.
  void close(Handle handle);

  const platform::PlatformHandles& h_;
  TransferObserver* observer_ = nullptr;
  std::unordered_map<const simgrid::s4u::Link*, int> link_index_;
  std::unordered_set<const simgrid::s4u::Link*> qos_tags_;            // crossed, not accounted (and paces)
  std::unordered_map<simgrid::s4u::Host*, simgrid::s4u::Host*> eps_;  // GPU -> collective endpoint
  struct EndsHash {
    size_t operator()(const std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>& e) const {
      return std::hash<const void*>()(e.first) * 31 + std::hash<const void*>()(e.second);
    }
  };
  // Looked up per transfer; never iterated, so a hash map keeps runs deterministic. Routes live in
  // route_list_ (stable addresses).
  std::unordered_map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, const std::vector<int>*, EndsHash>
      routes_;
  std::deque<std::vector<int>> route_list_;
  std::vector<Flow> flows_;
  std::vector<Handle> free_;
  std::vector<char> link_down_;  // per accounted link
  size_t peak_in_flight_ = 0;
  size_t peak_activities_ = 0;
  const int* other_in_flight_ = nullptr;
  uint64_t transfers_ = 0;
  bool abandoned_ = false;
  uint64_t polls_ = 0;
};

}  // namespace sim::transport
