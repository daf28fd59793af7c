// Thin wrappers over the SimGrid 3.32 calls whose API changed in later releases (actor creation,
// waiting). Only this header and sim/platform/ may call them directly.
#pragma once

#include <cstdlib>
#include <functional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

namespace sim::engine {

inline simgrid::s4u::ActorPtr spawn(const std::string& name, simgrid::s4u::Host* host,
                                    const std::function<void()>& fn) {
  return simgrid::s4u::Actor::create(name, host, fn);  // 3.32 takes the function by const reference
}

// An actor that is killed when every non-daemon actor has ended (samplers, periodic schedulers).
inline simgrid::s4u::ActorPtr spawn_daemon(const std::string& name, simgrid::s4u::Host* host,
                                           std::function<void()> fn) {
  return simgrid::s4u::Actor::create(name, host, [fn = std::move(fn)]() {
    simgrid::s4u::Actor::self()->daemonize();
    fn();
  });
}

// The command line a simgrid::s4u::Engine is made with (argv[0] = "dpsim"). DPSIM_SG_CONTEXTS=thread
// (make test-sanitize) adds --cfg=contexts/factory:thread: AddressSanitizer cannot follow the stack
// switches of SimGrid's default contexts and reports false stack-buffer errors when a daemon actor's stack
// unwinds at the end of a run. The factory must be chosen before the engine exists, hence the command line.
inline std::vector<std::string> engine_args() {
  std::vector<std::string> args = {"dpsim"};
  if (const char* factory = std::getenv("DPSIM_SG_CONTEXTS"); factory != nullptr && *factory != '\0')
    args.push_back(std::string("--cfg=contexts/factory:") + factory);
  // DPSIM_SG_CFG: SimGrid settings for measurements, space-separated (scenarios/bench/README.md).
  if (const char* extra = std::getenv("DPSIM_SG_CFG"); extra != nullptr) {
    std::string s(extra);
    for (size_t b = 0; b < s.size();) {
      size_t e = s.find(' ', b);
      if (e == std::string::npos) e = s.size();
      if (e > b) args.push_back("--cfg=" + s.substr(b, e - b));
      b = e + 1;
    }
  }
  return args;
}

inline void sleep_for(double seconds) {
  simgrid::s4u::this_actor::sleep_for(seconds);
}
inline double now() {
  return simgrid::s4u::Engine::get_clock();
}

}  // namespace sim::engine
