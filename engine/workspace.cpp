#include "workspace.h"

#include "evaluate.h"
#include "traffic.h"

#include <stdexcept>

namespace railyard::engine {

EvaluationWorkspace::EvaluationWorkspace() = default;
EvaluationWorkspace::~EvaluationWorkspace() = default;
EvaluationWorkspace::EvaluationWorkspace(EvaluationWorkspace &&) noexcept = default;
EvaluationWorkspace &EvaluationWorkspace::operator=(EvaluationWorkspace &&) noexcept = default;

void EvaluationWorkspace::bind(const Topology &topology)
{
    if (m_traffic)
        m_traffic->bind(topology);
    else
        m_traffic = std::make_unique<LinkTraffic>(topology);
    if (m_planning)
        m_planning->bind(topology);
    else
        m_planning = std::make_unique<LinkTraffic>(topology);
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

} // namespace railyard::engine
