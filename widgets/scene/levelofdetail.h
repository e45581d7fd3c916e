#pragma once

#include <algorithm>

namespace railyard {

// What the canvas shows at a zoom (the painter's level of detail, as in Qt's chip example):
// racks as blocks with aggregate links; then servers; then every device and link; then labels.
enum class Detail { Racks, Servers, Devices, Labels };

inline constexpr double kServersFrom = 0.045;
inline constexpr double kDevicesFrom = 0.12;
inline constexpr double kLabelsFrom = 0.5;

// The finest detail drawn whatever the zoom: Labels, except while a DetailCap lives. An export
// of a large cluster caps it (render::DiagramRenderer), so the page holds a bounded number of
// elements at any size.
Detail &finestDetail();

inline Detail detailFor(double lod)
{
    const Detail zoomed = lod < kServersFrom   ? Detail::Racks
                          : lod < kDevicesFrom ? Detail::Servers
                          : lod < kLabelsFrom  ? Detail::Devices
                                               : Detail::Labels;
    return std::min(zoomed, finestDetail());
}

// Caps detailFor() for its lifetime (one render of the scene), then puts the previous cap back.
class DetailCap
{
public:
    explicit DetailCap(Detail finest)
        : m_previous(finestDetail())
    {
        finestDetail() = finest;
    }
    ~DetailCap() { finestDetail() = m_previous; }
    DetailCap(const DetailCap &) = delete;
    DetailCap &operator=(const DetailCap &) = delete;

private:
    Detail m_previous;
};

// What the items drew since the last reset: tests check the level of detail with it, and the
// benchmark reports it beside its timings.
struct PaintStats
{
    int racks = 0;
    int servers = 0;
    int devices = 0;
    int labels = 0; // device names
    int titles = 0; // rack, server and scalable-unit names
    int linkLines = 0;
};

PaintStats &paintStats();

} // namespace railyard
