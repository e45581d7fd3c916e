#include "docklayout.h"
#include "mainwindow.h"
#include "panels/faultpanel.h"
#include "scene/clusterview.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>

namespace railyard {

// The Faults dock (View > Faults, F6): hidden until asked for, then a tab beside Pricing, so the
// step numbers and the faults' cost read side by side while the canvas shows what is down.
void MainWindow::createFaultDock()
{
    m_faults = new FaultPanel;
    auto *scroll = new QScrollArea;
    scroll->setWidget(m_faults);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_faultDock = new QDockWidget(tr("Faults"), this);
    m_faultDock->setObjectName(QStringLiteral("FaultDock"));
    m_faultDock->setWidget(scroll);
    m_docks->addTab(m_faultDock, m_docks->docks().pricing, false);

    QAction *toggle = m_faultDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionFaults"));
    toggle->setText(tr("&Faults"));
    toggle->setShortcut(QKeySequence(Qt::Key_F6));
    toggle->setStatusTip(tr("What the layout's failed and degraded elements cost, what recovers "
                            "it, and which failures would hurt this job most"));
    connect(m_faults, &FaultPanel::linkActivated, this, [this](int link) {
        if (m_view)
            m_view->showLink(link);
    });
    connect(m_faults, &FaultPanel::deviceActivated, this, [this](int device) {
        if (m_view)
            m_view->showDevice(device);
    });
}

} // namespace railyard
