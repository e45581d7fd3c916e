// What a phase's bytes come to (traffic.h): its time on its busiest link or port, the bytes
// and links it loads, and the step's totals and peaks over the phases.
#include "collectives/traffic.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

namespace {

// A link's achieved rate in a phase: its line rate, scaled by its kind's factor (when any is
// not 1) and by its leaf's uplink efficiency (spine uplinks).
inline double achievedRate(const LinkRates::Entry &r,
                           LinkKind kind,
                           bool scaled,
                           const std::array<double, 5> &kindScale,
                           const std::vector<double> &leafEff)
{
    double rate = double(r.rate);
    if (scaled)
        rate *= kindScale[static_cast<std::size_t>(kind)];
    if (r.uplinkLeaf >= 0)
        rate *= leafEff[static_cast<std::size_t>(r.uplinkLeaf)];
    return rate;
}

} // namespace

double LinkTraffic::uplinkEfficiency(int leaf) const
{
    return m_leafEff[static_cast<std::size_t>(leaf)];
}

double LinkTraffic::phaseTime()
{
    commitPhase();
    double worst = 0;
    int worstPort = -1;
    m_bottleneck = -1;
    m_nvlinkTime = 0;
    m_otherTime = 0;
    const double nvScale = m_kindScale[static_cast<std::size_t>(LinkKind::NvLink)];
    for (int g : m_touchedPorts) {
        const Cell &c = m_ports[static_cast<std::size_t>(g)];
        const double rate = m_t->gpuNvlinkRate(g) * 1e9 * nvScale;
        if (rate <= 0)
            continue;
        const double t = std::max(c.up, c.down) / rate;
        if (t > worst) {
            worst = t;
            worstPort = g;
        }
    }
    m_nvlinkTime = worst;
    const bool scaled = m_kindScale != std::array<double, 5>{1, 1, 1, 1, 1};
    for (int l : m_touched) {
        const std::size_t i = static_cast<std::size_t>(l);
        const Cell &c = m_cells[i];
        const LinkRates::Entry &r = m_rates->links[i];
        const double rate = achievedRate(r, m_t->links()[i].kind, scaled, m_kindScale, m_leafEff);
        if (rate <= 0)
            continue;
        const double t = double(std::max(c.up, c.down)) / rate;
        if (!m_rates->links[i].nvlink)
            m_otherTime = std::max(m_otherTime, t);
        else
            m_nvlinkTime = std::max(m_nvlinkTime, t);
        if (t > worst) {
            worst = t;
            m_bottleneck = l;
            worstPort = -1;
        }
    }
    if (worstPort >= 0 && !m_t->gpuNvlinks(worstPort).empty())
        m_bottleneck = m_t->gpuNvlinks(worstPort)[0];
    // Each link's share of this phase's time, kept where it is its busiest.
    if (worst > 0 && m_keepTotals) {
        for (int g : m_touchedPorts) {
            const Cell &c = m_ports[static_cast<std::size_t>(g)];
            const double rate = m_t->gpuNvlinkRate(g) * 1e9 * nvScale;
            if (rate > 0) {
                float &p = m_portPeak[static_cast<std::size_t>(g)];
                p = std::max(p, static_cast<float>(std::max(c.up, c.down) / rate / worst));
            }
        }
        for (int l : m_touched) {
            const std::size_t i = static_cast<std::size_t>(l);
            const LinkRates::Entry &r = m_rates->links[i];
            const double rate = achievedRate(r, m_t->links()[i].kind, scaled, m_kindScale, m_leafEff);
            if (rate > 0)
                m_peak[i] = std::max(m_peak[i],
                                     static_cast<float>(std::max(m_cells[i].up, m_cells[i].down)
                                                        / rate / worst));
        }
    }
    return worst;
}

template<class PortOk, class LinkOk>
void LinkTraffic::phaseMaxima(std::span<const int> ports,
                              std::span<const int> links,
                              PortOk portOk,
                              LinkOk linkOk,
                              double &nvlinkS,
                              double &otherS) const
{
    // phaseTime()'s two maxima, read over the given ports and links only (those this phase
    // touched).
    nvlinkS = 0;
    otherS = 0;
    const double nvScale = m_kindScale[static_cast<std::size_t>(LinkKind::NvLink)];
    for (int g : ports) {
        const Cell &c = m_ports[static_cast<std::size_t>(g)];
        const double rate = m_t->gpuNvlinkRate(g) * 1e9 * nvScale;
        if (c.stamp != m_phase || !portOk(g) || rate <= 0)
            continue;
        nvlinkS = std::max(nvlinkS, std::max(c.up, c.down) / rate);
    }
    const bool scaled = m_kindScale != std::array<double, 5>{1, 1, 1, 1, 1};
    for (int l : links) {
        const std::size_t i = static_cast<std::size_t>(l);
        const Cell &c = m_cells[i];
        if (c.stamp != m_phase || !linkOk(i))
            continue;
        const LinkRates::Entry &r = m_rates->links[i];
        const double rate = achievedRate(r, m_t->links()[i].kind, scaled, m_kindScale, m_leafEff);
        if (rate <= 0)
            continue;
        const double t = double(std::max(c.up, c.down)) / rate;
        double &worst = r.nvlink ? nvlinkS : otherS;
        worst = std::max(worst, t);
    }
}

void LinkTraffic::phaseTimesWithin(const std::vector<std::uint8_t> &links,
                                   int gpus,
                                   double &nvlinkS,
                                   double &otherS) const
{
    phaseMaxima(
            m_touchedPorts,
            m_touched,
            [gpus](int g) { return g < gpus; },
            [&links](std::size_t i) { return i < links.size() && links[i]; },
            nvlinkS,
            otherS);
}

void LinkTraffic::phaseTimesOver(std::span<const int> ports,
                                 std::span<const int> links,
                                 double &nvlinkS,
                                 double &otherS) const
{
    phaseMaxima(
            ports,
            links,
            [](int) { return true; },
            [](std::size_t) { return true; },
            nvlinkS,
            otherS);
}

namespace {
double laneShare(const Topology &t, int gpu, int link)
{
    double lanes = 0;
    for (int l : t.gpuNvlinks(gpu))
        lanes += t.links()[static_cast<std::size_t>(l)].workingLanes();
    return lanes > 0 ? t.links()[static_cast<std::size_t>(link)].workingLanes() / lanes : 0.0;
}
} // namespace

double LinkTraffic::phaseOn(int link, float Cell::*direction) const
{
    const std::size_t l = static_cast<std::size_t>(link);
    const Link &k = m_t->links()[l];
    if (k.kind == LinkKind::NvLink && !m_direct) {
        const Cell &c = m_ports[static_cast<std::size_t>(k.a)];
        return c.stamp == m_phase ? c.*direction * laneShare(*m_t, k.a, link) : 0.0;
    }
    return m_cells[l].stamp == m_phase ? m_cells[l].*direction : 0.0;
}

std::vector<int> LinkTraffic::phaseLinks(std::size_t limit) const
{
    std::vector<int> out;
    for (int g : m_touchedPorts) {
        for (int l : m_t->gpuNvlinks(g)) {
            if (out.size() >= limit)
                return out;
            out.push_back(l);
        }
    }
    for (int l : m_touched) {
        if (out.size() >= limit)
            return out;
        out.push_back(l);
    }
    return out;
}

void LinkTraffic::phaseBytes(std::vector<LinkShare> &out) const
{
    for (int g : m_touchedPorts) {
        const Cell &c = m_ports[static_cast<std::size_t>(g)];
        const auto links = m_t->gpuNvlinks(g);
        double lanes = 0;
        for (int l : links)
            lanes += m_t->links()[static_cast<std::size_t>(l)].workingLanes();
        for (int l : links) {
            const double share = m_t->links()[static_cast<std::size_t>(l)].workingLanes() / lanes;
            out.push_back({l, static_cast<float>(c.up * share), static_cast<float>(c.down * share)});
        }
    }
    for (int l : m_touched) {
        const Cell &c = m_cells[static_cast<std::size_t>(l)];
        out.push_back({l, c.up, c.down});
    }
}

void LinkTraffic::repeatPhase(double factor)
{
    spreadUplinks();
    if (!m_keepTotals)
        return;
    for (int g : m_touchedPorts) {
        const Cell &c = m_ports[static_cast<std::size_t>(g)];
        Total &t = m_portTotals[static_cast<std::size_t>(g)];
        t.up += static_cast<float>(c.up * factor);
        t.down += static_cast<float>(c.down * factor);
    }
    for (int l : m_touched) {
        const Cell &c = m_cells[static_cast<std::size_t>(l)];
        Total &t = m_totals[static_cast<std::size_t>(l)];
        t.up += static_cast<float>(c.up * factor);
        t.down += static_cast<float>(c.down * factor);
    }
}

void LinkTraffic::totals(std::vector<float> &up, std::vector<float> &down)
{
    commitPhase();
    const std::size_t n = m_totals.size();
    up.resize(n);
    down.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        up[i] = m_totals[i].up;
        down[i] = m_totals[i].down;
    }
    const int gpus = m_t->gpuCount();
    for (int g = 0; g < gpus; ++g) {
        const Total &t = m_portTotals[static_cast<std::size_t>(g)];
        if (t.up == 0 && t.down == 0)
            continue;
        const auto links = m_t->gpuNvlinks(g);
        double lanes = 0;
        for (int l : links)
            lanes += m_t->links()[static_cast<std::size_t>(l)].workingLanes();
        for (int l : links) {
            const double share = m_t->links()[static_cast<std::size_t>(l)].workingLanes() / lanes;
            up[static_cast<std::size_t>(l)] += static_cast<float>(t.up * share);
            down[static_cast<std::size_t>(l)] += static_cast<float>(t.down * share);
        }
    }
}

void LinkTraffic::peaks(std::vector<float> &peak) const
{
    peak = m_peak;
    const int gpus = m_t->gpuCount();
    for (int g = 0; g < gpus; ++g) {
        const float p = m_portPeak[static_cast<std::size_t>(g)];
        if (p == 0)
            continue;
        for (int l : m_t->gpuNvlinks(g))
            peak[static_cast<std::size_t>(l)] = std::max(peak[static_cast<std::size_t>(l)], p);
    }
}

} // namespace railyard::engine
