#include "segmentloads.h"

#include "scene/canvasstate.h"
#include "scene/clustergeometry.h"

#include <QPainter>

#include <algorithm>
#include <map>
#include <tuple>

namespace railyard {

SegmentLoads::SegmentLoads(const ClusterGeometry &g, std::span<const int> links)
{
    // Keyed by the segment as drawn (a -> b along the route); a segment run both ways by
    // different links is two entries, each with its own direction.
    using Key = std::tuple<double, double, double, double>;
    std::map<Key, std::vector<int>> byLine;
    for (int link : links) {
        const QPolygonF path = g.linkPath(link);
        for (int i = 1; i < path.size(); ++i)
            byLine[Key{path[i - 1].x(), path[i - 1].y(), path[i].x(), path[i].y()}].push_back(link);
    }
    m_segments.reserve(byLine.size());
    for (auto &[key, ls] : byLine) {
        const QLineF line(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key));
        m_segments.push_back({line,
                              QRectF(line.p1(), line.p2()).normalized().adjusted(-1, -1, 1, 1),
                              static_cast<int>(m_links.size()),
                              static_cast<int>(ls.size())});
        m_links.insert(m_links.end(), ls.begin(), ls.end());
    }
}

void SegmentLoads::draw(QPainter *painter,
                        const CanvasState &state,
                        Detail detail,
                        const QRectF &visible)
{
    for (auto &b : m_buckets)
        b.clear();
    m_idle.clear();
    const bool dashes = state.dashes();
    for (const Segment &s : m_segments) {
        if (!visible.intersects(s.box))
            continue;
        double busiest = 0;
        int top = -1;
        for (int k = s.firstLink; k < s.firstLink + s.linkCount; ++k) {
            const int link = m_links[static_cast<std::size_t>(k)];
            const double u = state.load(link);
            if (u > busiest) {
                busiest = u;
                top = link;
            }
        }
        if (top < 0) {
            m_idle.push_back(s.line);
            continue;
        }
        // The dashes run the way the busiest link's traffic goes.
        const bool back = dashes && state.reversed(top);
        m_buckets[static_cast<std::size_t>(paint::loadStep(busiest))].push_back(
                back ? QLineF(s.line.p2(), s.line.p1()) : s.line);
    }
    if (!m_idle.empty()) {
        painter->setPen(paint::loadPen(0, detail, 1.5));
        painter->drawLines(m_idle.data(), static_cast<int>(m_idle.size()));
        paintStats().linkLines += static_cast<int>(m_idle.size());
    }
    paint::drawLoadBuckets(painter, m_buckets, detail, dashes ? state.dashPhase : -1);
}

} // namespace railyard
