// MainWindow's NCCL graph overlay: File > Overlay NCCL Graph..., the offer File > Import makes
// for a graph XML, View > NCCL Graph Overlay, and the graph and channel choosers in the toolbar.
// The overlay's state lives in the ViewState; the scene places and draws it.
#include "mainwindow.h"

#include "base/inputerror.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "import/importer.h"
#include "import/ncclgraphoverlay.h"
#include "scene/clusterscene.h"

#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QToolBar>

namespace railyard {

namespace {

QMenu *menuOf(QAction *action)
{
    if (action)
        for (QObject *o : action->associatedObjects())
            if (auto *menu = qobject_cast<QMenu *>(o))
                return menu;
    return nullptr;
}

QString graphName(const engine::NcclGraph &g)
{
    const int code = engine::ncclPatternCode(g.pattern);
    return code > 0 ? QObject::tr("Graph %1: %2 (pattern %3)")
                              .arg(g.id)
                              .arg(QString::fromStdString(g.pattern))
                              .arg(code)
                    : QObject::tr("Graph %1: %2").arg(g.id).arg(QString::fromStdString(g.pattern));
}

} // namespace

void MainWindow::createOverlayControls()
{
    QAction *overlay = new QAction(tr("Overlay NCCL &Graph\u2026"), this);
    overlay->setObjectName(QStringLiteral("actionOverlayGraph"));
    overlay->setStatusTip(tr("Draw the rings and trees of an NCCL_GRAPH_DUMP_FILE over the "
                             "current cluster"));
    connect(overlay, &QAction::triggered, this, &MainWindow::overlayGraphDialog);
    QAction *importAct = action(QStringLiteral("actionImport"));
    if (QMenu *file = menuOf(importAct)) {
        const QList<QAction *> acts = file->actions();
        const qsizetype at = acts.indexOf(importAct);
        file->insertAction(at + 1 < acts.size() ? acts[at + 1] : nullptr, overlay);
    }
    m_graphAction = new QAction(tr("NCCL &Graph Overlay"), this);
    m_graphAction->setObjectName(QStringLiteral("actionGraphOverlay"));
    m_graphAction->setCheckable(true);
    m_graphAction->setEnabled(false);
    m_graphAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    m_graphAction->setToolTip(tr("Show or hide the NCCL graph drawn over the cluster"));
    connect(m_graphAction, &QAction::toggled, this, [this](bool on) {
        m_viewState->setGraphOverlayVisible(on);
    });
    QAction *linkLoad = action(QStringLiteral("actionLinkLoad"));
    if (QMenu *view = menuOf(linkLoad)) {
        const QList<QAction *> acts = view->actions();
        const qsizetype at = acts.indexOf(linkLoad);
        view->insertAction(at + 1 < acts.size() ? acts[at + 1] : nullptr, m_graphAction);
    }
    if (auto *bar = findChild<QToolBar *>(QStringLiteral("MainToolBar"))) {
        m_graphBox = new QComboBox(bar);
        m_graphBox->setObjectName(QStringLiteral("graphBox"));
        m_graphBox->setToolTip(tr("Which of the file's NCCL graphs is drawn"));
        m_channelBox = new QComboBox(bar);
        m_channelBox->setObjectName(QStringLiteral("channelBox"));
        m_channelBox->setToolTip(tr("Draw every channel of the NCCL graph, or one"));
        m_graphBoxAction = bar->addWidget(m_graphBox);
        m_channelBoxAction = bar->addWidget(m_channelBox);
        connect(m_graphBox, &QComboBox::activated, this, [this](int index) {
            m_viewState->setGraphOverlayGraph(index);
        });
        connect(m_channelBox, &QComboBox::activated, this, [this](int index) {
            m_viewState->setGraphOverlayChannel(m_channelBox->itemData(index).toInt());
        });
    }
    syncOverlayControls();
}

void MainWindow::connectOverlay()
{
    connect(m_scene, &ClusterScene::graphOverlayDropped, this, [this](const QString &message) {
        showMessage(message, true);
    });
    connect(m_viewState, &ViewState::changed, this, [this](ViewState::Changes what) {
        if (what & ViewState::NcclGraph)
            syncOverlayControls();
    });
    // A layout imported from a graph XML opened showing its graph (applyLayoutView).
    syncOverlayControls();
}

void MainWindow::syncOverlayControls()
{
    if (!m_graphAction || !m_viewState)
        return;
    const ViewState::GraphOverlay *o = m_viewState->graphOverlay();
    {
        const QSignalBlocker block(m_graphAction);
        m_graphAction->setEnabled(o != nullptr);
        m_graphAction->setChecked(o && o->visible);
    }
    if (!m_graphBox)
        return;
    const QSignalBlocker b1(m_graphBox), b2(m_channelBox);
    m_graphBox->clear();
    m_channelBox->clear();
    m_graphBoxAction->setVisible(o && o->graphs.size() > 1);
    m_channelBoxAction->setVisible(o != nullptr);
    if (!o)
        return;
    for (const engine::NcclGraph &g : o->graphs)
        m_graphBox->addItem(graphName(g));
    m_graphBox->setCurrentIndex(o->graph);
    const engine::NcclGraph &g = o->graphs[static_cast<std::size_t>(o->graph)];
    m_channelBox->addItem(tr("All %1 channels").arg(g.channels.size()), -1);
    for (std::size_t c = 0; c < g.channels.size(); ++c)
        m_channelBox->addItem(tr("Channel %1").arg(c), static_cast<int>(c));
    m_channelBox->setCurrentIndex(std::max(0, m_channelBox->findData(o->channel)));
}

bool MainWindow::overlayGraph(const engine::ImportedMachine &machine, const QString &path)
{
    const QString name = QFileInfo(path).fileName();
    if (machine.graphs.empty()) {
        showError(tr("Cannot overlay"),
                  path + tr(": not an NCCL graph (expected <graphs> from NCCL_GRAPH_DUMP_FILE)"));
        return false;
    }
    // Every graph of the file must fit this cluster, so the chooser never offers one that
    // cannot be drawn.
    try {
        for (const engine::NcclGraph &g : machine.graphs)
            engine::overlayNcclGraph(g, m_document->topology(), name.toStdString());
    } catch (const engine::InputError &e) {
        showError(tr("Cannot overlay"), QString::fromStdString(e.what()));
        return false;
    }
    ViewState::GraphOverlay o;
    o.file = name;
    o.graphs = machine.graphs;
    m_viewState->setGraphOverlay(std::move(o));
    m_lastError.clear();
    statusBar()->showMessage(tr("%1 drawn over the cluster (View > NCCL Graph Overlay hides it)")
                                     .arg(name),
                             10000);
    return true;
}

bool MainWindow::overlayGraphFile(const QString &path)
{
    try {
        return overlayGraph(engine::importFile(path.toStdString()), path);
    } catch (const engine::InputError &e) {
        showError(tr("Cannot overlay"), QString::fromStdString(e.what()));
    } catch (const std::bad_alloc &) {
        showError(tr("Cannot overlay"), path + tr(": out of memory while reading"));
    }
    return false;
}

void MainWindow::overlayGraphDialog()
{
    const QString path = m_prompts.importFrom
                                 ? m_prompts.importFrom(this)
                                 : QFileDialog::getOpenFileName(this,
                                                                tr("Overlay NCCL Graph"),
                                                                QString(),
                                                                tr("NCCL graph XML (*.xml);;All "
                                                                   "files (*)"));
    if (!path.isEmpty())
        overlayGraphFile(path);
}

MainWindow::GraphImport MainWindow::askGraphImport(const QString &path)
{
    if (m_graphImportPrompt)
        return static_cast<GraphImport>(m_graphImportPrompt(this, path));
    QMessageBox box(QMessageBox::Question,
                    tr("Import NCCL Graph"),
                    tr("%1 is an NCCL graph: the rings and trees NCCL chose, not a machine.")
                            .arg(QFileInfo(path).fileName()),
                    QMessageBox::Cancel,
                    this);
    box.setInformativeText(tr("Draw it over the current cluster, or open the nearest layout "
                              "for its GPUs with the graph drawn on it?"));
    QPushButton *over = box.addButton(tr("Overlay on Current Cluster"), QMessageBox::AcceptRole);
    QPushButton *fresh = box.addButton(tr("New Layout"), QMessageBox::ActionRole);
    box.setDefaultButton(over);
    box.exec();
    if (box.clickedButton() == over)
        return GraphImport::Overlay;
    if (box.clickedButton() == fresh)
        return GraphImport::NewLayout;
    return GraphImport::Cancel;
}

} // namespace railyard
