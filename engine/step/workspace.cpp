#include "step/workspace.h"

#include "collectives/traffic.h"
#include "step/evaluate.h"
#include "step/timelinescratch.h"

#include <stdexcept>

namespace railyard::engine {

EvaluationWorkspace::EvaluationWorkspace() = default;
EvaluationWorkspace::~EvaluationWorkspace() = default;
EvaluationWorkspace::EvaluationWorkspace(EvaluationWorkspace &&) noexcept = default;
EvaluationWorkspace &EvaluationWorkspace::operator=(EvaluationWorkspace &&) noexcept = default;

void EvaluationWorkspace::bind(const Topology &topology)
{
    // Rates always come from the topology being priced: another one with the same counts (a
    // tuning change, rebuilt in the same place) has other rates. They are read again unless
    // they came from this very build (a topology never changes once built): reading a million
    // links costs more than the rest of the binding.
    if (!m_rates)
        m_rates = std::make_unique<LinkRates>();
    if (topology.buildId() == 0 || m_rates->source != topology.buildId()
        || m_rates->links.size() != topology.links().size())
        m_rates->fill(topology);
    if (!m_traffic)
        m_traffic = std::make_unique<LinkTraffic>();
    if (!m_planning) {
        m_planning = std::make_unique<LinkTraffic>();
        m_planning->keepStepTotals(false); // scratch: prices one collective at a time
    }
    m_traffic->bind(topology, *m_rates);
    m_planning->bind(topology, *m_rates);
}

LinkTraffic &EvaluationWorkspace::traffic()
{
    if (!m_traffic)
        throw std::logic_error("EvaluationWorkspace used before bind()");
    return *m_traffic;
}

LinkTraffic &EvaluationWorkspace::planning()
{
    if (!m_planning)
        throw std::logic_error("EvaluationWorkspace used before bind()");
    return *m_planning;
}

std::shared_ptr<LinkLoads> EvaluationWorkspace::linkLoads()
{
    if (!m_loads || m_loads.use_count() != 1)
        m_loads = std::make_shared<LinkLoads>();
    return m_loads;
}

TimelineScratch &EvaluationWorkspace::timeline()
{
    if (!m_timeline)
        m_timeline = std::make_unique<TimelineScratch>();
    return *m_timeline;
}

} // namespace railyard::engine
