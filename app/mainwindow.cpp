#include "mainwindow.h"

#include "base/jsoncursor.h"
#include "base/showntext.h"
#include "docklayout.h"
#include "document/autosaver.h"
#include "document/document.h"
#include "document/groupref.h"
#include "document/viewstate.h"
#include "export/diagramexport.h"
#include "layout/parallel.h"
#include "palette/grouppalette.h"
#include "panels/clusterpanel.h"
#include "panels/faultpanel.h"
#include "panels/hottestlinkspanel.h"
#include "panels/inspectorpanel.h"
#include "panels/lessonpanel.h"
#include "panels/plannerpanel.h"
#include "panels/pricingpanel.h"
#include "panels/timelinepanel.h"
#include "panels/warningspanel.h"
#include "panels/wheelguard.h"
#include "panels/workloadpanel.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QEvent>
#include <QLabel>
#include <QLocale>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QStatusBar>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace railyard {

namespace {

constexpr int kSliderSteps = 1000;
const QString kGeometryKey = QStringLiteral("window/geometry");

QString formatSeconds(double s)
{
    if (s >= 1)
        return QStringLiteral("%1 s").arg(QLocale().toString(s, 'f', 2));
    return QStringLiteral("%1 ms").arg(QLocale().toString(s * 1e3, 'f', 1));
}

// A panel in a scroll area: a dock's width never has to grow with what the panel shows.
QScrollArea *scrolled(QWidget *w)
{
    auto *scroll = new QScrollArea;
    scroll->setWidget(w);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    return scroll;
}

// A panel that scrolls up and down, never sideways: the dock is at least as wide as the panel's
// least width (Pricing's numbers), so nothing in it is cut at the dock's right edge.
class WidthKeepingScrollArea : public QScrollArea
{
public:
    explicit WidthKeepingScrollArea(QWidget *panel)
    {
        setWidget(panel);
        setWidgetResizable(true);
        setFrameShape(QFrame::NoFrame);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        panel->installEventFilter(this);
    }
    QSize minimumSizeHint() const override
    {
        const QSize base = QScrollArea::minimumSizeHint();
        const int bar = verticalScrollBar()->sizeHint().width();
        return {std::max(base.width(), widget()->minimumSizeHint().width() + bar), base.height()};
    }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        // The panel's least width changed (a column came or went): the dock hears of it.
        if (watched == widget() && event->type() == QEvent::LayoutRequest)
            updateGeometry();
        return QScrollArea::eventFilter(watched, event);
    }
};

} // namespace

MainWindow::MainWindow(QWidget *parent, const QString &recoveryDirectory)
    : QMainWindow(parent)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/io.github.railyard.Railyard.svg")));
    m_autoSaver = new AutoSaver(recoveryDirectory.isEmpty() ? AutoSaver::defaultDirectory()
                                                            : recoveryDirectory,
                                this);
    connect(m_autoSaver, &AutoSaver::saveFailed, this, [this](const QString &message) {
        statusBar()->showMessage(message, 15000);
    });

    // One central widget for the window's life: the view of each document goes inside it.
    // Replacing the central widget itself lets the docks take the canvas's width while the new
    // view is still hidden (the docks grew to 650 px and the canvas shrank to a strip).
    m_canvas = new QWidget(this);
    m_canvas->setObjectName(QStringLiteral("canvas"));
    auto *canvasLayout = new QVBoxLayout(m_canvas);
    canvasLayout->setContentsMargins(0, 0, 0, 0);
    setCentralWidget(m_canvas);

    const auto dock = [this](const QString &title, const char *name, QWidget *w) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(QLatin1String(name));
        d->setWidget(w);
        return d;
    };
    m_workload = new WorkloadPanel;
    m_clusterPanel = new ClusterPanel;
    m_palette = new GroupPalette;
    m_inspector = new InspectorPanel;
    m_pricing = new PricingPanel;
    m_warnings = new WarningsPanel;
    DockLayout::Docks docks;
    docks.workload = dock(tr("Workload"), "WorkloadDock", scrolled(m_workload));
    docks.cluster = dock(tr("Cluster"), "ClusterDock", scrolled(m_clusterPanel));
    docks.groups = dock(tr("Groups"), "GroupsDock", m_palette);
    docks.inspector = dock(tr("Inspector"), "InspectorDock", m_inspector);
    docks.pricing = dock(tr("Pricing"), "PricingDock", new WidthKeepingScrollArea(m_pricing));
    docks.warnings = dock(tr("Warnings"), "WarningsDock", m_warnings);
    m_docks = std::make_unique<DockLayout>(this, docks);
    // The busiest links, a tab beside Pricing (the warnings keep their own place).
    m_hottest = new HottestLinksPanel;
    m_hottestDock = dock(tr("Hottest Links"), "HottestLinksDock", m_hottest);
    m_docks->addTab(m_hottestDock, docks.pricing, true);
    connect(m_hottest, &HottestLinksPanel::linkActivated, this, [this](int link) {
        m_view->showLink(link);
    });
    connect(m_warnings, &WarningsPanel::countChanged, this, [this](int n) {
        m_docks->docks().warnings->setWindowTitle(n > 0 ? tr("Warnings (%1)").arg(n)
                                                        : tr("Warnings"));
    });

    m_statusCluster = new QLabel(this);
    m_statusStep = new QLabel(this);
    m_statusStep->setObjectName(QStringLiteral("stepTime"));
    m_zoomSlider = new QSlider(Qt::Horizontal, this);
    m_zoomSlider->setRange(0, kSliderSteps);
    m_zoomSlider->setFixedWidth(140);
    m_zoomSlider->setToolTip(tr("Zoom"));
    m_zoomLabel = new QLabel(this);
    m_zoomLabel->setMinimumWidth(48);
    // The cluster's summary gives way to messages (what a drop did, why it was refused); the
    // step time and the zoom stay.
    statusBar()->addWidget(m_statusCluster, 1);
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

    createTourDock();
    createPlannerDock();
    createLessonDock();
    createFaultDock();
    // Rolling the wheel down a dock scrolls it; it steps a field only once the user is in it.
    for (QDockWidget *d : findChildren<QDockWidget *>())
        WheelGuard::install(d->widget());
    createActions();
    createToolBar();
    createOverlayControls();
    // Panels outlive documents: they reach whichever view is current.
    connect(m_warnings, &WarningsPanel::gpusActivated, this, [this](const std::vector<int> &g) {
        m_view->showGpus(g);
    });
    connect(m_palette, &GroupPalette::groupActivated, this, [this](const GroupRef &group) {
        m_view->showGpus(m_palette->groupGpus(group)); // a serving layout's groups too
    });
    connect(m_pricing, &PricingPanel::linkActivated, this, [this](int link) {
        const engine::Topology &t = m_document->topology();
        if (link >= 0 && link < t.linkCount())
            m_view->showDevice(t.links()[static_cast<std::size_t>(link)].a);
    });

    resize(1500, 940);
    m_docks->applyDefaultSizes();
    openDefaultDocument();
}

MainWindow::~MainWindow()
{
    // The scene refers to the document; let it go first.
    delete m_timeline;
    delete m_view;
    delete m_scene;
}

void MainWindow::setDocument(std::unique_ptr<Document> document)
{
    ClusterView *oldView = m_view;
    ClusterScene *oldScene = m_scene;
    TimelinePanel *oldTimeline = m_timeline;
    ViewState *oldViewState = m_viewState;
    std::unique_ptr<Document> oldDocument = std::move(m_document);
    m_document = std::move(document);
    // A pin outlives the document it was made in: A stays while B is another file (the tour's
    // "open A, pin it, open B"), until Unpin.
    if (oldDocument && oldDocument->pinned() && !m_document->pinned())
        m_document->setPinned(*oldDocument->pinned());
    m_viewState = new ViewState(m_document.get(), this);
    m_scene = new ClusterScene(m_document.get(), this);
    m_scene->setViewState(m_viewState);
    // Colour by the first dimension that splits the job, so its placement shows at once, or as
    // the layout's "view" says: the same colouring a headless export draws.
    applyLayoutView(*m_scene);
    m_view = new ClusterView(m_scene, m_canvas);
    m_view->setLegendVisible(m_legendAction->isChecked());
    m_canvas->layout()->addWidget(m_view);
    m_view->show();
    m_timeline = new TimelinePanel(m_document.get(), m_viewState, m_canvas);
    m_timeline->setFixedHeight(170);
    m_canvas->layout()->addWidget(m_timeline);
    m_timeline->show();
    delete oldTimeline;
    delete oldView;
    delete oldScene;
    delete oldViewState;
    oldDocument.reset();
    // The view takes the canvas's size now, so it fits the cluster at that size.
    m_canvas->layout()->activate();

    Document *doc = m_document.get();
    connect(doc, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(doc, &Document::filePathChanged, this, &MainWindow::updateTitle);
    connect(doc, &Document::filePathChanged, this, &MainWindow::watchFile);
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
    connect(m_viewState, &ViewState::changed, this, [this](ViewState::Changes what) {
        const int device = m_viewState->selectedDevice();
        if ((what & ViewState::SelectedDevice) && device >= 0)
            statusBar()->showMessage(
                    QString::fromStdString(m_document->topology().deviceName(device)));
        // The user asked about a device or a link: its specs come forward (unless closed).
        if (((what & ViewState::SelectedDevice) && device >= 0)
            || ((what & ViewState::SelectedLink) && m_viewState->selectedLink() >= 0))
            if (QDockWidget *d = m_docks->docks().inspector; d->toggleViewAction()->isChecked())
                d->raise();
        if (what & (ViewState::Colouring | ViewState::LinkLoad | ViewState::SelectedGpus))
            syncColourControls();
    });
    m_clusterPanel->setDocument(doc);
    m_inspector->setScene(m_scene);
    m_hottest->setDocument(doc, m_viewState);
    m_workload->setDocument(doc);
    m_palette->setScene(m_scene);
    m_pricing->setDocument(doc);
    m_warnings->setDocument(doc);
    m_planner->setDocument(doc);
    m_lesson->setDocument(doc, m_viewState);
    m_faults->setDocument(doc);
    connect(m_view, &ClusterView::message, this, &MainWindow::showMessage);
    m_autoSaver->setDocument(doc);
    watchFile();
    syncColourControls();
    connectOverlay();
    connect(doc->undoStack(), &QUndoStack::indexChanged, this, &MainWindow::syncUndoActions);
    connect(doc->undoStack(), &QUndoStack::cleanChanged, this, &MainWindow::syncUndoActions);
    syncUndoActions();
    updateTitle();
    updateStatus();
    updateStepTime();
    m_view->fitToCluster();
    // The layout's "view" settings need the final viewport size: apply them once laid out.
    QTimer::singleShot(0, this, &MainWindow::applyViewSettings);
    m_docks->keepCanvasShareLater();
}

void MainWindow::applyViewSettings()
{
    if (!m_document || !m_view)
        return;
    // The colouring and the link-load view were read with the layout (applyLayoutView); the
    // zoom and focus are the window's.
    const engine::Json &view = m_document->layout().view.get();
    if (!view.is_object())
        return;
    // A layout opens showing its whole cluster. A saved zoom is kept only when the whole
    // cluster still shows at it in this window (a zoom picked on a larger screen would cut the
    // cluster off here); "focus" then centres that part. Otherwise the view stays fitted, and
    // keeps fitting as the window resizes.
    const auto zoom = view.find("zoom");
    if (zoom == view.end() || !zoom->is_number() || !m_view->isVisible())
        return;
    const double z = zoom->get<double>();
    if (!(z > 0) || z >= m_view->fitZoom())
        return;
    m_view->setZoom(z);
    if (const auto it = view.find("focus"); it != view.end() && it->is_string()) {
        m_view->search(QString::fromStdString(it->get<std::string>()));
        m_view->setZoom(z);
        // "focus" frames a part of the cluster; it does not select anything.
        m_scene->setSelectedDevice(-1);
        m_scene->setSelectedGpus({});
        statusBar()->clearMessage();
    }
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

void MainWindow::updateTitle()
{
    if (!m_document)
        return;
    // The name is the file's or, unsaved, the title: at most kShownTitleChars of it.
    QString name = m_document->displayName();
    if (std::size_t(name.size()) > engine::kShownTitleChars)
        name = QString::fromStdString(engine::shownTitle(
                name.left(qsizetype(engine::kShownTitleChars) + 1).toStdString()));
    setWindowTitle(QStringLiteral("%1[*] \u2014 Railyard").arg(name));
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
    // "1 NVLink domain of 8", "9 NVLink domains of 8"
    m_statusCluster->setText(
            tr("%1 GPUs (%2) \u00b7 %3 of %4 \u00b7 %5")
                    .arg(QLocale().toString(t.gpuCount()))
                    .arg(QString::fromStdString(t.gpuSpec().id))
                    .arg(counted(s.domainCount(), tr("NVLink domain"), tr("NVLink domains")))
                    .arg(s.domainSize)
                    .arg(fabric));
}

void MainWindow::updateStepTime()
{
    if (!m_document)
        return;
    if (const engine::ServingEvaluation *s = m_document->servingEvaluation()) {
        if (!s->ok) {
            m_statusStep->setText(tr("TPOT \u2014"));
            m_statusStep->setToolTip(tr("The serving workload cannot be priced: %1")
                                             .arg(QString::fromStdString(s->error)));
            return;
        }
        m_statusStep->setText(
                tr("TTFT %1 \u00b7 TPOT %2").arg(formatSeconds(s->ttftS), formatSeconds(s->tpotS)));
        m_statusStep->setToolTip(tr("%1 output tokens/s per GPU, %2 tokens/s per user")
                                         .arg(QLocale().toString(s->outputTokensPerSPerGpu, 'f', 0))
                                         .arg(QLocale().toString(s->tokensPerSPerUser, 'f', 1)));
        return;
    }
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

void MainWindow::restoreSession()
{
    QSettings settings;
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    if (!m_docks->restore(settings))
        m_docks->applyDefaultSizes();
}

void MainWindow::saveSession() const
{
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    m_docks->save(settings);
}

void MainWindow::resizeEvent(QResizeEvent *event)
{
    QMainWindow::resizeEvent(event);
    m_docks->keepCanvasShareLater();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (maybeSave()) {
        m_autoSaver->discard();
        saveSession();
        event->accept();
    } else {
        event->ignore();
    }
}

} // namespace railyard
