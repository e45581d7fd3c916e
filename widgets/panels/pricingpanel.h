#pragma once

#include <QPointer>
#include <QWidget>

class QBoxLayout;
class QLabel;
class QPushButton;
class QTableWidget;
class QTreeWidget;

namespace railyard {

class Document;
class MemoryChart;
class ServingPricing;
class StepChart;

// The Pricing dock: what the step costs now, re-read after every edit: the step time and what
// changed ("+41% step time"), tokens/s, MFU, $ per million tokens, the step-time breakdown and
// memory per GPU against HBM. It compares against the state before the last edit or, once the
// user pins a state as A, against A: numbers side by side, both bars in the chart, and the
// links whose load changed most.
class PricingPanel : public QWidget
{
    Q_OBJECT

public:
    explicit PricingPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);

    QString stepText() const;
    QString changeText() const;
    QTableWidget *metrics() const { return m_metrics; }
    StepChart *stepChart() const { return m_stepChart; }
    MemoryChart *memoryChart() const { return m_memoryChart; }
    // A serving layout's numbers, shown instead of the training step's.
    ServingPricing *serving() const { return m_serving; }
    QTreeWidget *linkChanges() const { return m_links; }
    QPushButton *pinButton() const { return m_pin; }
    QPushButton *restoreButton() const { return m_restore; }
    // "A: moe-gb200-nvl72.railyard.json (its title)": where the pinned state came from.
    QString pinnedText() const;

public Q_SLOTS:
    void pinA();
    void unpin();
    void restoreA();
    void sync();

Q_SIGNALS:
    // A link in the changed-links list was clicked.
    void linkActivated(int link);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void arrangeHead();
    // A serving layout: the head, the serving numbers; the training step's parts hidden.
    void syncServing();
    void showTrainingParts(bool on);

    QPointer<Document> m_document;
    QLabel *m_step;
    QLabel *m_change;
    QBoxLayout *m_head; // the step, and beside it (under it when narrow) what changed
    QLabel *m_error;
    QPushButton *m_pin;
    QPushButton *m_restore;
    QPushButton *m_unpin;
    QLabel *m_source; // where A came from
    QTableWidget *m_metrics;
    StepChart *m_stepChart;
    MemoryChart *m_memoryChart;
    QLabel *m_memoryNote;
    QLabel *m_linksTitle;
    QTreeWidget *m_links;
    QLabel *m_note;
    ServingPricing *m_serving;
};

} // namespace railyard
