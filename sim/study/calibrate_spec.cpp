#include "sim/study/calibrate_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "sim/config/engine.h"
#include "sim/config/hardware.h"
#include "sim/config/json_util.h"
#include "sim/config/scenario.h"
#include "sim/core/check.h"
#include "sim/core/paths.h"

namespace sim::study {

namespace fs = std::filesystem;
using config::JsonReader;

namespace {

// A file the spec names: as given, else relative to the spec's folder, else to the project. A bare name
// (no '/', no ".json") of a kind is models/<kind>/<name>.json.
StatusOr<std::string> resolve_file(const std::string& spec, const std::string& field,
                                   const std::string& value, const char* kind) {
  const std::string wanted = model_file_reference(value, kind);
  const std::string path = resolve_path(wanted, fs::path(spec).parent_path().string());
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return Status::error(fmt::format("{}: {}: cannot open {}: no such file", spec, field, wanted));
  return absolute_path(path);
}

// doc at the dot-separated key = value, creating missing objects; false when the path crosses a value
// that is not an object.
bool set_key(nlohmann::ordered_json& doc, const std::string& key, double value) {
  nlohmann::ordered_json* node = &doc;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || part.empty()) return false;
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return true;
    }
    node = &(*node)[part];
    if (node->is_null()) *node = nlohmann::ordered_json::object();
    start = dot + 1;
  }
}

// A required finite number, any sign.
double number(JsonReader& r, const char* key, const char* expected) {
  const nlohmann::json* v = r.raw(key);
  if (v == nullptr || !v->is_number() || !std::isfinite(v->get<double>()) ||
      std::fabs(v->get<double>()) > config::kMaxNumber) {
    r.fail(key, expected, v);
    return 0;
  }
  return v->get<double>();
}

void read_parameter(JsonReader& r, FreeParameter& p) {
  p.key = r.string("key", std::nullopt);
  const std::string head = p.key.substr(0, p.key.find('.'));
  if (r.ok() && (p.key.empty() || head == "name" || head == "notes" || head == "sources"))
    r.fail("key", "the key path of a number in the file to fit (not name, notes or sources)", r.raw("key"));
  p.lower = number(r, "lower", "a number (the lower bound)");
  p.upper = number(r, "upper", "a number (the upper bound)");
  if (r.ok() && p.upper <= p.lower)
    r.fail("upper", fmt::format("a number > lower ({:g})", p.lower), r.raw("upper"));
  p.start = (p.lower + p.upper) / 2;
  if (r.ok() && r.raw("start") != nullptr) {
    p.start = number(r, "start", "a number in [lower, upper]");
    if (r.ok() && (p.start < p.lower || p.start > p.upper))
      r.fail("start", fmt::format("a number in [lower, upper] = [{:g}, {:g}]", p.lower, p.upper),
             r.raw("start"));
  }
}

// Whether a --set of a point names the fitted file's own field (which the fit sets): for an engine file
// "engine" and "engine_overrides" (they would change the fitted values), for a hardware file "hardware",
// "hardware_prefill" and "hardware_decode".
bool sets_target(const std::string& key, const std::string& kind) {
  const auto is = [&](const char* field) {
    const std::string f = field;
    return key == f || key.rfind(f + ".", 0) == 0;
  };
  if (kind == "engine") return is("engine") || is("engine_overrides");
  return is("hardware") || is("hardware_prefill") || is("hardware_decode");
}

void read_point(JsonReader& r, MeasuredPoint& p, const std::string& kind) {
  p.name = r.string("name", std::nullopt);
  if (r.ok() &&
      (p.name.empty() || p.name.size() > 64 ||
       p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
           std::string::npos))
    r.fail("name", "a name of 1 to 64 letters, digits, '_' or '-'", r.raw("name"));
  p.scenario = r.string("scenario", std::nullopt);
  if (const nlohmann::json* sets = r.raw("sets")) {
    const std::string expected =
        kind == "engine"
            ? "an array of \"key.path=value\" overrides, neither \"engine\" nor \"engine_overrides\" (the "
              "spec's \"engine\" names the file to fit)"
            : "an array of \"key.path=value\" overrides, none of \"hardware\", \"hardware_prefill\" or "
              "\"hardware_decode\" (the spec's \"hardware\" names the file to fit)";
    if (!sets->is_array()) r.fail("sets", expected, sets);
    for (size_t i = 0; r.ok() && i < sets->size(); ++i) {
      const nlohmann::json& s = (*sets)[i];
      const size_t eq = s.is_string() ? s.get<std::string>().find('=') : std::string::npos;
      const std::string key = eq == std::string::npos ? "" : s.get<std::string>().substr(0, eq);
      if (key.empty() || sets_target(key, kind)) r.fail("sets", expected, &s);
      if (r.ok()) p.sets.push_back(s.get<std::string>());
    }
  }
  p.quantity = r.string("quantity", std::nullopt);
  const auto& known = calibration_quantities();
  if (r.ok() && std::find(known.begin(), known.end(), p.quantity) == known.end()) {
    std::string names;
    for (const auto& q : known) names += (names.empty() ? "" : ", ") + q;
    r.fail("quantity", "a results quantity, one of " + names, r.raw("quantity"));
  }
  p.measured = r.positive("measured", std::nullopt);
  p.tolerance = r.number("tolerance", std::nullopt, 0, 1, false);
  p.weight = r.positive("weight", 1.0);
  p.source = r.string("source", "");
}

// Reads the array `key` of objects with `read`, each checked for unknown keys.
template <typename T, typename Read>
std::vector<T> read_array(JsonReader& r, const char* key, const std::string& expected, const Read& read) {
  std::vector<T> out;
  const nlohmann::json* a = r.raw(key);
  if (a == nullptr || !a->is_array() || a->empty()) {
    r.fail(key, expected, a);
    return out;
  }
  for (size_t i = 0; i < a->size() && r.ok(); ++i) {
    const std::string path = fmt::format("{}[{}]", key, i);
    if (!(*a)[i].is_object()) {
      r.fail(key, path + " to be an object", &(*a)[i]);
      break;
    }
    JsonReader e((*a)[i], r.file(), path);
    T item;
    read(e, item);
    if (const Status s = e.finish(); !s) r.fail_message(s.message());
    out.push_back(item);
  }
  return out;
}

// The roles of a loaded scenario that its runs give the candidate's copy of `target`: those on `target`;
// when none is and both roles share a file, both (the spec's "hardware" then replaces the scenario's).
// "hardware" stands for both when the scenario's `hardware` is the file of both roles. Empty: the roles are
// on two other files.
std::vector<std::string> hardware_fields_for(const config::ScenarioConfig& sc, const std::string& target) {
  const std::string pre = absolute_path(sc.prefill_hardware_file),
                    dec = absolute_path(sc.decode_hardware_file);
  bool on_pre = same_file(pre, target), on_dec = same_file(dec, target);
  if (!on_pre && !on_dec && !sc.mixed_hardware) on_pre = on_dec = true;
  const bool plain =
      same_file(absolute_path(sc.hardware_file), pre) && same_file(absolute_path(sc.hardware_file), dec);
  if (on_pre && on_dec && plain) return {"hardware"};
  std::vector<std::string> fields;
  if (on_pre) fields.push_back("hardware_prefill");
  if (on_dec) fields.push_back("hardware_decode");
  return fields;
}

// Every point's scenario loads with its sets and with the file to fit for the roles its runs replace
// (hardware_fields_for), or with the engine file to fit. The file to fit is the spec's "engine" or
// "hardware" or, without either, the one hardware file both roles of every point's scenario run on. Sets
// spec.target_file and each point's target_fields.
Status check_points(CalibrationSpec& spec) {
  std::string first_point;
  for (size_t i = 0; i < spec.points.size(); ++i) {
    MeasuredPoint& p = spec.points[i];
    const std::string field = fmt::format("points[{}].scenario", i);
    StatusOr<std::string> file = resolve_file(spec.file, field, p.scenario, nullptr);
    if (!file) return file.status();
    p.scenario = *file;
    const auto error = [&](const std::string& what) {
      return Status::error(fmt::format("{}: points[{}] ({}): {}", spec.file, i, p.name, what));
    };
    StatusOr<config::ScenarioConfig> sc = config::load_scenario(p.scenario, p.sets);
    if (!sc) return error(sc.status().message());
    if (spec.target_kind == "engine") {
      // Every point runs the one engine file to fit: the spec's, or the one every point's scenario names.
      const std::string engine = absolute_path(sc->engine_file);
      if (spec.target_file.empty()) {
        spec.target_file = engine;
        first_point = p.name;
      } else if (!same_file(engine, spec.target_file) && !first_point.empty()) {
        return Status::error(
            fmt::format("{}: engine: expected the engine file to fit, since the points' scenarios name "
                        "different ones ({} for {}, {} for {})",
                        spec.file, spec.target_file, first_point, engine, p.name));
      }
      p.target_fields = {"engine"};
      if (StatusOr<config::ScenarioConfig> on =
              config::load_scenario(p.scenario,
                                    [&] {
                                      std::vector<std::string> sets = p.sets;
                                      sets.push_back("engine=" + spec.target_file);
                                      return sets;
                                    }());
          !on)
        return error(on.status().message());
      continue;
    }
    const std::string pre = absolute_path(sc->prefill_hardware_file),
                      dec = absolute_path(sc->decode_hardware_file);
    if (spec.target_file.empty() ||
        (!first_point.empty() && (sc->mixed_hardware || !same_file(pre, spec.target_file)))) {
      if (sc->mixed_hardware)
        return Status::error(
            fmt::format("{}: hardware: expected the hardware file to fit, since points[{}] ({}) runs "
                        "prefill on {} and decode on {}",
                        spec.file, i, p.name, pre, dec));
      if (!spec.target_file.empty())
        return Status::error(
            fmt::format("{}: hardware: expected the hardware file to fit, since the points' scenarios "
                        "name different ones ({} for {}, {} for {})",
                        spec.file, spec.target_file, first_point, pre, p.name));
      spec.target_file = pre;
      first_point = p.name;
    }
    p.target_fields = hardware_fields_for(*sc, spec.target_file);
    if (p.target_fields.empty())
      return error(fmt::format(
          "expected a scenario with a role on the hardware file to fit ({}), got prefill on {} and decode "
          "on {}",
          spec.target_file, pre, dec));
    std::vector<std::string> sets = p.sets;
    for (const auto& f : p.target_fields) sets.push_back(f + "=" + spec.target_file);
    if (StatusOr<config::ScenarioConfig> on = config::load_scenario(p.scenario, sets); !on)
      return error(on.status().message());
  }
  return Status::ok();
}

// Each parameter's bounds and start are values the file to fit takes at its key.
Status check_parameters(const CalibrationSpec& spec) {
  for (size_t j = 0; j < spec.parameters.size(); ++j) {
    const FreeParameter& p = spec.parameters[j];
    for (const auto& [what, v] :
         {std::pair<const char*, double>{"lower", p.lower}, {"upper", p.upper}, {"start", p.start}}) {
      nlohmann::ordered_json doc = spec.target;
      Status s =
          set_key(doc, p.key, v)
              ? Status::ok()
              : Status::error(fmt::format("{}: a part of the path is not an object", spec.target_file));
      if (s)
        s = spec.target_kind == "engine" ? config::parse_engine(doc.dump(), spec.target_file).status()
                                         : config::parse_hardware(doc.dump(), spec.target_file).status();
      if (!s)
        return Status::error(
            fmt::format("{}: parameters[{}]: {} = {:g} (its {}) is not a value the {} file takes: {}",
                        spec.file, j, p.key, v, what, spec.target_kind, s.message()));
    }
  }
  return Status::ok();
}

}  // namespace

const std::vector<std::string>& calibration_quantities() {
  static const std::vector<std::string> q = [] {
    std::vector<std::string> out = {"summary.jct_s",
                                    "summary.sim_end_s",
                                    "summary.prompt_tokens_per_s",
                                    "summary.gen_tokens_per_s",
                                    "summary.hit_rate",
                                    "summary.slo_attainment"};
    for (const char* latency : {"ttft_s", "tpot_s", "ttst_s"})
      for (const char* stat : {"mean", "p50", "p90", "p99", "max"})
        out.push_back(fmt::format("summary.{}.{}", latency, stat));
    for (const char* part : {"queue", "read", "prefill", "alloc_after_first_token"})
      out.push_back(fmt::format("summary.ttft_breakdown_s.{}", part));
    return out;
  }();
  return q;
}

StatusOr<CalibrationSpec> load_calibration_spec(const std::string& path) {
  StatusOr<nlohmann::json> doc = config::read_json_file(path);
  if (!doc) return doc.status();
  CalibrationSpec spec;
  spec.file = path;
  JsonReader r(*doc, path, "");
  spec.name = r.string("name", fs::path(path).stem().string());
  spec.description = r.string("description", "");
  config::read_notes(r);
  const std::string hardware = r.string("hardware", "");
  const std::string engine = r.string("engine", "");
  if (r.ok() && !hardware.empty() && !engine.empty())
    r.fail("engine", "absent when \"hardware\" is given (a spec fits the values of one file)",
           r.raw("engine"));
  spec.target_kind = engine.empty() ? "hardware" : "engine";
  spec.parameters = read_array<FreeParameter>(
      r, "parameters", "an array of 1 to 3 free parameters ({\"key\", \"lower\", \"upper\"})",
      read_parameter);
  if (r.ok() && spec.parameters.size() > kMaxCalibrationParameters)
    r.fail_message(fmt::format("{}: parameters: expected at most {} free parameters, got {}", path,
                               kMaxCalibrationParameters, spec.parameters.size()));
  for (size_t j = 0; r.ok() && j < spec.parameters.size(); ++j)
    for (size_t k = 0; k < j; ++k)
      if (spec.parameters[k].key == spec.parameters[j].key)
        r.fail_message(
            fmt::format("{}: parameters[{}].key: expected a key not fitted already, got \"{}\" (as "
                        "parameters[{}])",
                        path, j, spec.parameters[j].key, k));
  spec.points = read_array<MeasuredPoint>(
      r, "points",
      "an array of measured points ({\"name\", \"scenario\", \"quantity\", \"measured\", \"tolerance\"})",
      [&](JsonReader& e, MeasuredPoint& p) { read_point(e, p, spec.target_kind); });
  for (size_t i = 0; r.ok() && i < spec.points.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (spec.points[k].name == spec.points[i].name)
        r.fail_message(
            fmt::format("{}: points[{}].name: expected a name not used already, got \"{}\" (as points[{}])",
                        path, i, spec.points[i].name, k));
  if (r.ok() && spec.points.size() < spec.parameters.size())
    r.fail_message(
        fmt::format("{}: points: expected at least as many measured points as free parameters ({}), got "
                    "{}: fewer measurements do not determine the values",
                    path, spec.parameters.size(), spec.points.size()));
  SIM_RETURN_IF_ERROR(r.finish());

  const std::string& named = engine.empty() ? hardware : engine;
  if (!named.empty()) {
    StatusOr<std::string> f = resolve_file(path, spec.target_kind, named, spec.target_kind.c_str());
    if (!f) return f.status();
    spec.target_file = *f;
  }
  SIM_RETURN_IF_ERROR(check_points(spec));
  if (spec.target_kind == "engine") {
    StatusOr<config::EngineSpec> e = config::load_engine(spec.target_file);
    if (!e) return Status::error(fmt::format("{}: engine: {}", path, e.status().message()));
    spec.target_name = e->name;
  } else {
    StatusOr<config::HardwareSpec> hw = config::load_hardware(spec.target_file);
    if (!hw) return Status::error(fmt::format("{}: hardware: {}", path, hw.status().message()));
    spec.target_name = hw->name;
  }
  StatusOr<std::string> text = config::read_text_file(
      spec.target_file, fmt::format("a {} file", spec.target_kind), config::kMaxJsonFileBytes);
  if (!text) return text.status();
  spec.target = nlohmann::ordered_json::parse(*text, nullptr, false);
  SIM_RETURN_IF_ERROR(check_parameters(spec));
  return spec;
}

std::optional<double> number_at(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json* node = &j;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return std::nullopt;
    node = &(*node)[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!node->is_number() || !std::isfinite(node->get<double>())) return std::nullopt;
  return node->get<double>();
}

nlohmann::ordered_json target_with(const CalibrationSpec& spec, const std::vector<double>& values) {
  SIM_CHECK(values.size() == spec.parameters.size(), "{} values for {} parameters", values.size(),
            spec.parameters.size());
  nlohmann::ordered_json doc = spec.target;
  for (size_t j = 0; j < values.size(); ++j)
    SIM_CHECK(set_key(doc, spec.parameters[j].key, values[j]), "key {}", spec.parameters[j].key);
  return doc;
}

}  // namespace sim::study
