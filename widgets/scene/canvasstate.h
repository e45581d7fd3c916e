#pragma once

#include "document/groupref.h"
#include "evaluate.h"

#include <QColor>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace railyard {

// What the canvas shows on top of the hardware, read by the items as they paint: each GPU's
// rank and group (for colouring by a parallel dimension) and, in the link-load view, every
// link's load from the latest evaluation. The scene fills it from the document's signals; the
// items never look at the document.
struct CanvasState
{
    std::optional<GroupKind> colourBy;
    std::vector<int> gpuRank;  // by GPU index; -1 where no rank runs (or the sizes are invalid)
    std::vector<int> gpuGroup; // by GPU index: the group of `colourBy`, or -1
    int groupCount = 0;
    bool linkLoad = false;
    std::shared_ptr<const engine::LinkLoads> loads;

    bool colouring() const { return colourBy.has_value() && !gpuGroup.empty(); }
    bool ordered() const { return colourBy == GroupKind::PpStage; }
    QColor groupFill(int group) const;
    // The GPU's fill: its group's colour when colouring, else the plain GPU colour.
    QColor gpuFill(int gpu) const;
    // A second line under the GPU's name: "TP 3 · r25", or empty.
    QString gpuCaption(int gpu) const;

    bool showLoads() const { return linkLoad && loads && loads->size() > 0; }
    // The link's load in the link-load view: its share of the busiest phase it carries, so a
    // link that saturates while its collective runs reads as full (0 when idle or unknown).
    double load(int link) const
    {
        if (!loads || link < 0 || static_cast<std::size_t>(link) >= loads->size())
            return 0;
        return loads->peakUtilization[static_cast<std::size_t>(link)];
    }
};

} // namespace railyard
