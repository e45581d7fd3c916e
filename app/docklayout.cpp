#include "docklayout.h"

#include <QAction>
#include <QDockWidget>
#include <QGuiApplication>
#include <QLayout>
#include <QMainWindow>
#include <QScreen>
#include <QSettings>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <map>

namespace railyard {

namespace {

const QString kStateKey = QStringLiteral("window/state");

bool onSomeScreen(const QRect &r)
{
    for (const QScreen *screen : QGuiApplication::screens())
        if (screen->availableGeometry().intersects(r))
            return true;
    return false;
}

} // namespace

DockLayout::DockLayout(QMainWindow *window, const Docks &docks)
    : QObject(window)
    , m_window(window)
    , m_docks(docks)
{
    arrange();
}

std::vector<QDockWidget *> DockLayout::all() const
{
    std::vector<QDockWidget *> docks{m_docks.workload,
                                     m_docks.cluster,
                                     m_docks.groups,
                                     m_docks.inspector,
                                     m_docks.pricing,
                                     m_docks.warnings};
    for (const Tab &t : m_tabs)
        docks.push_back(t.dock);
    return docks;
}

void DockLayout::addTab(QDockWidget *dock, QDockWidget *beside, bool shownByDefault)
{
    const Tab tab{dock, beside, shownByDefault};
    m_tabs.push_back(tab);
    placeTab(tab);
    m_docks.workload->raise();
    m_docks.groups->raise();
    m_docks.pricing->raise();
    // Asking for a hidden tab (its View menu entry, a shortcut) should show it in front.
    connect(dock->toggleViewAction(), &QAction::triggered, dock, [dock](bool on) {
        if (on)
            dock->raise();
    });
}

void DockLayout::placeTab(const Tab &tab)
{
    // A dock hidden by default is hidden before it joins the tabs: hidden after, it stays the
    // tab bar's current tab until the layout next settles, which then shows its neighbour
    // (the Inspector instead of Groups) rather than the tab raised in between.
    tab.dock->setFloating(false);
    tab.dock->setVisible(tab.shown);
    m_window->addDockWidget(m_window->dockWidgetArea(tab.beside), tab.dock);
    m_window->tabifyDockWidget(tab.beside, tab.dock);
    tab.dock->setVisible(tab.shown);
}

void DockLayout::arrange()
{
    for (QDockWidget *d : all()) {
        d->setFloating(false);
        m_window->removeDockWidget(d);
    }
    // Left: what is trained and on what (tabs), above the chips to drag and the selected device.
    m_window->addDockWidget(Qt::LeftDockWidgetArea, m_docks.workload, Qt::Vertical);
    m_window->addDockWidget(Qt::LeftDockWidgetArea, m_docks.groups, Qt::Vertical);
    m_window->tabifyDockWidget(m_docks.workload, m_docks.cluster);
    m_window->tabifyDockWidget(m_docks.groups, m_docks.inspector);
    // Right: what it costs, above what is wrong with it; neither hides behind a tab.
    m_window->addDockWidget(Qt::RightDockWidgetArea, m_docks.pricing, Qt::Vertical);
    m_window->addDockWidget(Qt::RightDockWidgetArea, m_docks.warnings, Qt::Vertical);
    for (QDockWidget *d : {m_docks.workload,
                           m_docks.cluster,
                           m_docks.groups,
                           m_docks.inspector,
                           m_docks.pricing,
                           m_docks.warnings})
        d->show();
    for (const Tab &t : m_tabs)
        placeTab(t);
    m_docks.workload->raise();
    m_docks.groups->raise();
    m_docks.pricing->raise();
}

void DockLayout::reset()
{
    arrange();
    applyDefaultSizes();
}

void DockLayout::applyDefaultSizes()
{
    const int w = m_window->width();
    int left = std::clamp(static_cast<int>(std::lround(0.21 * w)), 270, 380);
    int right = std::clamp(static_cast<int>(std::lround(0.25 * w)), 300, 440);
    // Separators and frames take a few pixels: stay clear of the canvas's share.
    const int most = static_cast<int>((1.0 - kMinCanvasShare - 0.03) * w);
    if (left + right > most) {
        const double f = double(most) / (left + right);
        left = static_cast<int>(left * f);
        right = static_cast<int>(right * f);
    }
    m_window->resizeDocks({m_docks.workload, m_docks.pricing}, {left, right}, Qt::Horizontal);
    // The dock columns are as tall as the canvas (no top or bottom docks by default).
    QWidget *canvas = m_window->centralWidget();
    const int h = std::max(300,
                           canvas && canvas->height() > 100 ? canvas->height()
                                                            : m_window->height() - 130);
    m_window->resizeDocks({m_docks.workload, m_docks.groups},
                          {static_cast<int>(0.58 * h), static_cast<int>(0.42 * h)},
                          Qt::Vertical);
    m_window->resizeDocks({m_docks.pricing, m_docks.warnings},
                          {static_cast<int>(0.64 * h), static_cast<int>(0.36 * h)},
                          Qt::Vertical);
    if (QLayout *l = m_window->layout())
        l->activate();
}

bool DockLayout::keepCanvasShare()
{
    QWidget *canvas = m_window->centralWidget();
    if (!canvas)
        return false;
    if (QLayout *l = m_window->layout())
        l->activate();
    // The docks on show in each area (not floating, not closed, not a tab behind another: Qt
    // parks those outside the window), and how much room they take.
    std::map<Qt::DockWidgetArea, std::vector<QDockWidget *>> byArea;
    for (QDockWidget *d : m_window->findChildren<QDockWidget *>())
        if (d->isVisible() && !d->isFloating() && m_window->rect().intersects(d->geometry()))
            byArea[m_window->dockWidgetArea(d)].push_back(d);
    bool changed = false;
    for (const Qt::Orientation o : {Qt::Horizontal, Qt::Vertical}) {
        const bool across = o == Qt::Horizontal;
        const Qt::DockWidgetArea first = across ? Qt::LeftDockWidgetArea : Qt::TopDockWidgetArea;
        const Qt::DockWidgetArea second = across ? Qt::RightDockWidgetArea
                                                 : Qt::BottomDockWidgetArea;
        const auto extent = [&](QWidget *w) { return across ? w->width() : w->height(); };
        std::map<Qt::DockWidgetArea, int> size;
        int docked = 0;
        for (Qt::DockWidgetArea a : {first, second}) {
            for (QDockWidget *d : byArea[a])
                size[a] = std::max(size[a], extent(d));
            docked += size[a];
        }
        const int have = extent(canvas);
        // Across: a share of the window (separators and frames count against the docks).
        const int total = across ? m_window->width() : have + docked;
        const int want = static_cast<int>(std::ceil(kMinCanvasShare * total));
        if (have >= want || docked == 0)
            continue;
        const int excess = want - have;
        QList<QDockWidget *> list;
        QList<int> sizes;
        for (Qt::DockWidgetArea a : {first, second}) {
            if (size[a] == 0)
                continue;
            const int target = size[a]
                               - static_cast<int>(std::ceil(double(excess) * size[a] / docked));
            for (QDockWidget *d : byArea[a]) {
                list << d;
                sizes << std::max(target, 1);
            }
        }
        m_window->resizeDocks(list, sizes, o);
        changed = true;
    }
    if (changed)
        if (QLayout *l = m_window->layout())
            l->activate();
    return changed;
}

void DockLayout::keepCanvasShareLater()
{
    if (m_pending)
        return;
    m_pending = true;
    QTimer::singleShot(0, this, [this] {
        m_pending = false;
        keepCanvasShare();
    });
}

void DockLayout::save(QSettings &settings) const
{
    settings.setValue(kStateKey, m_window->saveState(kStateVersion));
}

bool DockLayout::restore(QSettings &settings)
{
    const QByteArray state = settings.value(kStateKey).toByteArray();
    if (state.isEmpty() || !m_window->restoreState(state, kStateVersion))
        return false;
    for (QDockWidget *d : all())
        if (d->isFloating() && !onSomeScreen(d->geometry()))
            d->setFloating(false);
    keepCanvasShareLater();
    return true;
}

} // namespace railyard
