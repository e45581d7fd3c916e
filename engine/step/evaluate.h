#pragma once

#include "collectives/collective.h"
#include "layout/layout.h"
#include "layout/parallel.h"
#include "step/memory.h"
#include "step/timeline.h"
#include "step/workspace.h"
#include "topology/topology.h"

#include <memory>
#include <string>
#include <vector>

namespace railyard::engine {

// Seconds per training step, by what the GPUs are doing. "Exposed" is what adds to the step
// after overlap with compute; "total" is the time the operation takes on its own.
struct StepBreakdown
{
    double compute = 0;
    double tp = 0;
    double cp = 0;
    double ep = 0;
    double ppBubble = 0;
    double ppP2p = 0;
    double dp = 0;
    double optimizer = 0;
    double sum() const { return compute + tp + cp + ep + ppBubble + ppP2p + dp + optimizer; }
};

// Per-link load over one step, dense by link id (zero for idle links), so a view can look a
// link up directly. Shared: the evaluation that made it may be long gone.
struct LinkLoads
{
    std::vector<float> bytesUp;     // per step, a -> b
    std::vector<float> bytesDown;   // per step, b -> a
    std::vector<float> utilization; // busiest direction's bytes / (achieved rate x step time)
    // The link's share of the busiest phase it carries (1: it bounds that phase, saturated
    // while it runs). Average utilization hides a link that is saturated briefly.
    std::vector<float> peakUtilization;
    std::size_t loaded = 0; // links with any traffic
    std::size_t size() const { return utilization.size(); }
};

enum class Severity { Info, Warning, Error };

struct Warning
{
    Severity severity = Severity::Warning;
    std::string code;      // "tp-spans-domains", "out-of-memory", ...
    std::string message;   // for people: "TP group 3 spans two NVLink domains (+38% TP time)"
    std::vector<int> gpus; // the GPUs concerned (to select them)
    double costS = 0;      // extra seconds per step it costs, when known
};

// How sure the step time is: a band from the validation residuals of runs like this one
// (engine/fidelity.h).
struct StepTimeBand
{
    double lowS = 0, highS = 0;
    double fraction = 0; // half-width as a share of the step time ("18.8 s ±8%")
    std::string basis;   // what it rests on, in words (also among the assumptions)
};

// The step as the stacks a layout that names none may be running would price it.
struct StackRange
{
    int stacks = 0; // 0: not priced (a stack is named, or not asked for)
    double fastestS = 0, slowestS = 0;
    std::string fastest, slowest; // stack ids
};

struct Evaluation
{
    bool ok = false;
    std::string error; // why the step cannot be priced (when !ok)
    double stepTimeS = 0;
    StepTimeBand stepTimeBand;
    StackRange stackRange;
    double tokensPerStep = 0;
    double tokensPerS = 0;
    double tokensPerSPerGpu = 0;
    double mfu = 0; // model FLOPs / (time x GPUs x dense BF16 peak), FP8 runs too
    // In FP8 (on a GPU with FP8 tensor cores): the same against the dense FP8 peak, twice the
    // BF16 one, which FP8 runs can pass 100% of; 0 otherwise.
    double mfuOfFp8Peak = 0;
    double modelTflopsPerGpu = 0;
    std::string flopConvention; // how model FLOPs were counted
    StepBreakdown exposed;      // adds up to the step time
    StepBreakdown total;        // each on its own, before overlap
    MemoryBreakdown memory;     // the most loaded pipeline stage
    std::vector<double> memoryGiBPerStage;
    double hbmGiB = 0;
    double costPerStep = 0; // dollars, from price_per_gpu_hour (0 if unknown)
    double costPerMillionTokens = 0;
    std::shared_ptr<const LinkLoads> links; // null unless asked for
    StepTimeline timeline;                  // empty unless asked for
    std::vector<Warning> warnings;
    std::vector<std::string> assumptions; // where the model is unsure, in words
};

struct EvaluateOptions
{
    bool linkLoads = true; // per-link bytes (the costliest part at 100k+ GPUs)
    // The step's phases per pipeline stage with the bytes each puts on each link (costs about
    // as much again as pricing the communication).
    bool timeline = true;
    // Collectives that run at once share the links they cross (stepschedule.h). Off: each is
    // priced with the links to itself, as if alone (to see what the sharing costs).
    bool shareLinks = true;
    // When the layout names no software stack: price the step as each stack it may be running
    // would (step/stackrange.h; one evaluation without links or timeline per stack), widen the
    // band to cover them and say so.
    bool stackRange = false;
};

// Prices one training step of the layout's workload on its topology. Never throws for a bad
// configuration: an impossible one gives ok == false and `error`; a doubtful one gives warnings.
// `workspace` is bound to `topology` first (see workspace.h); pass the same one to every
// evaluation of a session so its buffers are reused.
Evaluation evaluate(const Layout &layout,
                    const Topology &topology,
                    EvaluationWorkspace &workspace,
                    const EvaluateOptions &options = {});
// The same in a workspace of its own (allocated for this one evaluation).
Evaluation evaluate(const Layout &layout,
                    const Topology &topology,
                    const EvaluateOptions &options = {});

} // namespace railyard::engine
