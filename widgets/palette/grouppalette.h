#pragma once

#include "document/groupref.h"

#include <QPointer>
#include <QWidget>

#include <vector>

#include <array>

class QAbstractButton;
class QLabel;
class QLineEdit;
class QListView;
class QSortFilterProxyModel;

namespace railyard {

class ClusterScene;
class GroupChipModel;

// The Groups dock: a palette of chips, one per group of the chosen kind (TP groups, CP groups,
// EP groups, PP stages, DP replicas), to drag onto the canvas. Choosing a kind also colours the
// canvas by it, so the chips and the GPUs they stand for share their colours.
class GroupPalette : public QWidget
{
    Q_OBJECT

public:
    explicit GroupPalette(QWidget *parent = nullptr);

    void setScene(ClusterScene *scene);
    GroupKind kind() const;
    void setKind(GroupKind kind);
    GroupChipModel *model() const { return m_model; }
    QListView *chipView() const { return m_chips; }
    QAbstractButton *kindButton(GroupKind kind) const;
    // The GPUs `group` runs on (a serving layout's as the serving engine places them).
    std::vector<int> groupGpus(const GroupRef &group) const;

Q_SIGNALS:
    // A chip was clicked: show its GPUs.
    void groupActivated(const GroupRef &group);

private:
    void sync();
    void syncButtons();

    QPointer<ClusterScene> m_scene;
    GroupChipModel *m_model;
    QSortFilterProxyModel *m_filter;
    std::array<QAbstractButton *, 5> m_buttons{};
    QLineEdit *m_find;
    QListView *m_chips;
    QLabel *m_summary;
};

} // namespace railyard
