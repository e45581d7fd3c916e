#pragma once

#include "report/report.h"
#include "serving/servingevaluate.h"
#include "topology/topology.h"

#include <iosfwd>

namespace railyard::engine {

// The `evaluate --json` object of a serving layout (DESIGN.md, "Serving (inference)
// workloads"; README, "JSON output"). Links go out row by row, as the training report's.
void writeServingJson(std::ostream &out,
                      const ServingEvaluation &evaluation,
                      const Topology &topology,
                      const ReportOptions &options);
// The same for people.
void writeServingText(std::ostream &out,
                      const ServingEvaluation &evaluation,
                      const Topology &topology,
                      const ReportOptions &options);

} // namespace railyard::engine
