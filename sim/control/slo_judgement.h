// The SLO judgement of a finished run (scenarios/README.md, "slo"): which turns are judged, how many meet
// the bounds, and whether the run meets the SLO. The online stop rules that watch the SLO while the run
// goes are beside it (stop_rules.h). Pure: no SimGrid.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/config/scenario.h"
#include "sim/engine/recorder.h"

namespace sim::control {

// Sets summary.slo, slo_attainment and meets_slo in `summary`, over the turns judged: online, those whose
// first token came after the warm-up's end `warmup_end_s` (every turn when the run ended before the warm-up
// did, -1, and offline). slo_attainment: the fraction of them with TTFT <= slo.ttft_s and, when they
// generate more than one token, TPOT <= slo.tpot_s. meets_slo: not stopped by the TTFT rule, and the
// slo.statistic of their TTFT and of their TPOT within the bounds (false when no turn is judged).
// slo.mode = relative: a turn meets the SLO when its TTFT <= slo.ttft_scale x its unloaded TTFT and (when it
// generates more than one token) its TPOT <= slo.tpot_scale x its unloaded TPOT (TurnSample); meets_slo:
// not stopped by the TTFT rule and slo_attainment >= slo.attainment. summary.slo then adds mode, the scales,
// attainment (the target), ttft_met_share, tpot_met_share and the distributions unloaded_ttft_s,
// unloaded_tpot_s and ttft_over_unloaded over the judged turns.
void judge_slo(const config::ScenarioConfig& sc, const engine::Recorder& rec, const std::string& stopped_by,
               double warmup_end_s, nlohmann::json& summary);

}  // namespace sim::control
