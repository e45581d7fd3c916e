#pragma once

#include <QLineF>
#include <QPointF>

#include <functional>
#include <vector>

namespace railyard {

class ClusterGeometry;

// Finds the link under the pointer from the routes the canvas draws (ClusterGeometry::linkPath).
// Routes share trunks and lanes, so segments are kept once with the links that run along them,
// bucketed by a uniform grid; built once per cluster (on the first hover), a query looks at a
// few cells.
class LinkPicker
{
public:
    explicit LinkPicker(const ClusterGeometry &geometry);

    // The link whose route passes within `tolerance` of `pos`: the nearest segment, and among
    // the links sharing it the one `rank` puts highest (the busiest, as drawn on top); -1 if none.
    int linkAt(const QPointF &pos,
               double tolerance,
               const std::function<double(int)> &rank = {}) const;

private:
    struct Segment
    {
        QLineF line;
        int firstLink = 0, linkCount = 0; // into m_links
    };
    std::vector<Segment> m_segments;
    std::vector<int> m_links;
    std::vector<int> m_cellStart, m_cellSeg;
    double m_x0 = 0, m_y0 = 0, m_cell = 1;
    int m_cols = 0, m_rows = 0;
};

} // namespace railyard
