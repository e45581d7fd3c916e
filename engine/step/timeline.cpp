#include "step/timeline.h"

#include "topology/topology.h"

#include <algorithm>

namespace railyard::engine {

std::vector<LinkShare> StepTimeline::phaseLinks(const Phase &phase) const
{
    std::vector<LinkShare> out;
    if (phase.pattern < 0 || static_cast<std::size_t>(phase.pattern) >= patterns.size())
        return out;
    const auto &links = patterns[static_cast<std::size_t>(phase.pattern)].links;
    out.reserve(links.size());
    const float s = static_cast<float>(phase.share);
    for (const LinkShare &l : links)
        out.push_back({l.link, l.up * s, l.down * s});
    return out;
}

int StepTimeline::segmentAt(const Phase &phase, double t) const
{
    for (int i = 0; i < phase.segments; ++i) {
        const int at = phase.firstSegment + i;
        if (t < segments[static_cast<std::size_t>(at)].end || i + 1 == phase.segments)
            return at;
    }
    return -1;
}

double StepTimeline::shareRateAt(const Phase &phase, double t) const
{
    const int i = segmentAt(phase, t);
    if (i < 0)
        return phase.duration() > 0 ? phase.share / phase.duration() : 0.0;
    const PhaseSegment &g = segments[static_cast<std::size_t>(i)];
    return g.end > g.start ? phase.share * g.fraction / (g.end - g.start) : 0.0;
}

std::vector<int> StepTimeline::runningAt(double t) const
{
    std::vector<int> out;
    for (std::size_t i = 0; i < phases.size(); ++i)
        if (phases[i].start <= t && t < phases[i].end)
            out.push_back(static_cast<int>(i));
    return out;
}

std::vector<int> StepTimeline::segmentsAt(const std::vector<int> &running, double t) const
{
    std::vector<int> out;
    for (const int i : running) {
        const int g = segmentAt(phases[static_cast<std::size_t>(i)], t);
        if (g >= 0)
            out.push_back(g);
    }
    return out;
}

void utilizationAt(const StepTimeline &tl,
                   const Topology &t,
                   double at,
                   std::vector<float> &out,
                   std::vector<std::uint8_t> *reverse)
{
    const auto &links = t.links();
    out.assign(links.size(), 0.0f);
    if (reverse)
        reverse->assign(links.size(), 0);
    // Rates per direction summed over the running phases, then the busier direction; only the
    // links the running phases touch are visited after the clear (a few thousand of 141,000
    // at 16,384 GPUs).
    static thread_local std::vector<float> down;
    static thread_local std::vector<int> touched;
    down.assign(links.size(), 0.0f);
    touched.clear();
    for (const Phase &p : tl.phases) {
        if (p.pattern < 0 || !(p.start <= at && at < p.end) || p.duration() <= 0)
            continue;
        const double perS = tl.shareRateAt(p, at);
        for (const LinkShare &l : tl.patterns[static_cast<std::size_t>(p.pattern)].links) {
            if (l.up == 0 && l.down == 0)
                continue;
            const std::size_t i = static_cast<std::size_t>(l.link);
            if (out[i] == 0 && down[i] == 0)
                touched.push_back(l.link); // once: from now on one of the two is positive
            out[i] += static_cast<float>(l.up * perS);
            down[i] += static_cast<float>(l.down * perS);
        }
    }
    for (const int link : touched) {
        const std::size_t i = static_cast<std::size_t>(link);
        if (reverse && down[i] > out[i])
            (*reverse)[i] = 1;
        const float busiest = std::max(out[i], down[i]);
        const double rate = links[i].effectiveGbPerS() * 1e9;
        out[i] = rate > 0 ? static_cast<float>(busiest / rate) : 0.0f;
    }
}

unsigned kindsOnLink(const StepTimeline &tl, int link)
{
    unsigned kinds = 0;
    for (const TrafficPattern &p : tl.patterns) {
        const auto it = std::lower_bound(p.links.begin(),
                                         p.links.end(),
                                         link,
                                         [](const LinkShare &l, int id) { return l.link < id; });
        if (it != p.links.end() && it->link == link && (it->up > 0 || it->down > 0))
            kinds |= 1u << static_cast<unsigned>(p.kind);
    }
    return kinds;
}

} // namespace railyard::engine
