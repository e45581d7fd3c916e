#include "groupchipmodel.h"

#include "document/document.h"
#include "groupmime.h"
#include "layout/parallel.h"
#include "scene/clusterscene.h"
#include "scene/style.h"
#include "serving/servingplacement.h"

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

namespace {

// A serving layout's groups as the serving engine places them; null for training (and for
// pools that cannot be placed).
const engine::ServingGpuGroups *servingGroupsOf(const ClusterScene *scene)
{
    const engine::ServingGpuGroups *s = scene ? scene->document()->servingGroups() : nullptr;
    return s && s->ok() ? s : nullptr;
}

} // namespace

void GroupChipModel::refresh()
{
    beginResetModel();
    const engine::RankLayout *ranks = m_scene ? m_scene->ranks() : nullptr;
    if (m_scene && m_scene->document()->isServing()) {
        const engine::ServingGpuGroups *s = servingGroupsOf(m_scene);
        m_count = s ? s->count[servingKind(m_kind)] : 0;
    } else {
        m_count = ranks ? groupCount(*ranks, m_kind) : 0;
    }
    endResetModel();
}

std::vector<int> GroupChipModel::gpus(const GroupRef &g) const
{
    if (!m_scene)
        return {};
    if (m_scene->document()->isServing()) {
        const engine::ServingGpuGroups *s = servingGroupsOf(m_scene);
        return s ? engine::servingGroupGpus(*s, servingKind(g.kind), g.index) : std::vector<int>{};
    }
    const engine::RankLayout *ranks = m_scene->ranks();
    return ranks ? groupGpus(*ranks, g) : std::vector<int>{};
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
    case Qt::DisplayRole:
        // A serving chip shows its short name; the tooltip and the drop say the whole.
        if (m_scene->document()->isServing())
            return g.kind == GroupKind::Cp
                           ? data(index, FullNameRole) // "prefill pool", "decode pool"
                           : servingKindNoun(g.kind) + QLatin1Char(' ') + QString::number(g.index);
        return groupName(g);
    case FullNameRole:
        if (m_scene->document()->isServing()) {
            const engine::ServingGpuGroups *s = servingGroupsOf(m_scene);
            return s ? QString::fromStdString(
                           engine::describeServingGroup(*s, servingKind(g.kind), g.index))
                     : groupName(g);
        }
        return groupName(g);
    case ColourRole: return style::groupColor(g.index, m_count, m_kind == GroupKind::PpStage);
    case GroupRole: return g.index;
    case GpuCountRole:
    case Qt::ToolTipRole: {
        const std::vector<int> gpus = this->gpus(g);
        if (gpus.empty())
            return {};
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
                .arg(data(index, FullNameRole).toString(),
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
