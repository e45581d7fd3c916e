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
    m_plannerDock->setWidget(m_planner);
    m_docks->addTab(m_plannerDock, m_docks->docks().pricing, false);

    QAction *toggle = m_plannerDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionPlanner"));
    toggle->setText(tr("&Planner"));
    toggle->setShortcut(QKeySequence(Qt::Key_F3));
    toggle->setStatusTip(tr("Rank every parallel configuration that fits, and apply one"));
}

} // namespace railyard
