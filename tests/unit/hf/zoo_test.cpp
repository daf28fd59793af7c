// The model zoo (models/llm/hf/zoo.tsv): each shipped models/llm/<name>.json is exactly what `dpsim model
// import models/llm/hf/<config> --name <name> <flags>` writes today, so a change to the importer or to a
// config shows up here instead of as a stale file. `make zoo` rewrites them.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/paths.h"
#include "sim/hf/import.h"

namespace sim::hf {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("Import: every zoo model file -> exactly a fresh import of its shipped config", "[unit]") {
  const std::string root = project_root();
  std::ifstream tsv(root + "/models/llm/hf/zoo.tsv");
  int models = 0;
  for (std::string line; std::getline(tsv, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cols(line);
    std::string name, config, flags;
    std::getline(cols, name, '\t');
    std::getline(cols, config, '\t');
    std::getline(cols, flags);
    ImportSpec spec;
    spec.config = "models/llm/hf/" + config;
    spec.name = name;
    std::istringstream f(flags);
    for (std::string flag, value; f >> flag >> value;) {
      if (flag == "--kv")
        spec.precision.kv = value;
      else if (flag == "--weights")
        spec.precision.weights = value;
      else
        FAIL("zoo.tsv: " << name << ": a flag the test does not know: " << flag);
    }
    INFO(name);
    StatusOr<Imported> imp = import_config(spec);
    INFO((imp ? std::string("ok") : imp.status().message()));
    REQUIRE(imp);
    CHECK(imp->text == read(root + "/models/llm/" + name + ".json"));
    ++models;
  }
  CHECK(models == 7);
}

}  // namespace
}  // namespace sim::hf
