#pragma once

#include "document/groupref.h"

#include <QAbstractListModel>
#include <QPointer>

#include <vector>

namespace railyard {

class ClusterScene;

// The chips of one kind of group ("TP group 0", "TP group 1", ...) for the palette: each in the
// colour its GPUs have on the canvas, and a drag source whose mime data names the group and the
// job (see groupmime.h). On a serving layout they are the serving engine's groups (each pool's
// TP and EP groups, stages, replicas, the pools: engine/serving/servingplacement.h), named as
// it places them ("TP group 3 of replica 2 (decode pool)").
class GroupChipModel : public QAbstractListModel
{
    Q_OBJECT

public:
    enum Role {
        GroupRole = Qt::UserRole + 1,
        ColourRole,
        GpuCountRole,
        FullNameRole // "TP group 3", "TP group 3 of replica 2 (decode pool)"
    };

    explicit GroupChipModel(QObject *parent = nullptr);

    void setScene(ClusterScene *scene);
    GroupKind kind() const { return m_kind; }
    void setKind(GroupKind kind);
    // Re-reads the ranks (after a placement or size change).
    void refresh();

    GroupRef group(const QModelIndex &index) const;
    // The GPUs `group` runs on, rank by rank (a serving layout's as the serving engine places
    // them); empty when there is no such group.
    std::vector<int> gpus(const GroupRef &group) const;
    QModelIndex indexOf(const GroupRef &group) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QStringList mimeTypes() const override;
    QMimeData *mimeData(const QModelIndexList &indexes) const override;
    Qt::DropActions supportedDragActions() const override;

private:
    QPointer<ClusterScene> m_scene;
    GroupKind m_kind = GroupKind::Tp;
    int m_count = 0;
};

} // namespace railyard
