#pragma once

#include "layout/softwarestack.h"
#include "step/evaluate.h"

#include <functional>
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
// adds an Info warning "no-stack". `e` must be the evaluation of `layout` and ok. The same as
// mergeStackRange(e, priceStackRange(layout, topology, workspace)).
void applyStackRange(Evaluation &e,
                     const Layout &layout,
                     const Topology &topology,
                     EvaluationWorkspace &workspace);

// The pricing part of applyStackRange: `layout` (the job the step ran, re-formed when GPUs are
// out) as each candidate stack would run it, in `workspace` (bound to `topology`). Empty
// (stacks == 0) when the layout names a stack, when no stack prices it, or when `cancelled`
// (asked between two stacks) says to stop. Throws what the step model throws.
StackRange priceStackRange(const Layout &layout,
                           const Topology &topology,
                           EvaluationWorkspace &workspace,
                           const std::function<bool()> &cancelled = {});

// The merging part of applyStackRange: widens `e`'s band to `range`, says so in its basis and
// its assumption line and adds the "no-stack" warning. Nothing when `range` is empty, `e` is
// not ok or already holds a range.
void mergeStackRange(Evaluation &e, const StackRange &range);

// The range evaluate(layout, topology, workspace, {.stackRange = true}) merges, on its own
// (for a caller that shows the evaluation first and widens it later, on another thread with
// a workspace of its own): binds `workspace`, re-forms the job around GPUs out as evaluate()
// does. Never throws for a bad configuration (the range is then empty).
StackRange evaluateStackRange(const Layout &layout,
                              const Topology &topology,
                              EvaluationWorkspace &workspace,
                              const std::function<bool()> &cancelled = {});

} // namespace railyard::engine
