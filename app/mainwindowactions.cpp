// MainWindow's menus, toolbar and the controls that follow the scene (colouring, undo text).
#include "mainwindow.h"

#include "docklayout.h"
#include "document/document.h"
#include "palette/grouppalette.h"
#include "panels/lessonpanel.h"
#include "panels/pricingpanel.h"
#include "panels/workloadpanel.h"
#include "quickguide.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "shortcutsdialog.h"

#include <railyard/version.h>

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>
#include <QUndoStack>

namespace railyard {

namespace {

QAction *named(QAction *action, const char *name)
{
    action->setObjectName(QLatin1String(name));
    return action;
}

} // namespace

QAction *MainWindow::action(const QString &objectName) const
{
    return findChild<QAction *>(objectName);
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAct = named(file->addAction(tr("&New Cluster\u2026"), this, &MainWindow::newCluster),
                            "actionNewCluster");
    newAct->setShortcut(QKeySequence::New);
    newAct->setStatusTip(tr("Build a cluster from GPU type, servers, NVLink domain and fabric"));
    QAction *openAct = named(file->addAction(tr("&Open\u2026"), this, &MainWindow::open),
                             "actionOpen");
    openAct->setShortcut(QKeySequence::Open);
    QAction *importAct = named(file->addAction(tr("&Import\u2026"), this, &MainWindow::importDialog),
                               "actionImport");
    importAct->setStatusTip(tr("Read nvidia-smi topo -m, NCCL topology XML or an nccl-tests log "
                               "into a new layout"));
    QMenu *examples = file->addMenu(tr("Open &Example"));
    examples->setObjectName(QStringLiteral("menuOpenExample"));
    for (const QString &path : exampleLayouts()) {
        // The layout's own title names it in the menu.
        QString name = QFileInfo(path).fileName();
        QFile f(path);
        try {
            if (f.open(QIODevice::ReadOnly))
                name = QString::fromStdString(
                        engine::parseLayout(f.readAll().toStdString(), path.toStdString()).title);
        } catch (const std::exception &) {
            // A broken example still gets its file name in the menu; opening it says why.
        }
        QAction *a = examples->addAction(name, this, [this, path] { openFile(path); });
        a->setData(path);
    }
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    m_recentMenu->setObjectName(QStringLiteral("menuOpenRecent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    QAction *saveAct = named(file->addAction(tr("&Save"), this, &MainWindow::save), "actionSave");
    saveAct->setShortcut(QKeySequence::Save);
    QAction *saveAsAct = named(file->addAction(tr("Save &As\u2026"), this, &MainWindow::saveAs),
                               "actionSaveAs");
    saveAsAct->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction *exportAct = named(file->addAction(tr("&Export\u2026"),
                                               this,
                                               &MainWindow::exportWithDialog),
                               "actionExport");
    exportAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportAct->setStatusTip(tr("Write the diagram (SVG, PNG, PDF), a chart or the report "
                               "(Markdown, CSV, JSON)"));
    QAction *reportAct = named(file->addAction(tr("Export &Review Report\u2026"),
                                               this,
                                               &MainWindow::exportReviewWithDialog),
                               "actionExportReviewReport");
    reportAct->setStatusTip(tr("Write a design-review report (PDF or Markdown): the step time "
                               "with its band, the diagram, the charts, the hottest links, the "
                               "warnings, the A/B comparison and the assumptions"));
    QAction *printAct = named(file->addAction(tr("&Print\u2026"), this, &MainWindow::print),
                              "actionPrint");
    printAct->setShortcut(QKeySequence::Print);
    file->addSeparator();
    QAction *quit = named(file->addAction(tr("&Quit"), this, &QWidget::close), "actionQuit");
    quit->setShortcut(QKeySequence::Quit);

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    // The document changes with every open: the actions follow whichever stack is current.
    m_undoAction = named(edit->addAction(tr("&Undo"),
                                         this,
                                         [this] { m_document->undoStack()->undo(); }),
                         "actionUndo");
    m_undoAction->setShortcut(QKeySequence::Undo);
    m_redoAction = named(edit->addAction(tr("&Redo"),
                                         this,
                                         [this] { m_document->undoStack()->redo(); }),
                         "actionRedo");
    m_redoAction->setShortcut(QKeySequence::Redo);
    // The menu says what would be undone; the toolbar stays put.
    m_undoAction->setIconText(tr("Undo"));
    m_redoAction->setIconText(tr("Redo"));
    edit->addSeparator();
    QAction *find = named(edit->addAction(tr("&Find Device\u2026"),
                                          this,
                                          [this] {
                                              m_search->setFocus();
                                              m_search->selectAll();
                                          }),
                          "actionFind");
    find->setShortcut(QKeySequence::Find);
    edit->addSeparator();
    // Placement by hand.
    m_makeGroupAction = named(edit->addAction(tr("&Make Group Here"),
                                              this,
                                              [this] { m_view->makeGroupHere(m_palette->kind()); }),
                              "actionMakeGroup");
    m_makeGroupAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    m_makeGroupAction->setIconText(tr("Make Group Here")); // the menu text counts the selection
    m_makeGroupAction->setStatusTip(tr("Move the group of the first selected GPU onto the "
                                       "selected GPUs (Shift-drag on the canvas to select)"));
    QMenu *makeMenu = edit->addMenu(tr("Make a Group Here"));
    for (GroupKind kind : kAllGroupKinds)
        makeMenu->addAction(tr("Make a %1 Here").arg(kindNoun(kind)),
                            this,
                            [this, kind] { m_view->makeGroupHere(kind); })
                ->setData(static_cast<int>(kind));
    // A serving layout's groups are the serving engine's (the CP slot is its pools).
    connect(makeMenu, &QMenu::aboutToShow, this, [this, makeMenu] {
        const bool serving = m_document && m_document->isServing();
        for (QAction *a : makeMenu->actions()) {
            const auto kind = static_cast<GroupKind>(a->data().toInt());
            a->setText(tr("Make a %1 Here").arg(serving ? servingKindNoun(kind) : kindNoun(kind)));
        }
    });
    QAction *reset = named(edit->addAction(tr("Reset &Placement"),
                                           this,
                                           [this] { m_workload->resetPlacement(); }),
                           "actionResetPlacement");
    reset->setStatusTip(tr("Put every rank back where the rank order places it"));
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    QAction *selectNone = named(edit->addAction(tr("Select &None"),
                                                this,
                                                [this] {
                                                    m_scene->setSelectedGpus({});
                                                    m_scene->setSelectedDevice(-1);
                                                }),
                                "actionSelectNone");
    selectNone->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));

    QMenu *compare = menuBar()->addMenu(tr("&Compare"));
    QAction *pin = named(compare->addAction(tr("&Pin Current State as A"),
                                            this,
                                            [this] {
                                                m_pricing->pinA();
                                                showMessage(tr("Pinned %1 as A: edit it or open "
                                                               "another layout, and the Pricing "
                                                               "panel compares A with now (B)")
                                                                    .arg(m_document->displayName()),
                                                            false);
                                            }),
                         "actionPin");
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P)); // Ctrl+P prints
    named(compare->addAction(tr("&Restore A"), this, [this] { m_pricing->restoreA(); }),
          "actionRestoreA");
    named(compare->addAction(tr("&Unpin A"), this, [this] { m_pricing->unpin(); }), "actionUnpin");

    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *zin = named(view->addAction(tr("Zoom &In"), this, [this] { m_view->zoomIn(); }),
                         "actionZoomIn");
    zin->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction *zout = named(view->addAction(tr("Zoom &Out"), this, [this] { m_view->zoomOut(); }),
                          "actionZoomOut");
    zout->setShortcut(QKeySequence::ZoomOut);
    QAction *fit = named(view->addAction(tr("&Fit to Cluster"),
                                         this,
                                         [this] { m_view->fitToCluster(); }),
                         "actionFit");
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    m_legendAction = named(view->addAction(tr("Show &Legend")), "actionLegend");
    m_legendAction->setCheckable(true);
    m_legendAction->setChecked(true);
    connect(m_legendAction, &QAction::toggled, this, [this](bool on) {
        m_view->setLegendVisible(on);
    });
    view->addSeparator();
    QMenu *colour = view->addMenu(tr("&Colour GPUs By"));
    m_colourActions = new QActionGroup(this);
    {
        QAction *none = colour->addAction(tr("Device Kind (No Groups)"));
        none->setCheckable(true);
        none->setData(-1);
        m_colourActions->addAction(none);
        int key = Qt::Key_1;
        for (GroupKind kind : kAllGroupKinds) {
            QAction *a = colour->addAction(kindNoun(kind));
            a->setCheckable(true);
            a->setData(static_cast<int>(kind));
            a->setShortcut(QKeySequence(Qt::ALT | Qt::Key(key++)));
            m_colourActions->addAction(a);
        }
        none->setShortcut(QKeySequence(Qt::ALT | Qt::Key_0));
    }
    connect(m_colourActions, &QActionGroup::triggered, this, [this](QAction *a) {
        const int k = a->data().toInt();
        m_scene->setColourBy(k < 0 ? std::nullopt : std::optional(static_cast<GroupKind>(k)));
    });
    m_linkLoadAction = named(view->addAction(tr("Link &Load")), "actionLinkLoad");
    m_linkLoadAction->setCheckable(true);
    m_linkLoadAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_linkLoadAction->setToolTip(tr("Colour and thicken links by how busy they are in the step"));
    connect(m_linkLoadAction, &QAction::toggled, this, [this](bool on) {
        m_scene->setLinkLoadVisible(on);
    });
    view->addSeparator();
    view->addAction(m_tourDock->toggleViewAction());
    view->addAction(m_plannerDock->toggleViewAction());
    view->addAction(m_hottestDock->toggleViewAction());
    view->addAction(m_lessonDock->toggleViewAction());
    view->addAction(m_faultDock->toggleViewAction());
    QMenu *lessonSteps = view->addMenu(tr("Lesson &Steps"));
    lessonSteps->setObjectName(QStringLiteral("menuLessonSteps"));
    lessonSteps->addActions(m_lesson->stepActions());
    QMenu *panels = view->addMenu(tr("&Panels"));
    panels->setObjectName(QStringLiteral("menuPanels"));
    for (QDockWidget *dock : m_docks->all())
        panels->addAction(dock->toggleViewAction());
    QAction *resetLayout = named(view->addAction(tr("&Reset Layout"),
                                                 this,
                                                 [this] {
                                                     m_docks->reset();
                                                     if (m_view)
                                                         m_view->fitToCluster();
                                                 }),
                                 "actionResetLayout");
    resetLayout->setStatusTip(tr("Every panel back in its place, at its usual size"));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *guide = named(help->addAction(tr("&Quick Guide"), this, &MainWindow::showQuickGuide),
                           "actionQuickGuide");
    guide->setShortcut(QKeySequence::HelpContents);
    QAction *keys = named(help->addAction(tr("&Keyboard Shortcuts"),
                                          this,
                                          &MainWindow::showShortcuts),
                          "actionShortcuts");
    keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    help->addSeparator();
    named(help->addAction(tr("&About Railyard"),
                          this,
                          [this] {
                              QMessageBox::about(this,
                                                 tr("About Railyard"),
                                                 tr("<b>Railyard %1</b><p>Where a distributed "
                                                    "training or serving job's traffic goes on a "
                                                    "GPU cluster, and what it costs.</p>"
                                                    "<p>Apache-2.0</p>")
                                                         .arg(QStringLiteral(RAILYARD_VERSION)));
                          }),
          "actionAbout");
}

void MainWindow::createToolBar()
{
    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("MainToolBar"));
    bar->setMovable(false);
    for (const char *name : {"actionNewCluster",
                             "actionOpen",
                             "actionSave",
                             "",
                             "actionUndo",
                             "actionRedo",
                             "",
                             "actionZoomOut",
                             "actionZoomIn",
                             "actionFit",
                             ""}) {
        if (*name)
            bar->addAction(action(QLatin1String(name)));
        else
            bar->addSeparator();
    }
    auto *colourLabel = new QLabel(tr(" Colour by "), bar);
    bar->addWidget(colourLabel);
    m_colourBox = new QComboBox(bar);
    // Its names change with the layout (a serving layout's pools): as wide as they are.
    m_colourBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_colourBox->addItem(tr("Device kind"), -1);
    for (GroupKind kind : kAllGroupKinds)
        m_colourBox->addItem(kindNoun(kind), static_cast<int>(kind));
    m_colourBox->setToolTip(tr("Colour every GPU by its group in one parallel dimension "
                               "(Alt+1 to Alt+5)"));
    bar->addWidget(m_colourBox);
    connect(m_colourBox, &QComboBox::activated, this, [this](int index) {
        const int k = m_colourBox->itemData(index).toInt();
        m_scene->setColourBy(k < 0 ? std::nullopt : std::optional(static_cast<GroupKind>(k)));
    });
    bar->addAction(m_linkLoadAction);
    bar->addSeparator();
    bar->addAction(action(QStringLiteral("actionPin")));
    bar->addSeparator();
    m_search = new QLineEdit(bar);
    m_search->setPlaceholderText(tr("Find: GPU 1234, node 17, leaf 3"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    bar->addWidget(m_search);
    connect(m_search, &QLineEdit::returnPressed, this, [this] { search(m_search->text()); });
}

void MainWindow::showShortcuts()
{
    if (!m_shortcutsWindow)
        m_shortcutsWindow = new ShortcutsDialog(menuBar(), this);
    m_shortcutsWindow->show();
    m_shortcutsWindow->raise();
    m_shortcutsWindow->activateWindow();
}

void MainWindow::showQuickGuide()
{
    if (!m_guideWindow)
        m_guideWindow = new QuickGuide(
                [this](const char *name) {
                    const QAction *a = action(QLatin1String(name));
                    return a ? a->shortcut().toString(QKeySequence::NativeText) : QString();
                },
                this);
    m_guideWindow->show();
    m_guideWindow->raise();
    m_guideWindow->activateWindow();
}

void MainWindow::syncColourControls()
{
    if (!m_scene || !m_colourBox)
        return;
    const std::optional<GroupKind> kind = m_scene->colourBy();
    const int k = kind ? static_cast<int>(*kind) : -1;
    // A serving layout colours by the serving engine's groups: the CP slot is its pools.
    const bool serving = m_document && m_document->isServing();
    for (GroupKind g : kAllGroupKinds) {
        const QString noun = serving ? servingKindNoun(g) : kindNoun(g);
        if (const int i = m_colourBox->findData(static_cast<int>(g)); i >= 0)
            m_colourBox->setItemText(i, noun);
    }
    for (QAction *a : m_colourActions->actions())
        if (const int d = a->data().toInt(); d >= 0)
            a->setText(serving ? servingKindNoun(static_cast<GroupKind>(d))
                               : kindNoun(static_cast<GroupKind>(d)));
    m_colourBox->setCurrentIndex(std::max(0, m_colourBox->findData(k)));
    for (QAction *a : m_colourActions->actions())
        a->setChecked(a->data().toInt() == k);
    {
        const QSignalBlocker block(m_linkLoadAction);
        m_linkLoadAction->setChecked(m_scene->isLinkLoadVisible());
    }
    const auto selected = m_scene->selectedGpus().size();
    m_makeGroupAction->setText(
            selected > 0 ? tr("&Make %1 Here (%2 selected)")
                                   .arg(serving ? servingKindNoun(m_palette->kind())
                                                : kindNoun(m_palette->kind()),
                                        counted(static_cast<int>(selected), tr("GPU"), tr("GPUs")))
                         : tr("&Make Group Here"));
}

void MainWindow::syncUndoActions()
{
    if (!m_undoAction || !m_document)
        return;
    QUndoStack *s = m_document->undoStack();
    m_undoAction->setEnabled(s->canUndo());
    m_redoAction->setEnabled(s->canRedo());
    m_undoAction->setText(s->canUndo() ? tr("&Undo %1").arg(s->undoText()) : tr("&Undo"));
    m_redoAction->setText(s->canRedo() ? tr("&Redo %1").arg(s->redoText()) : tr("&Redo"));
}

} // namespace railyard
