#include "linkpicker.h"

#include "clustergeometry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace railyard {

namespace {

double distanceTo(const QLineF &l, const QPointF &p)
{
    const QPointF d = l.p2() - l.p1();
    const double len2 = d.x() * d.x() + d.y() * d.y();
    double t = 0;
    if (len2 > 0)
        t = std::clamp(QPointF::dotProduct(p - l.p1(), d) / len2, 0.0, 1.0);
    const QPointF q = l.p1() + t * d - p;
    return std::hypot(q.x(), q.y());
}

} // namespace

LinkPicker::LinkPicker(const ClusterGeometry &g)
{
    // Unique segments (either direction) with the links along them.
    using Key = std::tuple<double, double, double, double>;
    std::map<Key, std::vector<int>> byLine;
    const int links = g.topology().linkCount();
    for (int link = 0; link < links; ++link) {
        const QPolygonF path = g.linkPath(link);
        for (int i = 1; i < path.size(); ++i) {
            QPointF a = path[i - 1], b = path[i];
            if (std::tie(b.rx(), b.ry()) < std::tie(a.rx(), a.ry()))
                std::swap(a, b);
            byLine[Key{a.x(), a.y(), b.x(), b.y()}].push_back(link);
        }
    }
    m_segments.reserve(byLine.size());
    for (auto &[key, ls] : byLine) {
        std::sort(ls.begin(), ls.end());
        ls.erase(std::unique(ls.begin(), ls.end()), ls.end());
        m_segments.push_back(
                {QLineF(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)),
                 static_cast<int>(m_links.size()),
                 static_cast<int>(ls.size())});
        m_links.insert(m_links.end(), ls.begin(), ls.end());
    }
    const QRectF b = g.bounds();
    m_x0 = b.left();
    m_y0 = b.top();
    // About 256 x 256 cells over the cluster, no smaller than a GPU's pitch.
    m_cell = std::max({b.width() / 256, b.height() / 256, ClusterGeometry::kSlot});
    m_cols = std::max(1, static_cast<int>(std::ceil(b.width() / m_cell)) + 1);
    m_rows = std::max(1, static_cast<int>(std::ceil(b.height() / m_cell)) + 1);
    const auto cellsOf = [&](const QLineF &l, auto &&visit) {
        const QRectF r = QRectF(l.p1(), l.p2()).normalized();
        const int c0 = std::clamp(static_cast<int>((r.left() - m_x0) / m_cell), 0, m_cols - 1);
        const int c1 = std::clamp(static_cast<int>((r.right() - m_x0) / m_cell), 0, m_cols - 1);
        const int r0 = std::clamp(static_cast<int>((r.top() - m_y0) / m_cell), 0, m_rows - 1);
        const int r1 = std::clamp(static_cast<int>((r.bottom() - m_y0) / m_cell), 0, m_rows - 1);
        // Routes are horizontal and vertical: the bounding cells are the cells crossed.
        for (int y = r0; y <= r1; ++y)
            for (int x = c0; x <= c1; ++x)
                visit(y * m_cols + x);
    };
    m_cellStart.assign(static_cast<std::size_t>(m_cols * m_rows + 1), 0);
    for (const Segment &s : m_segments)
        cellsOf(s.line, [&](int c) { ++m_cellStart[static_cast<std::size_t>(c) + 1]; });
    for (std::size_t i = 1; i < m_cellStart.size(); ++i)
        m_cellStart[i] += m_cellStart[i - 1];
    m_cellSeg.resize(static_cast<std::size_t>(m_cellStart.back()));
    std::vector<int> fill(m_cellStart.begin(), m_cellStart.end() - 1);
    for (int s = 0; s < static_cast<int>(m_segments.size()); ++s)
        cellsOf(m_segments[static_cast<std::size_t>(s)].line, [&](int c) {
            m_cellSeg[static_cast<std::size_t>(fill[static_cast<std::size_t>(c)]++)] = s;
        });
}

int LinkPicker::linkAt(const QPointF &pos,
                       double tolerance,
                       const std::function<double(int)> &rank) const
{
    const int c0 = std::clamp(static_cast<int>((pos.x() - tolerance - m_x0) / m_cell),
                              0,
                              m_cols - 1);
    const int c1 = std::clamp(static_cast<int>((pos.x() + tolerance - m_x0) / m_cell),
                              0,
                              m_cols - 1);
    const int r0 = std::clamp(static_cast<int>((pos.y() - tolerance - m_y0) / m_cell),
                              0,
                              m_rows - 1);
    const int r1 = std::clamp(static_cast<int>((pos.y() + tolerance - m_y0) / m_cell),
                              0,
                              m_rows - 1);
    int best = -1;
    double bestDistance = tolerance;
    double bestRank = -1;
    for (int y = r0; y <= r1; ++y)
        for (int x = c0; x <= c1; ++x) {
            const std::size_t c = static_cast<std::size_t>(y * m_cols + x);
            for (int i = m_cellStart[c]; i < m_cellStart[c + 1]; ++i) {
                const Segment &s = m_segments[static_cast<std::size_t>(m_cellSeg[std::size_t(i)])];
                const double d = distanceTo(s.line, pos);
                if (d > bestDistance + 1e-6)
                    continue;
                // A nearer segment wins; on segments as near, the link ranked highest.
                if (d < bestDistance - 1e-6) {
                    best = -1;
                    bestDistance = d;
                }
                for (int k = s.firstLink; k < s.firstLink + s.linkCount; ++k) {
                    const int link = m_links[static_cast<std::size_t>(k)];
                    const double r = rank ? rank(link) : 0.0;
                    if (best < 0 || r > bestRank) {
                        best = link;
                        bestRank = r;
                    }
                }
            }
        }
    return best;
}

} // namespace railyard
