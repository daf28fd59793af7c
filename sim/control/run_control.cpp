#include "sim/control/run_control.h"

namespace sim::control {

void RunControl::stop(const char* reason, double now) {
  if (finished_) return;
  finished_ = true;
  stopped_by_ = reason;
  stopped_at_s_ = now;
  for (auto& wake : wakers_) wake();
}

}  // namespace sim::control
