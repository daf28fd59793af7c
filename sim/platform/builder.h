// Builds the SimGrid platform of a P x D cluster from a hardware file (see handles.h for the routes).
#pragma once

#include "sim/config/hardware.h"
#include "sim/platform/handles.h"

namespace sim::platform {

// Sets the network model for exact byte and time accounting (CM02, no cross-traffic, raised TCP gamma),
// creates the zone, hosts and links, and seals the platform.
// REQUIRES: a simgrid::s4u::Engine exists and no platform was loaded yet; prefill_nodes, decode_nodes >= 1.
PlatformHandles build_platform(const config::HardwareSpec& hw, int prefill_nodes, int decode_nodes);

}  // namespace sim::platform
