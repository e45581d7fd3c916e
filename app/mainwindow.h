#pragma once

#include <QMainWindow>

#include <memory>

class QLabel;

namespace railyard {

class ClusterScene;
class ClusterView;
class Document;

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Takes over `document` and shows it.
    void setDocument(std::unique_ptr<Document> document);
    Document *document() const { return m_document.get(); }
    ClusterScene *scene() const { return m_scene; }
    ClusterView *view() const { return m_view; }

    // Opens a file; on failure shows the message and keeps the current document.
    bool openFile(const QString &path);
    // The built-in examples (File > Open Example), as resource paths.
    static QStringList exampleLayouts();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createActions();
    void updateTitle();
    void updateStatus();
    bool maybeSave();
    bool save();
    bool saveAs();
    void open();

    std::unique_ptr<Document> m_document;
    ClusterScene *m_scene = nullptr;
    ClusterView *m_view = nullptr;
    QLabel *m_statusCluster = nullptr;
};

} // namespace railyard
