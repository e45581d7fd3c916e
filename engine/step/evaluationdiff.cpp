#include "step/evaluationdiff.h"

#include "base/units.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine {

std::vector<LinkChange> mostChangedLinks(const Evaluation &a, const Evaluation &b, std::size_t count)
{
    std::vector<LinkChange> out;
    if (!a.links || !b.links || a.links->size() != b.links->size())
        return out;
    const LinkLoads &la = *a.links, &lb = *b.links;
    for (std::size_t i = 0; i < la.size(); ++i) {
        if (la.utilization[i] == lb.utilization[i])
            continue;
        LinkChange c;
        c.link = static_cast<int>(i);
        c.bytesA = double(la.bytesUp[i]) + la.bytesDown[i];
        c.bytesB = double(lb.bytesUp[i]) + lb.bytesDown[i];
        c.utilizationA = la.utilization[i];
        c.utilizationB = lb.utilization[i];
        out.push_back(c);
    }
    const auto delta = [](const LinkChange &c) {
        return std::fabs(c.utilizationB - c.utilizationA);
    };
    const std::size_t keep = std::min(count, out.size());
    std::partial_sort(out.begin(),
                      out.begin() + static_cast<long>(keep),
                      out.end(),
                      [&](const LinkChange &x, const LinkChange &y) { return delta(x) > delta(y); });
    out.resize(keep);
    return out;
}

std::vector<LinkChange> linksWithChangedBytes(const Evaluation &a,
                                              const Evaluation &b,
                                              std::size_t count)
{
    if (!a.links || !b.links)
        return {};
    return linksWithChangedBytes(*a.links, *b.links, count);
}

std::vector<LinkChange> linksWithChangedBytes(const LinkLoads &la,
                                              const LinkLoads &lb,
                                              std::size_t count)
{
    std::vector<LinkChange> out;
    if (la.size() != lb.size())
        return out;
    for (std::size_t i = 0; i < la.size(); ++i) {
        const double before = double(la.bytesUp[i]) + la.bytesDown[i];
        const double after = double(lb.bytesUp[i]) + lb.bytesDown[i];
        if (std::fabs(after - before) <= 1e-6 * std::max(before, after))
            continue;
        out.push_back({static_cast<int>(i), before, after, la.utilization[i], lb.utilization[i]});
    }
    const auto order = [](const LinkChange &x, const LinkChange &y) {
        const double dx = x.bytesB - x.bytesA, dy = y.bytesB - y.bytesA;
        if ((dx > 0) != (dy > 0))
            return dx > 0;
        return std::fabs(dx) != std::fabs(dy) ? std::fabs(dx) > std::fabs(dy) : x.link < y.link;
    };
    const std::size_t keep = std::min(count, out.size());
    std::partial_sort(out.begin(), out.begin() + static_cast<long>(keep), out.end(), order);
    out.resize(keep);
    return out;
}

std::string describeChange(double before, double after, const std::string &what)
{
    if (before <= 0 || !std::isfinite(before) || !std::isfinite(after))
        return what + " changed";
    const double rel = (after - before) / before;
    if (std::fabs(rel) < 0.0005)
        return "no change in " + what;
    return (rel > 0 ? "+" : "") + formatNumber(100 * rel, 2) + "% " + what;
}

} // namespace railyard::engine
