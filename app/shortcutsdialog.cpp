#include "shortcutsdialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace railyard {

namespace {

QString plain(QString text)
{
    text.remove(QLatin1Char('&'));
    if (text.endsWith(QChar(0x2026)))
        text.chop(1);
    return text;
}

// A menu's own actions first, then its submenus, so each menu is one section. An action in two
// menus (a dock's toggle in View and in View > Panels) is listed where it is met first.
void collect(const QMenu *menu,
             const QString &path,
             QList<ShortcutsDialog::Entry> &out,
             QSet<const QAction *> &seen)
{
    for (QAction *a : menu->actions()) {
        if (a->isSeparator() || a->menu() || a->shortcuts().isEmpty() || seen.contains(a))
            continue;
        seen.insert(a);
        QStringList keys;
        for (const QKeySequence &k : a->shortcuts())
            keys << k.toString(QKeySequence::NativeText);
        // The icon text stays put where the menu text changes ("Undo Move TP group 3").
        out.push_back({path, plain(a->iconText()), keys.join(QStringLiteral(", "))});
    }
    for (QAction *a : menu->actions())
        if (const QMenu *sub = a->menu())
            collect(sub, path + QStringLiteral(" > ") + plain(sub->title()), out, seen);
}

} // namespace

QList<ShortcutsDialog::Entry> ShortcutsDialog::menuEntries(const QMenuBar *menuBar)
{
    QList<Entry> out;
    QSet<const QAction *> seen;
    for (QAction *a : menuBar->actions())
        if (const QMenu *menu = a->menu())
            collect(menu, plain(menu->title()), out, seen);
    return out;
}

QList<ShortcutsDialog::Entry> ShortcutsDialog::canvasEntries()
{
    // As ClusterView handles them (keyPressEvent, the mouse events and the wheel).
    const QString canvas = tr("Canvas");
    return {
            {canvas, tr("Zoom in / out"), tr("+ / \u2212, or the wheel")},
            {canvas, tr("Fit to cluster"), tr("0 or Home")},
            {canvas, tr("Clear the selection"), tr("Esc")},
            {canvas, tr("Pan"), tr("Drag the background")},
            {canvas, tr("Select GPUs"), tr("Shift+drag (Ctrl+Shift+drag adds)")},
            {canvas, tr("Add or remove a GPU"), tr("Ctrl+click")},
            {canvas, tr("Swap two GPUs' ranks"), tr("Drag a GPU onto another")},
    };
}

ShortcutsDialog::ShortcutsDialog(const QMenuBar *menuBar, QWidget *parent)
    : QDialog(parent)
    , m_table(new QTreeWidget(this))
{
    setWindowTitle(tr("Keyboard Shortcuts"));
    setObjectName(QStringLiteral("ShortcutsDialog"));
    m_table->setColumnCount(2);
    m_table->setHeaderLabels({tr("Command"), tr("Keys")});
    m_table->setRootIsDecorated(false);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_table->header()->setStretchLastSection(false);
    QString section;
    QTreeWidgetItem *header = nullptr;
    for (const Entry &e : menuEntries(menuBar) + canvasEntries()) {
        if (e.menu != section || !header) {
            section = e.menu;
            header = new QTreeWidgetItem(m_table, {section});
            QFont bold = header->font(0);
            bold.setBold(true);
            header->setFont(0, bold);
            header->setFirstColumnSpanned(true);
        }
        new QTreeWidgetItem(m_table, {QStringLiteral("    ") + e.command, e.keys});
    }
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    layout->addWidget(buttons);
    resize(520, 620);
}

} // namespace railyard
