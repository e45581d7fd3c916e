#pragma once

#include <QMainWindow>

#include <memory>

class QAction;
class QActionGroup;
class QComboBox;
class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QSlider;

namespace railyard {

class AutoSaver;
class ClusterPanel;
class ClusterScene;
class ClusterView;
class Document;
class GroupPalette;
class InspectorPanel;
class PricingPanel;
class WarningsPanel;
class WorkloadPanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    // `recoveryDirectory`: where autosaves go (tests pass a temporary folder).
    explicit MainWindow(QWidget *parent = nullptr, const QString &recoveryDirectory = {});
    ~MainWindow() override;

    // Takes over `document` and shows it.
    void setDocument(std::unique_ptr<Document> document);
    Document *document() const { return m_document.get(); }
    ClusterScene *scene() const { return m_scene; }
    ClusterView *view() const { return m_view; }
    ClusterPanel *clusterPanel() const { return m_clusterPanel; }
    InspectorPanel *inspector() const { return m_inspector; }
    WorkloadPanel *workloadPanel() const { return m_workload; }
    GroupPalette *palette() const { return m_palette; }
    PricingPanel *pricingPanel() const { return m_pricing; }
    WarningsPanel *warningsPanel() const { return m_warnings; }
    QComboBox *colourBox() const { return m_colourBox; }
    QAction *linkLoadAction() const { return m_linkLoadAction; }
    QAction *makeGroupAction() const { return m_makeGroupAction; }
    AutoSaver *autoSaver() const { return m_autoSaver; }
    QSlider *zoomSlider() const { return m_zoomSlider; }
    QLabel *stepTimeLabel() const { return m_statusStep; }
    QLabel *clusterLabel() const { return m_statusCluster; }

    // Opens a file; on failure shows the message (without blocking), keeps the current document
    // and returns false. lastError() holds the message.
    bool openFile(const QString &path);
    QString lastError() const { return m_lastError; }
    bool saveTo(const QString &path);
    // The built-in examples (File > Open Example), as resource paths.
    static QStringList exampleLayouts();
    static QStringList recentFiles();

    // Runs the search box's query: centres and selects the device, or says nothing matched.
    bool search(const QString &query);

    // Offers to restore what a crashed session left in the recovery folder (asks first unless
    // `ask` is false). Returns whether a recovery was opened.
    bool offerRecovery(bool ask = true);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createActions();
    void syncUndoActions();
    void updateTitle();
    void updateStatus();
    void updateStepTime();
    void applyViewSettings();
    void addRecentFile(const QString &path);
    void rebuildRecentMenu();
    void showError(const QString &title, const QString &message);
    bool maybeSave();
    bool save();
    bool saveAs();
    void open();
    void newCluster();
    void syncColourControls();
    void showMessage(const QString &text, bool refused);

    std::unique_ptr<Document> m_document;
    ClusterScene *m_scene = nullptr;
    ClusterView *m_view = nullptr;
    ClusterPanel *m_clusterPanel = nullptr;
    InspectorPanel *m_inspector = nullptr;
    WorkloadPanel *m_workload = nullptr;
    GroupPalette *m_palette = nullptr;
    PricingPanel *m_pricing = nullptr;
    WarningsPanel *m_warnings = nullptr;
    QDockWidget *m_warningsDock = nullptr;
    QComboBox *m_colourBox = nullptr;
    QAction *m_linkLoadAction = nullptr;
    QAction *m_makeGroupAction = nullptr;
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
    QString m_lastError;
    QString m_refusedMessage; // shown in red until another message replaces it
    bool m_actionsCreated = false;
};

} // namespace railyard
