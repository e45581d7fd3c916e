#pragma once

#include <cstddef>
#include <memory>

namespace railyard::engine {

class LinkTraffic;
class Topology;
struct LinkLoads;
struct LinkRates;
struct TimelineScratch;

// The scratch space of evaluate(): per-link traffic buffers as large as the topology (a million
// links at 131k GPUs), which cost more to allocate and zero than an evaluation takes. The
// caller owns one and passes it to every evaluation it makes (a document keeps one for its
// life); evaluate() binds it to the topology it prices, which takes that topology's link rates
// (read again for any other build than the last, whatever its address or sizes) and
// reallocates only when the sizes change. One workspace serves one
// evaluation at a time: not to be shared between threads.
class EvaluationWorkspace
{
public:
    EvaluationWorkspace();
    ~EvaluationWorkspace();
    EvaluationWorkspace(EvaluationWorkspace &&) noexcept;
    EvaluationWorkspace &operator=(EvaluationWorkspace &&) noexcept;
    EvaluationWorkspace(const EvaluationWorkspace &) = delete;
    EvaluationWorkspace &operator=(const EvaluationWorkspace &) = delete;

    // Points the buffers at `topology` (which must outlive their use) for a new evaluation.
    void bind(const Topology &topology);
    LinkTraffic &traffic();  // the step's phases
    LinkTraffic &planning(); // scratch for choosing each collective's algorithm
    // Buffers for an evaluation's link loads: the last evaluation's, when no Evaluation holds
    // them any more (fresh pages for a million links cost more than filling them).
    std::shared_ptr<LinkLoads> linkLoads();
    // The step timeline's per-link scratch (timelinescratch.h).
    TimelineScratch &timeline();

private:
    std::unique_ptr<LinkRates> m_rates; // read once per bind, shared by both traffics
    std::unique_ptr<LinkTraffic> m_traffic;
    std::unique_ptr<LinkTraffic> m_planning;
    std::shared_ptr<LinkLoads> m_loads;
    std::unique_ptr<TimelineScratch> m_timeline;
};

} // namespace railyard::engine
