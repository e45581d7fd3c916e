#pragma once

// What the main window tests share: reaching actions through the menus, letting the window
// settle, and checking that the canvas shows the whole cluster at a sensible size.
#include "mainwindow.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QTest>
#include <QTimer>

#include <functional>

namespace railyard::test {

inline QString layoutPath(const char *name)
{
    return QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name);
}

inline void closeMessageBoxes()
{
    for (QWidget *top : QApplication::topLevelWidgets())
        if (top->inherits("QMessageBox"))
            top->close();
}

inline QString plain(QString text)
{
    text.remove(QLatin1Char('&'));
    if (text.endsWith(QChar(0x2026)))
        text.chop(1);
    return text;
}

// The action a user reaches through the menus: {"File", "Open Example", "One HGX H100 server"}.
QAction *menuAction(const QMainWindow &w, const QStringList &path)
{
    QList<QAction *> actions = w.menuBar()->actions();
    for (int i = 0; i < path.size(); ++i) {
        QAction *found = nullptr;
        for (QAction *a : actions)
            if (plain(a->text()) == path[i])
                found = a;
        if (!found)
            return nullptr;
        if (i + 1 == path.size())
            return found;
        if (!found->menu())
            return nullptr;
        actions = found->menu()->actions();
    }
    return nullptr;
}

// Whether the dock is on show: not closed, not floating, not a tab behind another (Qt parks
// those outside the window, still "visible").
inline bool onShow(const QMainWindow &w, const QDockWidget *d)
{
    return d->isVisible() && !d->isFloating() && w.rect().intersects(d->geometry());
}

// Lets posted layout requests and zero timers run (the window settles after an open).
inline void settle()
{
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}

// The canvas keeps at least half the window, the side docks keep sensible widths, and the whole
// cluster is in view at a scale that fills the viewport along one side.
inline void checkCanvas(MainWindow &w, const QString &what)
{
    settle();
    const int canvas = w.centralWidget()->width();
    QVERIFY2(canvas >= w.width() / 2,
             qPrintable(
                     QStringLiteral("%1: canvas %2 px of %3").arg(what).arg(canvas).arg(w.width())));
    for (QDockWidget *d : w.findChildren<QDockWidget *>())
        if (onShow(w, d))
            QVERIFY2(d->width() <= 0.3 * w.width(),
                     qPrintable(QStringLiteral("%1: %2 is %3 px wide")
                                        .arg(what, d->objectName())
                                        .arg(d->width())));
    // No panel is wider than its dock (it would scroll sideways).
    for (QDockWidget *d : w.findChildren<QDockWidget *>())
        if (auto *scroll = qobject_cast<QScrollArea *>(d->widget()); scroll && onShow(w, d))
            QVERIFY2(!scroll->horizontalScrollBar()->isVisible(),
                     qPrintable(QStringLiteral("%1: %2 scrolls sideways (%3 px in %4)")
                                        .arg(what, d->objectName())
                                        .arg(scroll->widget()->minimumSizeHint().width())
                                        .arg(scroll->viewport()->width())));
    ClusterView *view = w.view();
    const QRect viewport = view->viewport()->rect();
    const QRectF cluster = view->mapFromScene(w.scene()->sceneRect()).boundingRect();
    QVERIFY2(QRectF(viewport).adjusted(-1, -1, 1, 1).contains(cluster),
             qPrintable(QStringLiteral("%1: cluster %2,%3 %4x%5 outside the viewport %6x%7")
                                .arg(what)
                                .arg(cluster.x())
                                .arg(cluster.y())
                                .arg(cluster.width())
                                .arg(cluster.height())
                                .arg(viewport.width())
                                .arg(viewport.height())));
    // Fitted, not a speck: the cluster spans most of the viewport one way or the other.
    QVERIFY2(cluster.width() >= 0.6 * viewport.width()
                     || cluster.height() >= 0.6 * viewport.height(),
             qPrintable(QStringLiteral("%1: cluster %2x%3 in a %4x%5 viewport")
                                .arg(what)
                                .arg(cluster.width())
                                .arg(cluster.height())
                                .arg(viewport.width())
                                .arg(viewport.height())));
}

// With RAILYARD_SHOTS_DIR set, saves what the window shows (for people to look at).
inline void shoot(QWidget &w, const QString &name)
{
    const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QVERIFY(w.grab().save(QDir(dir).filePath(name + QStringLiteral(".png"))));
}

// Answers the next modal widget (a message box or a dialog) once it is up.
inline void whenModal(std::function<void(QWidget *)> answer)
{
    QTimer::singleShot(0, [answer] { answer(QApplication::activeModalWidget()); });
}

} // namespace railyard::test
