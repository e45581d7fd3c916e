#pragma once

class QPainter;

namespace railyard {

class ClusterGeometry;

namespace paint {

// An explicit server (layout format 2) zoomed in to labels: each NVLink bundle's lane count as
// nvidia-smi topo -m prints it (NV18, NV12, NV4), on a direct mesh's arc, or under each GPU for
// the lanes it has into the NVSwitches (what topo -m shows for every pair of a switched board).
// Returns how many labels it drew.
int drawNvlinkLanes(QPainter *painter, const ClusterGeometry &geometry, int node, double lod);

} // namespace paint
} // namespace railyard
