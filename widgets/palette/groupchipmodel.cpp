#include "groupchipmodel.h"

#include "document/document.h"
#include "groupmime.h"
#include "layout/parallel.h"
#include "scene/clusterscene.h"
#include "scene/style.h"

#include <QColor>
#include <QMimeData>

namespace railyard {

GroupChipModel::GroupChipModel(QObject *parent)
    : QAbstractListModel(parent)
{}

void GroupChipModel::setScene(ClusterScene *scene)
{
    m_scene = scene;
    refresh();
}

void GroupChipModel::setKind(GroupKind kind)
{
    if (kind == m_kind)
        return;
    m_kind = kind;
    refresh();
}

void GroupChipModel::refresh()
{
    beginResetModel();
    const engine::RankLayout *ranks = m_scene ? m_scene->ranks() : nullptr;
    m_count = ranks ? groupCount(*ranks, m_kind) : 0;
    endResetModel();
}

GroupRef GroupChipModel::group(const QModelIndex &index) const
{
    return GroupRef{m_kind, index.row()};
}

QModelIndex GroupChipModel::indexOf(const GroupRef &group) const
{
    if (group.kind != m_kind || group.index < 0 || group.index >= m_count)
        return {};
    return index(group.index);
}

int GroupChipModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_count;
}

QVariant GroupChipModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_count || !m_scene)
        return {};
    const GroupRef g = group(index);
    switch (role) {
    case Qt::DisplayRole: return groupName(g);
    case ColourRole: return style::groupColor(g.index, m_count, m_kind == GroupKind::PpStage);
    case GroupRole: return g.index;
    case GpuCountRole:
    case Qt::ToolTipRole: {
        const engine::RankLayout *ranks = m_scene->ranks();
        if (!ranks)
            return {};
        const std::vector<int> gpus = groupGpus(*ranks, g);
        if (role == GpuCountRole)
            return static_cast<int>(gpus.size());
        const engine::Topology &t = m_scene->document()->topology();
        std::vector<int> nodes;
        for (int gpu : gpus)
            nodes.push_back(t.nodeOfGpu(gpu));
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        return tr("<b>%1</b>: %2, %3<br>on %4<br><i>Drag onto a GPU, a server or a rack to "
                  "place it there; click to show it</i>")
                .arg(groupName(g),
                     counted(static_cast<int>(gpus.size()), tr("GPU"), tr("GPUs")),
                     gpuListText(gpus),
                     counted(static_cast<int>(nodes.size()), tr("server"), tr("servers")));
    }
    default: return {};
    }
}

Qt::ItemFlags GroupChipModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled;
}

QStringList GroupChipModel::mimeTypes() const
{
    return {QLatin1String(mime::kGroupType)};
}

QMimeData *GroupChipModel::mimeData(const QModelIndexList &indexes) const
{
    // One group at a time: a drop places one group.
    if (indexes.isEmpty() || !indexes.front().isValid() || !m_scene)
        return nullptr;
    return mime::encodeGroup(group(indexes.front()), jobSignature(m_scene->document()->layout()));
}

Qt::DropActions GroupChipModel::supportedDragActions() const
{
    return Qt::MoveAction;
}

} // namespace railyard
