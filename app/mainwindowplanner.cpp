#include "docklayout.h"
#include "mainwindow.h"
#include "panels/plannerpanel.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>

namespace railyard {

// The Planner dock (View > Planner, F3): hidden until asked for, then a tab beside Pricing and
// Warnings, so the ranked plans sit where the numbers are read.
void MainWindow::createPlannerDock()
{
    m_planner = new PlannerPanel;
    m_plannerDock = new QDockWidget(tr("Planner"), this);
    m_plannerDock->setObjectName(QStringLiteral("PlannerDock"));
    m_plannerDock->setWidget(m_planner);
    addDockWidget(Qt::RightDockWidgetArea, m_plannerDock);
    tabifyDockWidget(m_docks->docks().warnings, m_plannerDock);
    m_plannerDock->hide();
    m_docks->docks().warnings->raise(); // tabifying brought another tab forward

    QAction *toggle = m_plannerDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionPlanner"));
    toggle->setText(tr("&Planner"));
    toggle->setShortcut(QKeySequence(Qt::Key_F3));
    toggle->setStatusTip(tr("Rank every parallel configuration that fits, and apply one"));
    connect(toggle, &QAction::triggered, this, [this](bool on) {
        if (on)
            m_plannerDock->raise();
    });
}

} // namespace railyard
