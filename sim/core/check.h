// SIM_CHECK: a broken invariant inside the simulation. Prints file:line and the formatted message,
// then aborts. Used for bugs, never for bad user input (that is a Status).
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#define SIM_CHECK(cond, ...)                                                               \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: invariant broken: %s: %s\n", __FILE__, __LINE__, #cond, \
                   fmt::format(__VA_ARGS__).c_str());                                      \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
