#pragma once

#include <QPointer>
#include <QWidget>

class QLabel;
class QTreeWidget;

namespace railyard {

class ClusterScene;

// The Inspector dock: the selected device's specs and every link it has, with bandwidths; or the
// selected link's load and the groups whose traffic crosses it.
class InspectorPanel : public QWidget
{
    Q_OBJECT

public:
    explicit InspectorPanel(QWidget *parent = nullptr);

    void setScene(ClusterScene *scene);
    int device() const { return m_device; }
    QString headerText() const;
    QTreeWidget *linkTable() const { return m_links; }

public Q_SLOTS:
    void showDevice(int device);
    // A link's bytes, utilization and the groups crossing it.
    void showLink(int link);

private:
    QPointer<ClusterScene> m_scene;
    int m_device = -1;
    QLabel *m_header;
    QTreeWidget *m_links;
};

} // namespace railyard
