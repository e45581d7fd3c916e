#pragma once

#include "layout/softwarestack.h"
#include "step/evaluate.h"

#include <string>
#include <vector>

namespace railyard::engine {

class Topology;
class EvaluationWorkspace;

// A layout that names no software stack is priced with the engine's generic one, but the stack
// that really runs it can move the step a long way: attention and norm kernels, which
// communication overlaps, ZeRO-3's gathers (DeepSpeed's 2021 ZeRO-3 and FSDP2 are 5x apart on
// one configuration), MoE routing. So the step is priced again as each stack it may be running
// would run it, and the band is widened to cover them and says so (issue 19).

// The stacks a layout that names none may be running on GPUs of `architecture`: every known
// stack, less the 2021-2022 ones (StackProfile::preHopper) on Hopper and Blackwell.
std::vector<const StackProfile *> candidateStacks(const std::string &architecture);

// Prices `layout` (which names no stack) as each candidate stack would run it (its attention,
// overlap and gradient defaults and its constants; numbers only), fills e.stackRange, widens
// e.stepTimeBand to hold the fastest and the slowest, rewrites the band's assumption line and
// adds an Info warning "no-stack". `e` must be the evaluation of `layout` and ok.
void applyStackRange(Evaluation &e,
                     const Layout &layout,
                     const Topology &topology,
                     EvaluationWorkspace &workspace);

} // namespace railyard::engine
