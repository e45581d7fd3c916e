#include "docklayout.h"
#include "document/document.h"
#include "mainwindow.h"
#include "panels/lessonpanel.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QAction>
#include <QDockWidget>
#include <QScrollArea>

#include <algorithm>

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
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the texts wrap
    m_lessonDock = new QDockWidget(tr("Collective Lesson"), this);
    m_lessonDock->setObjectName(QStringLiteral("CollectiveLessonDock"));
    m_lessonDock->setWidget(scroll);
    // Beside Workload, the tallest place on the left: the step, its transfers and the formula
    // need the height, and Pricing stays in view on the right.
    m_docks->addTab(m_lessonDock, m_docks->docks().workload, false);

    QAction *toggle = m_lessonDock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionCollectiveLesson"));
    toggle->setText(tr("Collective &Lesson"));
    toggle->setShortcut(QKeySequence(Qt::Key_F4));
    toggle->setStatusTip(tr("Step through a collective chunk by chunk on this cluster"));
    connect(toggle, &QAction::triggered, this, [this](bool on) {
        if (!on)
            return;
        // Wide enough for the formula's lines, never more than a third of the window.
        const int want = std::min(420, width() / 3);
        if (!m_lessonDock->isFloating() && m_lessonDock->width() < want)
            resizeDocks({m_lessonDock}, {want}, Qt::Horizontal);
    });
    connect(m_lessonDock, &QDockWidget::visibilityChanged, m_lesson, &LessonPanel::setActive);
    connect(m_lesson, &LessonPanel::lessonChanged, this, &MainWindow::frameLesson);
}

// Brings the lesson's GPUs into view (unless they are already), without selecting them: the
// selection's rings would mix with the lesson's marks.
void MainWindow::frameLesson()
{
    const engine::CollectiveLesson *lesson = m_lesson->lesson();
    if (!lesson || !m_view || !m_lesson->isActive())
        return;
    const engine::Topology &t = m_document->topology();
    QRectF frame;
    for (int gpu : lesson->gpus)
        if (gpu >= 0 && gpu < t.gpuCount())
            frame = frame.united(m_scene->geometry().deviceRect(t.gpuDevice(gpu)));
    if (frame.isNull())
        return;
    // Room above the GPUs for the arrows, below for the switches and the progress bars.
    frame.adjust(-60, -160, 60, 120);
    // Nothing to do when the GPUs are in view and large enough for their badges.
    const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
    const double gpuPx = m_scene->geometry().deviceRect(t.gpuDevice(lesson->gpus.front())).width()
                         * m_view->zoom();
    if (visible.contains(frame) && gpuPx >= 30)
        return;
    const QRect v = m_view->viewport()->rect().adjusted(40, 90, -40, -90);
    m_view->setZoom(std::min({v.width() / frame.width(), v.height() / frame.height(), 1.0}));
    m_view->centerOn(frame.center());
}

} // namespace railyard
