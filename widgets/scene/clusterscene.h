#pragma once

#include <QGraphicsScene>

#include <memory>
#include <vector>

namespace railyard {

class ClusterGeometry;
class DeviceItem;
class Document;

// Shows a document's cluster. It is not the model: it rebuilds its items from the document's
// topology whenever the document says the cluster changed.
class ClusterScene : public QGraphicsScene
{
    Q_OBJECT

public:
    explicit ClusterScene(Document *document, QObject *parent = nullptr);
    ~ClusterScene() override;

    Document *document() const { return m_document; }
    const ClusterGeometry &geometry() const { return *m_geometry; }
    DeviceItem *deviceItem(int device) const;
    int deviceItemCount() const;

public Q_SLOTS:
    void rebuild();

private:
    Document *m_document;
    std::unique_ptr<ClusterGeometry> m_geometry;
    std::vector<DeviceItem *> m_deviceItems;
};

} // namespace railyard
