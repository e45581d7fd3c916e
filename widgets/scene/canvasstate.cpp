#include "canvasstate.h"

#include "style.h"

namespace railyard {

QColor CanvasState::groupFill(int group) const
{
    return style::groupColor(group, groupCount, ordered());
}

QColor CanvasState::gpuFill(int gpu) const
{
    if (!colouring() || gpu < 0 || gpu >= static_cast<int>(gpuGroup.size()))
        return style::deviceFill(engine::DeviceKind::Gpu);
    const int g = gpuGroup[static_cast<std::size_t>(gpu)];
    return g < 0 ? QColor(0xd1, 0xd5, 0xdb) : groupFill(g);
}

QString CanvasState::gpuCaption(int gpu) const
{
    if (gpu < 0 || gpu >= static_cast<int>(gpuRank.size()))
        return {};
    const int rank = gpuRank[static_cast<std::size_t>(gpu)];
    if (rank < 0)
        return {};
    if (!colouring())
        return QStringLiteral("rank %1").arg(rank);
    const int g = gpuGroup[static_cast<std::size_t>(gpu)];
    if (g >= 0 && static_cast<std::size_t>(g) < groupNames.size())
        return QStringLiteral("%1 \u00b7 r%2").arg(groupNames[static_cast<std::size_t>(g)]).arg(rank);
    if (!kindShort.isEmpty())
        return QStringLiteral("%1 %2 \u00b7 r%3").arg(kindShort).arg(g).arg(rank);
    QString kind;
    switch (*colourBy()) {
    case GroupKind::Tp: kind = QStringLiteral("TP"); break;
    case GroupKind::Cp: kind = QStringLiteral("CP"); break;
    case GroupKind::Ep: kind = QStringLiteral("EP"); break;
    case GroupKind::PpStage: kind = QStringLiteral("PP"); break;
    case GroupKind::DpReplica: kind = QStringLiteral("DP"); break;
    }
    return QStringLiteral("%1%2 \u00b7 r%3").arg(kind).arg(g).arg(rank);
}

} // namespace railyard
