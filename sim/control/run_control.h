// RunControl: whether the run is over, why and when, and the one mutex that condition-variable waits need.
//
// The concurrency rule (sim/README.md, "Concurrency"): actors are cooperative. One actor runs at a time,
// until its next simcall (any wait, sleep, transfer, execution, mutex lock or notify). So:
//   1. state is read, decided on and changed in one stretch with no simcall inside: that stretch is atomic;
//   2. notifications come after the changes they announce (a notify is a simcall: others run during it);
//   3. after a simcall, nothing read before it is trusted: re-read by id (RequestStore references stay
//      valid, container positions and copies do not);
//   4. the mutex exists because SimGrid's condition variables need one: lock_when() tests the predicate,
//      and only if it must wait takes the mutex, tests again and waits. It guards the test-then-wait step,
//      not the state (a lock and an unlock are two simcalls: a wait that is not needed costs none).
#pragma once

#include <functional>
#include <mutex>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <string>
#include <vector>

namespace sim::control {

class RunControl {
 public:
  RunControl() : mutex_(simgrid::s4u::Mutex::create()) {}

  bool finished() const { return finished_; }
  // Why the run ended: "all_turns_done" (the default), "time_limit", "ttft_slo", "steady_state", "stall",
  // "SIGINT" or "SIGTERM".
  const std::string& stopped_by() const { return stopped_by_; }
  // Simulated time at which a stop rule fired or the last turn finished (in-flight work may end later).
  double stopped_at_s() const { return stopped_at_s_; }

  // Every service registers how to wake its actors; finish() calls them all, so each actor sees
  // finished() and returns.
  void on_finish(std::function<void()> wake) { wakers_.push_back(std::move(wake)); }
  // Ends the run at `now` for `reason` (the first call wins).
  void stop(const char* reason, double now);
  // Ends the run because every turn is done (stopped_by "all_turns_done").
  void all_done(double now) { stop("all_turns_done", now); }

  // Waits on `cv` while `blocked()` holds and the run is not over (rule 4 above), and returns the lock,
  // held only if it had to wait: the caller's stretch from the test on is atomic either way (rule 1).
  // Callers take their work, then release() the lock before any transfer or sleep.
  template <class Blocked>
  std::unique_lock<simgrid::s4u::Mutex> lock_when(const simgrid::s4u::ConditionVariablePtr& cv,
                                                  Blocked blocked) {
    std::unique_lock<simgrid::s4u::Mutex> lock(*mutex_, std::defer_lock);
    if (finished_ || !blocked()) return lock;
    lock.lock();  // a simcall: others may change the state meanwhile, so the test is made again
    while (!finished_ && blocked()) cv->wait(lock);
    return lock;
  }
  static void release(std::unique_lock<simgrid::s4u::Mutex>& lock) {
    if (lock.owns_lock()) lock.unlock();
  }
  simgrid::s4u::Mutex& mutex() { return *mutex_; }

 private:
  simgrid::s4u::MutexPtr mutex_;
  bool finished_ = false;
  std::string stopped_by_ = "all_turns_done";
  double stopped_at_s_ = 0;
  std::vector<std::function<void()>> wakers_;
};

}  // namespace sim::control
