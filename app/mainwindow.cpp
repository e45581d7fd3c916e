#include "mainwindow.h"

#include "document/autosaver.h"
#include "document/document.h"
#include "palette/grouppalette.h"
#include "panels/clusterpanel.h"
#include "panels/inspectorpanel.h"
#include "panels/newclusterdialog.h"
#include "panels/pricingpanel.h"
#include "panels/warningspanel.h"
#include "panels/workloadpanel.h"
#include "parallel.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <railyard/version.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>

#include <cmath>

namespace railyard {

namespace {

constexpr int kMaxRecent = 8;
constexpr int kSliderSteps = 1000;
const QString kRecentKey = QStringLiteral("recentFiles");

QString formatSeconds(double s)
{
    if (s >= 1)
        return QStringLiteral("%1 s").arg(QLocale().toString(s, 'f', 2));
    return QStringLiteral("%1 ms").arg(QLocale().toString(s * 1e3, 'f', 1));
}

} // namespace

MainWindow::MainWindow(QWidget *parent, const QString &recoveryDirectory)
    : QMainWindow(parent)
{
    setWindowIcon(QIcon(QStringLiteral(":/icons/io.github.railyard.Railyard.svg")));
    m_autoSaver = new AutoSaver(recoveryDirectory.isEmpty() ? AutoSaver::defaultDirectory()
                                                            : recoveryDirectory,
                                this);

    // Left: what is trained (workload), the cluster, and the group chips to drag.
    // Right: what it costs (pricing), what is wrong with it (warnings), and the selected device.
    const auto scrolled = [](QWidget *w) {
        auto *scroll = new QScrollArea;
        scroll->setWidget(w);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        return scroll;
    };
    const auto dock = [this](const QString &title, const char *name, QWidget *w) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(QLatin1String(name));
        d->setWidget(w);
        return d;
    };
    m_workload = new WorkloadPanel;
    QDockWidget *workloadDock = dock(tr("Workload"), "WorkloadDock", scrolled(m_workload));
    addDockWidget(Qt::LeftDockWidgetArea, workloadDock);
    m_clusterPanel = new ClusterPanel;
    QDockWidget *clusterDock = dock(tr("Cluster"), "ClusterDock", scrolled(m_clusterPanel));
    addDockWidget(Qt::LeftDockWidgetArea, clusterDock);
    tabifyDockWidget(workloadDock, clusterDock);
    workloadDock->raise();
    m_palette = new GroupPalette;
    QDockWidget *paletteDock = dock(tr("Groups"), "GroupsDock", m_palette);
    addDockWidget(Qt::LeftDockWidgetArea, paletteDock);

    m_pricing = new PricingPanel;
    QDockWidget *pricingDock = dock(tr("Pricing"), "PricingDock", scrolled(m_pricing));
    addDockWidget(Qt::RightDockWidgetArea, pricingDock);
    m_warnings = new WarningsPanel;
    m_warningsDock = dock(tr("Warnings"), "WarningsDock", m_warnings);
    addDockWidget(Qt::RightDockWidgetArea, m_warningsDock);
    m_inspector = new InspectorPanel;
    QDockWidget *inspectorDock = dock(tr("Inspector"), "InspectorDock", m_inspector);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
    tabifyDockWidget(m_warningsDock, inspectorDock);
    m_warningsDock->raise();
    connect(m_warnings, &WarningsPanel::countChanged, this, [this](int n) {
        m_warningsDock->setWindowTitle(n > 0 ? tr("Warnings (%1)").arg(n) : tr("Warnings"));
    });
    resizeDocks({workloadDock, pricingDock}, {350, 420}, Qt::Horizontal);
    resizeDocks({workloadDock, paletteDock}, {560, 300}, Qt::Vertical);
    resizeDocks({pricingDock, m_warningsDock}, {760, 170}, Qt::Vertical);

    m_statusCluster = new QLabel(this);
    m_statusStep = new QLabel(this);
    m_statusStep->setObjectName(QStringLiteral("stepTime"));
    m_zoomSlider = new QSlider(Qt::Horizontal, this);
    m_zoomSlider->setRange(0, kSliderSteps);
    m_zoomSlider->setFixedWidth(140);
    m_zoomSlider->setToolTip(tr("Zoom"));
    m_zoomLabel = new QLabel(this);
    m_zoomLabel->setMinimumWidth(48);
    statusBar()->addPermanentWidget(m_statusCluster);
    statusBar()->addPermanentWidget(m_statusStep);
    statusBar()->addPermanentWidget(m_zoomSlider);
    statusBar()->addPermanentWidget(m_zoomLabel);
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString &text) {
        if (text != m_refusedMessage)
            statusBar()->setStyleSheet(QString());
    });
    // The slider runs over the zoom range on a log scale, so each step feels the same.
    connect(m_zoomSlider, &QSlider::valueChanged, this, [this](int v) {
        if (!m_view || m_zoomSlider->signalsBlocked())
            return;
        const double lo = std::log(m_view->minZoom()), hi = std::log(m_view->maxZoom());
        m_view->setZoom(std::exp(lo + (hi - lo) * v / kSliderSteps));
    });
    resize(1500, 940);
}

MainWindow::~MainWindow()
{
    // The scene refers to the document; let it go first.
    delete m_view;
    delete m_scene;
}

QStringList MainWindow::exampleLayouts()
{
    QStringList list;
    for (const QString &name : QDir(QStringLiteral(":/layouts")).entryList(QDir::Files, QDir::Name))
        list << QStringLiteral(":/layouts/") + name;
    return list;
}

QStringList MainWindow::recentFiles()
{
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::setDocument(std::unique_ptr<Document> document)
{
    ClusterView *oldView = m_view;
    ClusterScene *oldScene = m_scene;
    std::unique_ptr<Document> oldDocument = std::move(m_document);
    m_document = std::move(document);
    m_scene = new ClusterScene(m_document.get(), this);
    // Colour by the first dimension that splits the job, so its placement shows at once; a
    // layout's "view": {"color_by": ...} says otherwise (applyViewSettings).
    if (const engine::RankLayout *ranks = m_scene->ranks()) {
        for (GroupKind kind :
             {GroupKind::Tp, GroupKind::Ep, GroupKind::Cp, GroupKind::PpStage, GroupKind::DpReplica})
            if (ranks->size(dimOf(kind)) > 1) {
                m_scene->setColourBy(kind);
                break;
            }
    }
    m_view = new ClusterView(m_scene, this);
    setCentralWidget(m_view);
    delete oldView;
    delete oldScene;
    oldDocument.reset();

    Document *doc = m_document.get();
    connect(doc, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(doc, &Document::filePathChanged, this, &MainWindow::updateTitle);
    connect(doc, &Document::titleChanged, this, &MainWindow::updateTitle);
    connect(doc, &Document::clusterChanged, this, &MainWindow::updateStatus);
    connect(doc, &Document::evaluationChanged, this, &MainWindow::updateStepTime);
    connect(m_view, &ClusterView::zoomChanged, this, [this](double z) {
        const double lo = std::log(m_view->minZoom()), hi = std::log(m_view->maxZoom());
        const QSignalBlocker block(m_zoomSlider);
        m_zoomSlider->setValue(
                static_cast<int>(std::lround((std::log(z) - lo) / (hi - lo) * kSliderSteps)));
        m_zoomLabel->setText(QStringLiteral("%1%").arg(z * 100, 0, 'f', z < 0.1 ? 1 : 0));
    });
    connect(m_scene, &ClusterScene::selectedDeviceChanged, this, [this](int device) {
        if (device >= 0)
            statusBar()->showMessage(
                    QString::fromStdString(m_document->topology().deviceName(device)));
    });
    m_clusterPanel->setDocument(doc);
    m_inspector->setScene(m_scene);
    m_workload->setDocument(doc);
    m_palette->setScene(m_scene);
    m_pricing->setDocument(doc);
    m_warnings->setDocument(doc);
    connect(m_view, &ClusterView::message, this, &MainWindow::showMessage);
    connect(m_scene, &ClusterScene::colourByChanged, this, &MainWindow::syncColourControls);
    connect(m_scene, &ClusterScene::linkLoadVisibleChanged, this, &MainWindow::syncColourControls);
    connect(m_scene, &ClusterScene::selectedGpusChanged, this, &MainWindow::syncColourControls);
    m_autoSaver->setDocument(doc);
    if (!m_actionsCreated) {
        createActions();
        // Panels outlive documents: connect them to whichever view is current once.
        connect(m_warnings, &WarningsPanel::gpusActivated, this, [this](const std::vector<int> &g) {
            m_view->showGpus(g);
        });
        connect(m_palette, &GroupPalette::groupActivated, this, [this](const GroupRef &group) {
            if (const engine::RankLayout *ranks = m_scene->ranks())
                m_view->showGpus(groupGpus(*ranks, group));
        });
        connect(m_pricing, &PricingPanel::linkActivated, this, [this](int link) {
            const engine::Topology &t = m_document->topology();
            if (link >= 0 && link < t.linkCount())
                m_view->showDevice(t.links()[static_cast<std::size_t>(link)].a);
        });
    }
    syncColourControls();
    connect(doc->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::syncUndoActions);
    connect(doc->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::syncUndoActions);
    syncUndoActions();
    updateTitle();
    updateStatus();
    updateStepTime();
    m_view->fitToCluster();
    // The layout's "view" settings need the final viewport size: apply them once laid out.
    QTimer::singleShot(0, this, &MainWindow::applyViewSettings);
}

void MainWindow::applyViewSettings()
{
    if (!m_document || !m_view)
        return;
    const engine::Json &view = m_document->layout().view;
    if (!view.is_object())
        return;
    // Colouring and the link-load view: a teaching layout opens showing what it is about.
    if (const auto it = view.find("color_by"); it != view.end() && it->is_string())
        m_scene->setColourBy(kindFromKey(QString::fromStdString(it->get<std::string>())));
    if (const auto it = view.find("link_load"); it != view.end() && it->is_boolean())
        m_scene->setLinkLoadVisible(it->get<bool>());
    if (const auto it = view.find("zoom"); it != view.end() && it->is_number())
        m_view->setZoom(it->get<double>());
    if (const auto it = view.find("focus"); it != view.end() && it->is_string()) {
        const double z = m_view->zoom();
        m_view->search(QString::fromStdString(it->get<std::string>()));
        if (view.contains("zoom"))
            m_view->setZoom(z);
        // "focus" frames a part of the cluster; it does not select anything.
        m_scene->setSelectedDevice(-1);
        m_scene->setSelectedGpus({});
        statusBar()->clearMessage();
    }
}

void MainWindow::createActions()
{
    m_actionsCreated = true;
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *newAct = file->addAction(tr("&New Cluster\u2026"), this, &MainWindow::newCluster);
    newAct->setShortcut(QKeySequence::New);
    QAction *openAct = file->addAction(tr("&Open\u2026"), this, &MainWindow::open);
    openAct->setShortcut(QKeySequence::Open);
    QMenu *examples = file->addMenu(tr("Open &Example"));
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
        examples->addAction(name, this, [this, path] { openFile(path); });
    }
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    QAction *saveAct = file->addAction(tr("&Save"), this, &MainWindow::save);
    saveAct->setShortcut(QKeySequence::Save);
    QAction *saveAsAct = file->addAction(tr("Save &As\u2026"), this, &MainWindow::saveAs);
    saveAsAct->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    // The document changes with every open: the actions follow whichever stack is current.
    QAction *undo = edit->addAction(tr("&Undo"), this, [this] { m_document->undoStack()->undo(); });
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = edit->addAction(tr("&Redo"), this, [this] { m_document->undoStack()->redo(); });
    redo->setShortcut(QKeySequence::Redo);
    m_undoAction = undo;
    m_redoAction = redo;
    // The menu says what would be undone; the toolbar stays put.
    undo->setIconText(tr("Undo"));
    redo->setIconText(tr("Redo"));
    edit->addSeparator();
    QAction *find = edit->addAction(tr("&Find Device\u2026"), this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    edit->addSeparator();
    // Placement by hand.
    m_makeGroupAction = edit->addAction(tr("&Make Group Here"), this, [this] {
        m_view->makeGroupHere(m_palette->kind());
    });
    m_makeGroupAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    m_makeGroupAction->setStatusTip(tr("Move the group of the first selected GPU onto the "
                                       "selected GPUs (Shift-drag on the canvas to select)"));
    QMenu *makeMenu = edit->addMenu(tr("Make a Group Here"));
    for (GroupKind kind : kAllGroupKinds)
        makeMenu->addAction(tr("Make a %1 Here").arg(kindNoun(kind)), this, [this, kind] {
            m_view->makeGroupHere(kind);
        });
    QAction *reset = edit->addAction(tr("Reset &Placement"), this, [this] {
        m_workload->resetPlacement();
    });
    reset->setStatusTip(tr("Put every rank back where the rank order places it"));
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    QAction *selectNone = edit->addAction(tr("Select &None"), this, [this] {
        m_scene->setSelectedGpus({});
        m_scene->setSelectedDevice(-1);
    });
    selectNone->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));

    QMenu *compare = menuBar()->addMenu(tr("&Compare"));
    QAction *pin = compare->addAction(tr("&Pin Current State as A"), this, [this] {
        m_pricing->pinA();
        showMessage(tr("Pinned as A: edit, and the Pricing panel compares A with now (B)"), false);
    });
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    compare->addAction(tr("&Restore A"), this, [this] { m_pricing->restoreA(); });
    compare->addAction(tr("&Unpin A"), this, [this] { m_pricing->unpin(); });

    QMenu *view = menuBar()->addMenu(tr("&View"));
    QAction *zin = view->addAction(tr("Zoom &In"), this, [this] { m_view->zoomIn(); });
    zin->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction *zout = view->addAction(tr("Zoom &Out"), this, [this] { m_view->zoomOut(); });
    zout->setShortcut(QKeySequence::ZoomOut);
    QAction *fit = view->addAction(tr("&Fit to Cluster"), this, [this] { m_view->fitToCluster(); });
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction *legend = view->addAction(tr("Show &Legend"));
    legend->setCheckable(true);
    legend->setChecked(true);
    connect(legend, &QAction::toggled, this, [this](bool on) { m_view->setLegendVisible(on); });
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
    m_linkLoadAction = view->addAction(tr("Link &Load"));
    m_linkLoadAction->setCheckable(true);
    m_linkLoadAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_linkLoadAction->setToolTip(tr("Colour and thicken links by how busy they are in the step"));
    connect(m_linkLoadAction, &QAction::toggled, this, [this](bool on) {
        m_scene->setLinkLoadVisible(on);
    });
    view->addSeparator();
    for (QDockWidget *dock : findChildren<QDockWidget *>())
        view->addAction(dock->toggleViewAction());

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Railyard"), this, [this] {
        QMessageBox::about(this,
                           tr("About Railyard"),
                           tr("<b>Railyard %1</b><p>Where a distributed training job's traffic "
                              "goes on a GPU cluster, and what it costs.</p><p>Apache-2.0</p>")
                                   .arg(QStringLiteral(RAILYARD_VERSION)));
    });

    QToolBar *bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("MainToolBar"));
    bar->setMovable(false);
    bar->addAction(newAct);
    bar->addAction(openAct);
    bar->addAction(saveAct);
    bar->addSeparator();
    bar->addAction(undo);
    bar->addAction(redo);
    bar->addSeparator();
    bar->addAction(zout);
    bar->addAction(zin);
    bar->addAction(fit);
    bar->addSeparator();
    auto *colourLabel = new QLabel(tr(" Colour by "), bar);
    bar->addWidget(colourLabel);
    m_colourBox = new QComboBox(bar);
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
    bar->addAction(pin);
    bar->addSeparator();
    m_search = new QLineEdit(bar);
    m_search->setPlaceholderText(tr("Find: GPU 1234, node 17, leaf 3"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    bar->addWidget(m_search);
    connect(m_search, &QLineEdit::returnPressed, this, [this] { search(m_search->text()); });
}

void MainWindow::syncColourControls()
{
    if (!m_scene || !m_colourBox)
        return;
    const std::optional<GroupKind> kind = m_scene->colourBy();
    const int k = kind ? static_cast<int>(*kind) : -1;
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
                                   .arg(kindNoun(m_palette->kind()),
                                        counted(static_cast<int>(selected), tr("GPU"), tr("GPUs")))
                         : tr("&Make Group Here"));
}

void MainWindow::showMessage(const QString &text, bool refused)
{
    // A refused drop reads in red until the next message, so it is not missed.
    m_refusedMessage = refused ? text : QString();
    statusBar()->setStyleSheet(refused ? QStringLiteral("QStatusBar { color: #b91c1c; }")
                                       : QString());
    statusBar()->showMessage(text, refused ? 12000 : 8000);
}

bool MainWindow::search(const QString &query)
{
    if (query.trimmed().isEmpty())
        return false;
    if (m_view->search(query))
        return true;
    statusBar()->showMessage(tr("Nothing is called \u201c%1\u201d in this cluster "
                                "(try \u201cGPU 12\u201d, \u201cnode 3\u201d, "
                                "\u201cleaf 2\u201d, \u201cspine 0\u201d)")
                                     .arg(query),
                             6000);
    return false;
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

void MainWindow::updateTitle()
{
    if (!m_document)
        return;
    setWindowTitle(QStringLiteral("%1[*] \u2014 Railyard").arg(m_document->displayName()));
    setWindowModified(m_document->isModified());
}

void MainWindow::updateStatus()
{
    if (!m_document)
        return;
    const engine::Topology &t = m_document->topology();
    const engine::ClusterShape &s = t.shape();
    QString fabric;
    if (!s.hasFabric)
        fabric = tr("no fabric");
    else
        fabric = tr("%1, %2 \u00d7 %3G %4 per server")
                         .arg(QString::fromLatin1(engine::toString(s.fabric)))
                         .arg(s.nicsPerNode)
                         .arg(t.nicModel().gbitPerS)
                         .arg(t.nicModel().fabric == "ethernet" ? tr("Ethernet") : tr("IB"));
    m_statusCluster->setText(tr("%1 GPUs (%2) \u00b7 %3 NVLink domain(s) of %4 \u00b7 %5")
                                     .arg(QLocale().toString(t.gpuCount()))
                                     .arg(QString::fromStdString(t.gpuSpec().id))
                                     .arg(QLocale().toString(s.domainCount()))
                                     .arg(s.domainSize)
                                     .arg(fabric));
}

void MainWindow::updateStepTime()
{
    if (!m_document)
        return;
    const engine::Evaluation &e = m_document->evaluation();
    if (!e.ok) {
        m_statusStep->setText(tr("Step \u2014"));
        m_statusStep->setToolTip(
                tr("The step cannot be priced: %1").arg(QString::fromStdString(e.error)));
        return;
    }
    QString text = tr("Step %1").arg(formatSeconds(e.stepTimeS));
    if (e.mfu > 0)
        text += tr(" \u00b7 MFU %1%").arg(QLocale().toString(e.mfu * 100, 'f', 0));
    m_statusStep->setText(text);
    m_statusStep->setToolTip(tr("%1 tokens/s per GPU; compute %2, exposed communication %3")
                                     .arg(QLocale().toString(e.tokensPerSPerGpu, 'f', 0))
                                     .arg(formatSeconds(e.exposed.compute))
                                     .arg(formatSeconds(e.exposed.sum() - e.exposed.compute)));
}

void MainWindow::showError(const QString &title, const QString &message)
{
    m_lastError = message;
    statusBar()->showMessage(message, 10000);
    // Window-modal and non-blocking: the message never stalls the caller (or a test).
    auto *box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
    box->setInformativeText(tr("The open document is unchanged. Railyard opens clusters of up "
                               "to %1 GPUs.")
                                    .arg(QLocale().toString(engine::kMaxGpus)));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    box->open();
}

bool MainWindow::openFile(const QString &path)
{
    if (!maybeSave())
        return false;
    QString error;
    auto doc = Document::load(path, &error);
    if (!doc) {
        showError(tr("Cannot open layout"), error);
        return false;
    }
    m_lastError.clear();
    if (!path.startsWith(QLatin1Char(':')))
        addRecentFile(doc->filePath());
    setDocument(std::move(doc));
    return true;
}

void MainWindow::open()
{
    const QString path
            = QFileDialog::getOpenFileName(this,
                                           tr("Open Layout"),
                                           QString(),
                                           tr("Railyard layouts (*.railyard.json *.json)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::newCluster()
{
    NewClusterDialog dialog(m_document->layout(), this);
    if (dialog.exec() != QDialog::Accepted || !maybeSave())
        return;
    QString error;
    auto doc = Document::create(dialog.layout(), &error);
    if (!doc) {
        showError(tr("Cannot create the cluster"), error);
        return;
    }
    setDocument(std::move(doc));
}

bool MainWindow::saveTo(const QString &path)
{
    // The file remembers how the canvas was coloured, so it reopens showing the same thing.
    engine::Json view = m_document->layout().view.is_object() ? m_document->layout().view
                                                              : engine::Json::object();
    if (const auto kind = m_scene->colourBy())
        view["color_by"] = kindKey(*kind).toStdString();
    else
        view["color_by"] = "none";
    view["link_load"] = m_scene->isLinkLoadVisible();
    m_document->setView(view);
    QString error;
    if (!m_document->save(path, &error)) {
        showError(tr("Cannot save"), error);
        return false;
    }
    addRecentFile(m_document->filePath());
    statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 4000);
    return true;
}

bool MainWindow::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    return saveTo(m_document->filePath());
}

bool MainWindow::saveAs()
{
    QString path = QFileDialog::getSaveFileName(this,
                                                tr("Save Layout As"),
                                                m_document->displayName(),
                                                tr("Railyard layouts (*.railyard.json)"));
    if (path.isEmpty())
        return false;
    if (!path.endsWith(QStringLiteral(".json")))
        path += QStringLiteral(".railyard.json");
    return saveTo(path);
}

void MainWindow::addRecentFile(const QString &path)
{
    if (path.isEmpty())
        return;
    QStringList list = recentFiles();
    list.removeAll(path);
    list.prepend(path);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(kRecentKey, list);
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList list = recentFiles();
    for (const QString &path : list) {
        QAction *a = m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] {
            openFile(path);
        });
        a->setToolTip(path);
        a->setEnabled(QFileInfo::exists(path));
    }
    if (list.isEmpty())
        m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
    else {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear List"), this, [] { QSettings().remove(kRecentKey); });
    }
}

bool MainWindow::offerRecovery(bool ask)
{
    const QList<AutoSaver::Recovery> found = AutoSaver::orphans(
            QFileInfo(m_autoSaver->recoveryFile()).absolutePath());
    if (found.isEmpty())
        return false;
    const AutoSaver::Recovery &latest = found.front();
    if (ask) {
        const auto answer = QMessageBox::question(
                this,
                tr("Restore unsaved work?"),
                tr("Railyard did not close normally. Restore the unsaved changes to %1 from %2?")
                        .arg(latest.title.isEmpty() ? tr("a layout") : latest.title,
                             QLocale().toString(latest.saved, QLocale::ShortFormat)),
                QMessageBox::Yes | QMessageBox::No,
                QMessageBox::Yes);
        if (answer != QMessageBox::Yes) {
            for (const AutoSaver::Recovery &r : found)
                AutoSaver::remove(r);
            return false;
        }
    }
    QFile f(latest.file);
    QString error;
    std::unique_ptr<Document> doc;
    if (f.open(QIODevice::ReadOnly))
        doc = Document::fromText(f.readAll(), latest.file, &error);
    else
        error = latest.file + tr(": cannot open: ") + f.errorString();
    for (const AutoSaver::Recovery &r : found)
        AutoSaver::remove(r);
    if (!doc) {
        showError(tr("Cannot restore"), error);
        return false;
    }
    doc->setFilePath(latest.originalPath);
    doc->markModified();
    setDocument(std::move(doc));
    m_autoSaver->saveNow(); // this session now holds the recovered work
    return true;
}

bool MainWindow::maybeSave()
{
    if (!m_document || !m_document->isModified())
        return true;
    const auto answer = QMessageBox::warning(this,
                                             tr("Unsaved changes"),
                                             tr("%1 has unsaved changes. Save them?")
                                                     .arg(m_document->displayName()),
                                             QMessageBox::Save | QMessageBox::Discard
                                                     | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return save();
    return answer == QMessageBox::Discard;
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (maybeSave()) {
        m_autoSaver->discard();
        event->accept();
    } else {
        event->ignore();
    }
}

} // namespace railyard
