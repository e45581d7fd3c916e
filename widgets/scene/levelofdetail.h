#pragma once

namespace railyard {

// What the canvas shows at a zoom (the painter's level of detail, as in Qt's chip example):
// racks as blocks with aggregate links; then servers; then every device and link; then labels.
enum class Detail { Racks, Servers, Devices, Labels };

inline constexpr double kServersFrom = 0.045;
inline constexpr double kDevicesFrom = 0.12;
inline constexpr double kLabelsFrom = 0.5;

inline Detail detailFor(double lod)
{
    if (lod < kServersFrom)
        return Detail::Racks;
    if (lod < kDevicesFrom)
        return Detail::Servers;
    if (lod < kLabelsFrom)
        return Detail::Devices;
    return Detail::Labels;
}

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
