#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace railyard::cli {

// `railyard plan FILE ...` (args[1] is "plan"): the planner's ranked configurations, or with
// --buy the cheapest cluster. Returns the exit status: 0, 2 for usage errors (reported on `err`),
// 1 when nothing fits (reported on `err`). Bad files throw InputError (the caller reports it).
int runPlan(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

} // namespace railyard::cli
