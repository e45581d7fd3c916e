#include "docklayout.h"
#include "mainwindow.h"
#include "panels/plannerpanel.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>

namespace railyard {

// The Planner dock (View > Planner, F3): hidden until asked for, then a tab beside Pricing and
// the step numbers, so the ranked plans sit where those are read.
void MainWindow::createPlannerDock()
{
    m_planner = new PlannerPanel;
    m_plannerDock = new QDockWidget(tr("Planner"), this);
    m_plannerDock->setObjectName(QStringLiteral("PlannerDock"));
    // The panel is taller than the dock at 1280x800 once a search has filled it (six lines of
    // status, the table, the chart with its key and note): the dock scrolls rather than squeeze
    // the chart and cut the key off.
    auto *scroll = new QScrollArea;
    scroll->setWidget(m_planner);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_plannerDock->setWidget(scroll);
    m_docks->addTab(m_plannerDock, m_docks->docks().pricing, false);

    QAction *toggle = m_plannerDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionPlanner"));
    toggle->setText(tr("&Planner"));
    toggle->setShortcut(QKeySequence(Qt::Key_F3));
    toggle->setStatusTip(tr("Rank every parallel configuration that fits, and apply one"));
}

} // namespace railyard
