#include "report/moment.h"

#include "report/report.h"

#include <algorithm>

namespace railyard::engine {

bool moveMoment(StepMoment &m,
                const StepTimeline &tl,
                const Topology &t,
                double at,
                std::size_t busiest,
                bool fresh)
{
    if (at < 0 || tl.empty()) {
        const bool had = !m.empty();
        m = StepMoment{};
        return had;
    }
    m.at = std::clamp(at, 0.0, tl.stepS);
    std::vector<int> running = tl.runningAt(m.at);
    std::vector<int> segments = tl.segmentsAt(running, m.at);
    if (!fresh && !m.utilization.empty() && running == m.running && segments == m.segments)
        return false;
    m.running = std::move(running);
    m.segments = std::move(segments);
    utilizationAt(tl, t, m.at, m.utilization, &m.reverse);
    m.busiest = busiestByUtilization(m.utilization, busiest);
    return true;
}

} // namespace railyard::engine
