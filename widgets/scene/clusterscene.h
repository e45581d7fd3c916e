#pragma once

#include <QGraphicsScene>

#include <memory>
#include <vector>

namespace railyard {

class ClusterGeometry;
class Document;
class SelectionItem;

// Shows a document's cluster. It is not the model: it rebuilds its items from the document's
// topology whenever the document says the cluster changed. Items are aggregates (one per rack,
// one per block of leaves, one for the spine tier), so a 16,384-GPU cluster is a few hundred
// items; devices are found by geometry (deviceAt), not by item.
class ClusterScene : public QGraphicsScene
{
    Q_OBJECT

public:
    explicit ClusterScene(Document *document, QObject *parent = nullptr);
    ~ClusterScene() override;

    Document *document() const { return m_document; }
    const ClusterGeometry &geometry() const { return *m_geometry; }

    int deviceAt(const QPointF &scenePos) const;
    int selectedDevice() const { return m_selected; }
    void setSelectedDevice(int device);

Q_SIGNALS:
    void selectedDeviceChanged(int device);
    void rebuilt();

public Q_SLOTS:
    void rebuild();

private:
    Document *m_document;
    std::unique_ptr<ClusterGeometry> m_geometry;
    SelectionItem *m_selection = nullptr;
    int m_selected = -1;
};

} // namespace railyard
