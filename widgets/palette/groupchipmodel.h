#pragma once

#include "document/groupref.h"

#include <QAbstractListModel>
#include <QPointer>

namespace railyard {

class ClusterScene;

// The chips of one kind of group ("TP group 0", "TP group 1", ...) for the palette: each in the
// colour its GPUs have on the canvas, and a drag source whose mime data names the group and the
// job (see groupmime.h).
class GroupChipModel : public QAbstractListModel
{
    Q_OBJECT

public:
    enum Role { GroupRole = Qt::UserRole + 1, ColourRole, GpuCountRole };

    explicit GroupChipModel(QObject *parent = nullptr);

    void setScene(ClusterScene *scene);
    GroupKind kind() const { return m_kind; }
    void setKind(GroupKind kind);
    // Re-reads the ranks (after a placement or size change).
    void refresh();

    GroupRef group(const QModelIndex &index) const;
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
