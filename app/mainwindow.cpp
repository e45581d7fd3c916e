#include "mainwindow.h"

#include "document/document.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <railyard/version.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QUndoStack>

namespace railyard {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setWindowIcon(QIcon(QStringLiteral(":/icons/io.github.railyard.Railyard.svg")));
    m_statusCluster = new QLabel(this);
    statusBar()->addPermanentWidget(m_statusCluster);
    resize(1400, 900);
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

void MainWindow::setDocument(std::unique_ptr<Document> document)
{
    const bool first = !m_document;
    ClusterView *oldView = m_view;
    ClusterScene *oldScene = m_scene;
    m_document = std::move(document);
    m_scene = new ClusterScene(m_document.get(), this);
    m_view = new ClusterView(m_scene, this);
    setCentralWidget(m_view);
    delete oldView;
    delete oldScene;
    connect(m_document.get(), &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_document.get(), &Document::filePathChanged, this, &MainWindow::updateTitle);
    connect(m_document.get(), &Document::clusterChanged, this, &MainWindow::updateStatus);
    if (first)
        createActions();
    updateTitle();
    updateStatus();
    m_view->fitToCluster();
}

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *openAct = file->addAction(tr("&Open\u2026"), this, &MainWindow::open);
    openAct->setShortcut(QKeySequence::Open);
    QMenu *examples = file->addMenu(tr("Open &Example"));
    for (const QString &path : exampleLayouts()) {
        QString name = QFileInfo(path).fileName();
        name.chop(QStringLiteral(".railyard.json").size());
        examples->addAction(name, this, [this, path] { openFile(path); });
    }
    file->addSeparator();
    QAction *saveAct = file->addAction(tr("&Save"), this, &MainWindow::save);
    saveAct->setShortcut(QKeySequence::Save);
    QAction *saveAsAct = file->addAction(tr("Save &As\u2026"), this, &MainWindow::saveAs);
    saveAsAct->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

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

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Railyard"), this, [this] {
        QMessageBox::about(this,
                           tr("About Railyard"),
                           tr("<b>Railyard %1</b><p>Where a distributed training job's traffic "
                              "goes on a GPU cluster, and what it costs.</p><p>Apache-2.0</p>")
                                   .arg(QStringLiteral(RAILYARD_VERSION)));
    });
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
                                     .arg(t.gpuCount())
                                     .arg(QString::fromStdString(t.gpuSpec().id))
                                     .arg(s.domainCount())
                                     .arg(s.domainSize)
                                     .arg(fabric));
}

bool MainWindow::openFile(const QString &path)
{
    if (!maybeSave())
        return false;
    QString error;
    auto doc = Document::load(path, &error);
    if (!doc) {
        QMessageBox::warning(this, tr("Cannot open layout"), error);
        statusBar()->showMessage(error, 10000);
        return false;
    }
    if (path.startsWith(QLatin1Char(':')))
        doc->setFilePath(QString()); // an example: Save asks where to put it
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

bool MainWindow::save()
{
    if (m_document->filePath().isEmpty())
        return saveAs();
    QString error;
    if (!m_document->save(m_document->filePath(), &error)) {
        QMessageBox::warning(this, tr("Cannot save"), error);
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(m_document->filePath()), 4000);
    return true;
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
    QString error;
    if (!m_document->save(path, &error)) {
        QMessageBox::warning(this, tr("Cannot save"), error);
        return false;
    }
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
    if (maybeSave())
        event->accept();
    else
        event->ignore();
}

} // namespace railyard
