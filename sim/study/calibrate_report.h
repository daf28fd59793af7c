// The outputs of `dpsim calibrate` (calibrate.h): DIR/calibration.json, DIR/<file name>-calibrated.json
// and the text it prints. Pure.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/study/calibrate.h"

namespace sim::study {

// Writes c.calibration_file (the fit, the residuals, the sensitivities, every candidate, the runs and the
// wall time) and c.calibrated_file (the spec's file to fit at the fitted values, named
// "<name>-calibrated", with a "sources" entry per fitted key: what it was fitted on, the outcome, the
// command and the value it replaces). REQUIRES: c.outcome is kFitted or kNotFitted.
Status write_calibration(const CalibrationSpec& spec, const CalibrateOptions& options, const Calibration& c);

// The text `dpsim calibrate` prints: why the search stopped, the fitted values and their spread, each
// point's residual against its tolerance, the sensitivities and whether the points determine the values,
// and where the files are.
std::string calibration_report(const CalibrationSpec& spec, const CalibrateOptions& options,
                               const Calibration& c);

}  // namespace sim::study
