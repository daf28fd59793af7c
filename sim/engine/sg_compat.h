// Thin wrappers over the SimGrid 3.32 calls whose API changed in later releases (actor creation,
// waiting). Only this header and sim/platform/ may call them directly.
#pragma once

#include <functional>
#include <simgrid/s4u.hpp>
#include <string>

namespace sim::engine {

inline simgrid::s4u::ActorPtr spawn(const std::string& name, simgrid::s4u::Host* host,
                                    std::function<void()> fn) {
  return simgrid::s4u::Actor::create(name, host, std::move(fn));
}

// An actor that is killed when every non-daemon actor has ended (samplers, periodic schedulers).
inline simgrid::s4u::ActorPtr spawn_daemon(const std::string& name, simgrid::s4u::Host* host,
                                           std::function<void()> fn) {
  return simgrid::s4u::Actor::create(name, host, [fn = std::move(fn)]() {
    simgrid::s4u::Actor::self()->daemonize();
    fn();
  });
}

inline void sleep_for(double seconds) {
  simgrid::s4u::this_actor::sleep_for(seconds);
}
inline double now() {
  return simgrid::s4u::Engine::get_clock();
}

}  // namespace sim::engine
