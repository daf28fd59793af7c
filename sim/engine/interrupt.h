// SIGINT / SIGTERM during a run: the first one asks the simulation to stop at its next check (every
// kInterruptCheckS of simulated time, control/watchdog.cpp), after which the results so far are written,
// marked "complete": false with summary.stopped_by = "SIGINT" | "SIGTERM". A second signal kills the
// process at once (the handler restores the default action).
#pragma once

namespace sim::engine {

// Simulated seconds between two checks of the stop request (one timer event each; at 2P4D speed, a
// few milliseconds of wall time).
inline constexpr double kInterruptCheckS = 0.25;
// After a stop before the turns are done (a time limit, a signal, a stall, a stop rule) the work in flight
// may end for this long (simulated s: a pass or a persistence write in progress); then the watchdog ends
// what is left (control/watchdog.h), so that no engine's values keep a stopped run going.
inline constexpr double kDrainLimitS = 60.0;
// The watchdog also ends a run that stalls: requests in flight but no new transfer, timed activity or
// finished turn for this long (simulated s), which only a deadlock in the engine can cause.
inline constexpr double kStallTimeoutS = 600.0;

// Installs the handlers for SIGINT and SIGTERM (idempotent).
void install_stop_handlers();
// The signal received (SIGINT or SIGTERM), 0 when none.
int stop_signal();
// "SIGINT", "SIGTERM" or "" (none).
const char* stop_signal_name();

}  // namespace sim::engine
