#pragma once

#include "paintutil.h"
#include "scene/levelofdetail.h"

#include <QLineF>
#include <QRectF>

#include <array>
#include <span>
#include <vector>

class QPainter;

namespace railyard {

class ClusterGeometry;
struct CanvasState;

// The link-load layer of a fabric item, drawn per route segment rather than per link. Routes
// share trunks, lanes and buses (at 16,384 GPUs about 16,000 leaf-to-spine routes run through
// a few hundred column trunks), and drawing each link's route over the others costs a frame
// 150 ms while showing only the busiest on top. Here each distinct segment is kept once with
// the links along it (built once per cluster); a frame takes each visible segment's busiest
// link (its load, and its direction for the flowing dashes) and draws one line per segment,
// bucketed by load step into buffers kept between frames. The picture is the one the per-link
// drawing gave (busiest on top), at every zoom.
class SegmentLoads
{
public:
    SegmentLoads(const ClusterGeometry &geometry, std::span<const int> links);

    // Idle segments in the idle colour, then loaded ones by load step (with dashes while a
    // moment is shown), only those meeting `visible` (scene coordinates).
    void draw(QPainter *painter, const CanvasState &state, Detail detail, const QRectF &visible);
    int segmentCount() const { return static_cast<int>(m_segments.size()); }

private:
    struct Segment
    {
        QLineF line;
        QRectF box;
        int firstLink = 0, linkCount = 0;
    };
    std::vector<Segment> m_segments;
    std::vector<int> m_links;
    paint::LoadBuckets m_buckets; // reused every frame
    std::vector<QLineF> m_idle;
};

} // namespace railyard
