#pragma once

#include "document/viewstate.h"

#include <QPointer>
#include <QWidget>

#include <vector>

class QLabel;
class QTreeWidget;

namespace railyard {

class Document;

// The Hottest Links dock: the kTop busiest links of the step (by step-average utilization),
// or at the playback moment while the step plays or is scrubbed. Each row: the link (in its
// kind's colour, elided in the middle when the dock is narrow, whole in its tip with its kind), a
// utilization bar and its bytes per step. Clicking a row selects the link in the view state and
// asks (linkActivated) for the canvas to show it.
//
// In step with the animation but cheap: the moment (its loads and busiest links) is the view
// state's, recomputed when other phases run, and the rows are rewritten only then
// (changed(Moment)), not per frame.
class HottestLinksPanel : public QWidget
{
    Q_OBJECT

public:
    static constexpr int kTop = static_cast<int>(ViewState::kBusiestLinks);

    explicit HottestLinksPanel(QWidget *parent = nullptr);
    ~HottestLinksPanel() override;

    void setDocument(Document *document, ViewState *view);

    // The links listed, busiest first, and their utilization as listed.
    const std::vector<int> &links() const { return m_links; }
    const std::vector<float> &utilizations() const { return m_values; }
    QTreeWidget *list() const { return m_list; }
    QString headerText() const;
    // How many times the list was re-ranked (the benchmark and tests see it stay cheap).
    int rankings() const { return m_rankings; }

Q_SIGNALS:
    void linkActivated(int link);

private:
    void refresh();
    void rebuildRows();
    void syncSelection();

    QPointer<Document> m_document;
    QPointer<ViewState> m_view;
    QLabel *m_header;
    QTreeWidget *m_list;
    std::vector<int> m_links;
    std::vector<float> m_values;
    int m_rankings = 0;
};

} // namespace railyard
