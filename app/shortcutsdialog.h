#pragma once

#include <QDialog>
#include <QList>

class QMenuBar;
class QTreeWidget;

namespace railyard {

// Help > Keyboard Shortcuts: every shortcut of the menus' actions, read from the actions
// themselves (so the list cannot drift from what the keys do), grouped by menu, and the keys the
// canvas handles itself.
class ShortcutsDialog : public QDialog
{
    Q_OBJECT

public:
    struct Entry
    {
        QString menu;    // "File", "View > Colour GPUs By"
        QString command; // "Open", "Zoom In"
        QString keys;    // "Ctrl+O", "Ctrl++, Ctrl+="
    };
    // The menus' actions that have a shortcut, in menu order.
    static QList<Entry> menuEntries(const QMenuBar *menuBar);
    // The keys and gestures the canvas handles without an action (ClusterView).
    static QList<Entry> canvasEntries();

    explicit ShortcutsDialog(const QMenuBar *menuBar, QWidget *parent = nullptr);

    QTreeWidget *table() const { return m_table; }

private:
    QTreeWidget *m_table;
};

} // namespace railyard
