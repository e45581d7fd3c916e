#pragma once

#include "topology/topology.h"

#include <QString>
#include <vector>

namespace railyard {

// Words about one device, shared by the canvas tooltip and the inspector panel: what it is, its
// specs, and its links grouped by kind and the kind of device at the other end.
struct LinkGroup
{
    engine::LinkKind kind = engine::LinkKind::NvLink;
    engine::DeviceKind peer = engine::DeviceKind::Gpu;
    int count = 0;
    double gbPerS = 0;          // line rate per direction, all links of the group together
    double effectiveGbPerS = 0; // what NCCL achieves on them
};

QString deviceTitle(const engine::Topology &topology, int device);
// Spec lines ("BF16 989 TFLOPS dense", ...), each plain text.
QStringList deviceSpecs(const engine::Topology &topology, int device);
std::vector<LinkGroup> deviceLinkGroups(const engine::Topology &topology, int device);
QString linkGroupText(const LinkGroup &group);
// What the layout's faults do to the device, in words ("down", "degraded to 50% of its rate",
// "runs 10% slow (a straggler)"; some of its links down or degraded), or empty when healthy.
QString deviceFaultText(const engine::Topology &topology, int device);
// The tooltip: title, its fault state, specs and link groups as rich text.
QString deviceTooltip(const engine::Topology &topology, int device);

} // namespace railyard
