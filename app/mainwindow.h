#pragma once

#include <QMainWindow>
#include <QPointer>

#include <functional>
#include <memory>

class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QFileSystemWatcher;
class QLabel;
class QLineEdit;
class QMenu;
class QPrinter;
class QSlider;

namespace railyard {

namespace engine {
struct ImportedMachine;
}

class AutoSaver;
struct RecoveryFile;
class ClusterPanel;
class ClusterScene;
class ClusterView;
class DockLayout;
class Document;
class FaultPanel;
class GroupPalette;
class GuidedTourPanel;
class PlannerPanel;
class LessonPanel;
class InspectorPanel;
class PricingPanel;
class TimelinePanel;
class ViewState;
class HottestLinksPanel;
class WarningsPanel;
class WorkloadPanel;

// Where File > Open and File > Save As get a path: the file dialogs, or a stand-in in tests.
// An empty string means the user cancelled.
struct PathPrompts
{
    std::function<QString(QWidget *parent)> open;
    std::function<QString(QWidget *parent, const QString &suggestedName)> save;
    std::function<QString(QWidget *parent)> importFrom; // File > Import...
};

// What to do with a recovery file a crashed session left: restore it (in this window, or a
// new one when this one already restored another), keep it to be offered at the next start,
// or discard it.
enum class RecoveryChoice { Restore, Keep, Discard };

// What the window asks about its file changing on disk and about crash recovery: message
// boxes and a dialog, or stand-ins in tests (mainwindowdisk.cpp).
struct FilePrompts
{
    // Save would overwrite `path`, which another program (or window) changed since this window
    // read or wrote it: true to overwrite it.
    std::function<bool(QWidget *parent, const QString &path)> overwriteChanged;
    // `path` changed on disk while it is open: true to reload it (which drops the unsaved
    // changes when `modified`).
    std::function<bool(QWidget *parent, const QString &path, bool modified)> reloadChanged;
    // The recovery files crashed sessions left, newest first: a choice for each (a missing
    // choice keeps the file).
    std::function<QList<RecoveryChoice>(QWidget *parent, const QList<RecoveryFile> &found)> recover;
};

// The main window: the cluster canvas in the middle, the workload, cluster and group docks on
// the left, pricing and warnings on the right (DockLayout), menus and toolbar
// (mainwindowactions.cpp), and the file operations (mainwindowfiles.cpp). It always shows a
// document: the built-in HGX server until something else is opened.
class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    // `recoveryDirectory`: where autosaves go (tests pass a temporary folder).
    explicit MainWindow(QWidget *parent = nullptr, const QString &recoveryDirectory = {});
    ~MainWindow() override;

    // Takes over `document` and shows it, fitted to the canvas.
    void setDocument(std::unique_ptr<Document> document);
    Document *document() const { return m_document.get(); }
    ClusterScene *scene() const { return m_scene; }
    ViewState *viewState() const { return m_viewState; }
    TimelinePanel *timeline() const { return m_timeline; }
    ClusterView *view() const { return m_view; }
    ClusterPanel *clusterPanel() const { return m_clusterPanel; }
    InspectorPanel *inspector() const { return m_inspector; }
    WorkloadPanel *workloadPanel() const { return m_workload; }
    GroupPalette *palette() const { return m_palette; }
    PricingPanel *pricingPanel() const { return m_pricing; }
    WarningsPanel *warningsPanel() const { return m_warnings; }
    HottestLinksPanel *hottestLinks() const { return m_hottest; }
    QDockWidget *hottestLinksDock() const { return m_hottestDock; }
    GuidedTourPanel *tourPanel() const { return m_tour; }
    QDockWidget *tourDock() const { return m_tourDock; }
    PlannerPanel *plannerPanel() const { return m_planner; }
    QDockWidget *plannerDock() const { return m_plannerDock; }
    LessonPanel *lessonPanel() const { return m_lesson; }
    QDockWidget *lessonDock() const { return m_lessonDock; }
    FaultPanel *faultPanel() const { return m_faults; }
    QDockWidget *faultDock() const { return m_faultDock; }
    DockLayout *dockLayout() const { return m_docks.get(); }
    QComboBox *colourBox() const { return m_colourBox; }
    QAction *linkLoadAction() const { return m_linkLoadAction; }
    QAction *makeGroupAction() const { return m_makeGroupAction; }
    AutoSaver *autoSaver() const { return m_autoSaver; }
    QSlider *zoomSlider() const { return m_zoomSlider; }
    QLabel *stepTimeLabel() const { return m_statusStep; }
    QLabel *clusterLabel() const { return m_statusCluster; }
    // The action with this object name ("actionOpen", "actionNewCluster", ...), or null.
    QAction *action(const QString &objectName) const;

    // Opens a file; on failure shows the message (without blocking), keeps the current document
    // and returns false. lastError() holds the message.
    bool openFile(const QString &path);
    // Imports a cluster's own file (nvidia-smi topo -m, NCCL topology or graph XML, an
    // nccl-tests log) as a new untitled document the user can price, edit and save; on failure
    // shows the message naming the file and line, keeps the current document and returns false.
    bool importFile(const QString &path);
    // mainwindowoverlay.cpp. Draws the NCCL graphs of a graph XML (NCCL_GRAPH_DUMP_FILE) over
    // the current cluster; on failure (not a graph, or a graph the cluster does not fit) shows
    // the message naming the file, the graph and the channel, and returns false.
    bool overlayGraphFile(const QString &path);
    // The built-in HGX H100 server, as the window starts.
    void openDefaultDocument();
    QString lastError() const { return m_lastError; }
    bool saveTo(const QString &path);
    void setPathPrompts(PathPrompts prompts);
    void setFilePrompts(FilePrompts prompts);
    // What File > Import asks of an NCCL graph XML, or a stand-in in tests: 1 to overlay it on
    // the current cluster, 2 to open a new layout for it, 0 to cancel.
    void setGraphImportPrompt(std::function<int(QWidget *parent, const QString &path)> prompt)
    {
        m_graphImportPrompt = std::move(prompt);
    }
    // The built-in examples (File > Open Example), as resource paths.
    static QStringList exampleLayouts();
    static QStringList recentFiles();

    // mainwindowexport.cpp. What File > Export writes (the format from the suffix; a .md,
    // .csv or .json file is the report): returns false and shows the message on failure, the
    // document untouched. `what` is an ExportDialog::What.
    bool exportTo(const QString &path, int what = 0, double scale = 1);
    // File > Export Review Report: the design review as a PDF or Markdown (from the suffix),
    // with the A/B comparison when A is pinned. Returns false and shows why on failure.
    bool exportReviewReport(const QString &path);
    // Where File > Export offers to write: beside the document, named after it.
    QString suggestedExportPath(const QString &suffix = QStringLiteral("svg")) const;
    // Prints the whole cluster with its legend and title on one page of `printer`.
    bool printTo(QPrinter *printer);

    // Runs the search box's query: centres and selects the device, or says nothing matched.
    bool search(const QString &query);

    // mainwindowdisk.cpp. Offers every recovery file crashed sessions left in the recovery
    // folder, newest first, with its layout, file and time; each is restored, kept for the next
    // start or discarded as the user says, none silently deleted. Without `ask`, restores the
    // newest and keeps the others. Returns whether a recovery was opened in this window.
    bool offerRecovery(bool ask = true);
    // Opens `recovery` in this window as unsaved work; its file is removed only once this
    // session's own recovery copy holds the work. Returns false and says why on failure.
    bool restoreRecovery(const RecoveryFile &recovery);

    // The window's size and docks from the last session (QSettings), when they are usable;
    // otherwise the default arrangement for the window's size. Saved on close.
    void restoreSession();
    void saveSession() const;

protected:
    void closeEvent(QCloseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    // mainwindowactions.cpp
    void createActions();
    void createToolBar();
    void syncUndoActions();
    void syncColourControls();
    void showShortcuts();
    void showQuickGuide();
    // mainwindowtour.cpp
    void createTourDock();
    // mainwindowplanner.cpp
    void createPlannerDock();
    // mainwindowfaults.cpp
    void createFaultDock();
    // mainwindowlesson.cpp
    void createLessonDock();
    void frameLesson();
    // mainwindowfiles.cpp
    void addRecentFile(const QString &path);
    void rebuildRecentMenu();
    void showError(const QString &title, const QString &message);
    bool maybeSave();
    bool save();
    bool saveAs();
    void open();
    void newCluster();
    // mainwindowdisk.cpp
    void watchFile();
    void fileChangedOnDisk(const QString &path);
    void checkFileOnDisk();
    bool askOverwriteChanged(const QString &path);
    bool askReloadChanged(const QString &path, bool modified);
    QList<RecoveryChoice> askRecover(const QList<RecoveryFile> &found);
    // mainwindowoverlay.cpp
    enum class GraphImport { Cancel = 0, Overlay = 1, NewLayout = 2 };
    void createOverlayControls();
    void connectOverlay();
    void syncOverlayControls();
    void overlayGraphDialog();
    bool overlayGraph(const engine::ImportedMachine &machine, const QString &path);
    GraphImport askGraphImport(const QString &path);
    // mainwindowexport.cpp
    void exportWithDialog();
    void exportReviewWithDialog();
    void print();
    void importDialog();
    // mainwindow.cpp
    void updateTitle();
    void updateStatus();
    void updateStepTime();
    void applyViewSettings();
    void showMessage(const QString &text, bool refused);

    std::unique_ptr<Document> m_document;
    ClusterScene *m_scene = nullptr;
    ViewState *m_viewState = nullptr;    // the document's view state (playback, hover)
    TimelinePanel *m_timeline = nullptr; // under the canvas
    ClusterView *m_view = nullptr;
    QWidget *m_canvas = nullptr; // the central widget: holds whichever view is current
    ClusterPanel *m_clusterPanel = nullptr;
    InspectorPanel *m_inspector = nullptr;
    WorkloadPanel *m_workload = nullptr;
    GroupPalette *m_palette = nullptr;
    PricingPanel *m_pricing = nullptr;
    WarningsPanel *m_warnings = nullptr;
    HottestLinksPanel *m_hottest = nullptr;
    QDockWidget *m_hottestDock = nullptr;
    GuidedTourPanel *m_tour = nullptr;
    QDockWidget *m_tourDock = nullptr;
    PlannerPanel *m_planner = nullptr;
    QDockWidget *m_plannerDock = nullptr;
    LessonPanel *m_lesson = nullptr;
    QDockWidget *m_lessonDock = nullptr;
    FaultPanel *m_faults = nullptr;
    QDockWidget *m_faultDock = nullptr;
    std::unique_ptr<DockLayout> m_docks;
    QComboBox *m_colourBox = nullptr;
    QAction *m_linkLoadAction = nullptr;
    QAction *m_makeGroupAction = nullptr;
    QAction *m_legendAction = nullptr;
    QAction *m_graphAction = nullptr; // View > NCCL Graph Overlay
    QComboBox *m_graphBox = nullptr;  // which graph of the file
    QComboBox *m_channelBox = nullptr;
    QAction *m_graphBoxAction = nullptr; // their places in the toolbar
    QAction *m_channelBoxAction = nullptr;
    QActionGroup *m_colourActions = nullptr;
    AutoSaver *m_autoSaver = nullptr;
    QLabel *m_statusCluster = nullptr;
    QLabel *m_statusStep = nullptr;
    QLabel *m_zoomLabel = nullptr;
    QSlider *m_zoomSlider = nullptr;
    QLineEdit *m_search = nullptr;
    QMenu *m_recentMenu = nullptr;
    QAction *m_undoAction = nullptr;
    QAction *m_redoAction = nullptr;
    QPointer<QWidget> m_shortcutsWindow;
    QPointer<QWidget> m_guideWindow;
    PathPrompts m_prompts;
    FilePrompts m_filePrompts;
    QFileSystemWatcher *m_watcher = nullptr; // the document's file
    bool m_diskCheckPending = false;         // a burst of change events is being waited out
    bool m_askingAboutDisk = false;          // a changed-on-disk question is open
    QString m_declinedVersion;               // the file's size and time when a reload was declined
    std::function<int(QWidget *parent, const QString &path)> m_graphImportPrompt;
    QString m_lastError;
    QString m_refusedMessage; // shown in red until another message replaces it
};

} // namespace railyard
