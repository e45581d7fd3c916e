#pragma once

// Private to ClusterView's source files.

#include "clusterview.h"
#include "dropplan.h"

#include <QByteArray>

namespace railyard {

// The drag over the canvas: what is dragged, the target it was planned for and the plan.
struct ClusterView::DragState
{
    QByteArray source;
    int gpu = -2, node = -2, rack = -2;
    DropPlan plan;
};

} // namespace railyard
