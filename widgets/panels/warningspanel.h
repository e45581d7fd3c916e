#pragma once

#include <QPointer>
#include <QWidget>

#include <vector>

class QLabel;
class QTreeWidget;

namespace railyard {

class Document;

// The Warnings dock: what the engine found doubtful about the placement and the job, each with
// what it costs per step ("TP group 3 spans 2 NVLink domains (+38% TP time)", "+1.2 s/step"),
// worst first; then where the model itself is unsure. Clicking a warning selects its GPUs.
class WarningsPanel : public QWidget
{
    Q_OBJECT

public:
    explicit WarningsPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);
    QTreeWidget *list() const { return m_list; }
    int warningCount() const { return m_count; }

Q_SIGNALS:
    // A warning was clicked: select (and show) these GPUs.
    void gpusActivated(const std::vector<int> &gpus);
    // The number of warnings changed (for the dock's title).
    void countChanged(int count);

private:
    void sync();

    QPointer<Document> m_document;
    QLabel *m_summary;
    QTreeWidget *m_list;
    int m_count = 0;
};

} // namespace railyard
