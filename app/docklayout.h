#pragma once

#include <QObject>

#include <vector>

class QDockWidget;
class QMainWindow;
class QSettings;

namespace railyard {

// The main window's docks: where they go by default, how wide they are for the window's size,
// keeping the canvas at least half the window, and the arrangement between sessions.
//
// Default: Workload and Cluster (tabs) above Groups and Inspector (tabs) on the left; Pricing
// above Warnings on the right, each visible on its own. The docks share what the canvas leaves:
// about a fifth of the width on the left and a quarter on the right. Further docks (Hottest
// Links, Planner, Guided Tour, ...) are tabs beside one of these, shown or hidden by default;
// Reset Layout puts them back too.
class DockLayout : public QObject
{
    Q_OBJECT

public:
    struct Docks
    {
        QDockWidget *workload = nullptr;
        QDockWidget *cluster = nullptr;
        QDockWidget *groups = nullptr;
        QDockWidget *inspector = nullptr;
        QDockWidget *pricing = nullptr;
        QDockWidget *warnings = nullptr;
    };
    // The least share of the window's width (and height) the canvas keeps when the window
    // opens, resizes, opens a file or restores a session. A user dragging a dock's edge may go
    // further: that is a choice, not an accident.
    static constexpr double kMinCanvasShare = 0.5;
    // Bumped whenever the set or the default places of the docks change: an older saved state
    // is then ignored rather than half applied. 4: the Collective Lesson and Faults docks.
    static constexpr int kStateVersion = 4;

    DockLayout(QMainWindow *window, const Docks &docks);

    const Docks &docks() const { return m_docks; }
    // Every dock the layout places: the six above, then the tabs in the order they were added.
    std::vector<QDockWidget *> all() const;

    // Places `dock` as a tab behind `beside` (one of the docks above), shown or hidden by
    // default; reset() puts it back there. Showing it later brings its tab forward.
    void addTab(QDockWidget *dock, QDockWidget *beside, bool shownByDefault);

    // Every dock back in its default place, shown, with the default sizes (View > Reset Layout).
    void reset();
    // The default widths and heights for the window's current size.
    void applyDefaultSizes();
    // Narrows the side docks (and shortens top and bottom ones) so the canvas keeps its share.
    // Returns whether anything changed.
    bool keepCanvasShare();
    // The same once the window's layout has settled (after a resize or an open).
    void keepCanvasShareLater();

    void save(QSettings &settings) const;
    // Restores a saved arrangement; false (and nothing changed) when there is none, it is of
    // another version, or it does not apply. Floating docks left off every screen come back
    // into the window.
    bool restore(QSettings &settings);

private:
    struct Tab
    {
        QDockWidget *dock = nullptr;
        QDockWidget *beside = nullptr;
        bool shown = false;
    };
    void arrange();
    void placeTab(const Tab &tab);

    QMainWindow *m_window;
    Docks m_docks;
    std::vector<Tab> m_tabs;
    bool m_pending = false;
};

} // namespace railyard
