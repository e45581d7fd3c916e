#include "docklayout.h"
#include "mainwindow.h"
#include "panels/guidedtourpanel.h"

#include <QAction>
#include <QDockWidget>
#include <QStatusBar>

namespace railyard {

// The Guided Tour dock (View > Guided Tour, F2): hidden until asked for, then a tab beside the
// Groups and Inspector docks, so Pricing and the canvas stay in view while the student reads.
// Choosing a scenario opens its layout as the document, through the same path as File > Open
// (unsaved changes are asked about first).
void MainWindow::createTourDock()
{
    m_tour = new GuidedTourPanel;
    m_tourDock = new QDockWidget(tr("Guided Tour"), this);
    m_tourDock->setObjectName(QStringLiteral("GuidedTourDock"));
    m_tourDock->setWidget(m_tour);
    m_docks->addTab(m_tourDock, m_docks->docks().inspector, false);

    QAction *toggle = m_tourDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionGuidedTour"));
    toggle->setText(tr("Guided &Tour"));
    toggle->setShortcut(QKeySequence(Qt::Key_F2));
    toggle->setStatusTip(tr("Teaching scenarios: each opens a layout with a thing to try"));
    connect(m_tour, &GuidedTourPanel::openLayoutRequested, this, [this](const QString &path) {
        if (openFile(path))
            statusBar()->showMessage(tr("Guided tour: opened %1")
                                             .arg(QString::fromStdString(
                                                     m_tour->scenario(m_tour->currentScenario())
                                                             .title)),
                                     5000);
    });
}

} // namespace railyard
