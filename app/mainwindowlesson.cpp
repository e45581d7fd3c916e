#include "docklayout.h"
#include "mainwindow.h"
#include "panels/lessonpanel.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>

namespace railyard {

// The Collective Lesson dock (View > Collective Lesson, F4): hidden until asked for, then a tab
// beside the Groups and Inspector docks, so Pricing and the canvas stay in view while a student
// steps through a collective. The lesson is drawn on the canvas only while the dock shows:
// closing it (or tabbing away) puts the canvas back as it was.
void MainWindow::createLessonDock()
{
    m_lesson = new LessonPanel;
    auto *scroll = new QScrollArea;
    scroll->setWidget(m_lesson);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_lessonDock = new QDockWidget(tr("Collective Lesson"), this);
    m_lessonDock->setObjectName(QStringLiteral("CollectiveLessonDock"));
    m_lessonDock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, m_lessonDock);
    tabifyDockWidget(m_docks->docks().inspector, m_lessonDock);
    m_lessonDock->hide();
    m_docks->docks().groups->raise(); // tabifying brought another tab forward

    QAction *toggle = m_lessonDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionCollectiveLesson"));
    toggle->setText(tr("Collective &Lesson"));
    toggle->setShortcut(QKeySequence(Qt::Key_F4));
    toggle->setStatusTip(tr("Step through a collective chunk by chunk on this cluster"));
    connect(toggle, &QAction::triggered, this, [this](bool on) {
        if (on)
            m_lessonDock->raise();
    });
    connect(m_lessonDock, &QDockWidget::visibilityChanged, m_lesson, &LessonPanel::setActive);
}

} // namespace railyard
