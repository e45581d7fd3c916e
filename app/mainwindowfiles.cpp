// MainWindow's file operations: open, examples, new cluster, save, recent files (the disk
// changing under the window and crash recovery are in mainwindowdisk.cpp).
#include "mainwindow.h"

#include "base/inputerror.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "import/importer.h"
#include "panels/newclusterdialog.h"
#include "scene/clusterscene.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

namespace railyard {

namespace {

constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentFiles");
const QString kDefaultLayout = QStringLiteral(":/layouts/hgx-h100-server.railyard.json");

} // namespace

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

void MainWindow::setPathPrompts(PathPrompts prompts)
{
    m_prompts = std::move(prompts);
}

void MainWindow::showError(const QString &title, const QString &message)
{
    m_lastError = message;
    statusBar()->showMessage(message, 10000);
    // The engine's message starts with the file; the box names the file in its first line and
    // says where and what is wrong under it, nothing else.
    QString text = message;
    QString detail;
    if (const int at = message.indexOf(QStringLiteral(": ")); at > 0) {
        const QString file = message.left(at);
        if (file.contains(QLatin1Char('/')) || file.endsWith(QStringLiteral(".json"))) {
            text = QStringLiteral("%1 \u201c%2\u201d").arg(title, QFileInfo(file).fileName());
            detail = message.mid(at + 2);
        }
    }
    // Window-modal and non-blocking: the message never stalls the caller (or a test).
    auto *box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setInformativeText(detail);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    box->open();
}

void MainWindow::openDefaultDocument()
{
    QFile f(kDefaultLayout);
    QString error;
    std::unique_ptr<Document> doc;
    if (f.open(QIODevice::ReadOnly))
        doc = Document::fromText(f.readAll(), QStringLiteral("hgx-h100-server"), &error);
    if (!doc) // the built-in layout is compiled in and tested; an empty cluster as a last resort
        doc = std::make_unique<Document>(engine::Layout{});
    setDocument(std::move(doc));
}

bool MainWindow::openFile(const QString &path)
{
    if (!maybeSave())
        return false;
    QString error;
    auto doc = Document::load(path, &error);
    if (!doc) {
        showError(tr("Cannot open"), error);
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
    const QString path = m_prompts.open
                                 ? m_prompts.open(this)
                                 : QFileDialog::getOpenFileName(this,
                                                                tr("Open Layout"),
                                                                QString(),
                                                                tr("Railyard layouts "
                                                                   "(*.railyard.json *.json)"));
    if (!path.isEmpty())
        openFile(path);
}

bool MainWindow::importFile(const QString &path)
{
    QString error;
    std::unique_ptr<Document> doc;
    try {
        const engine::ImportedMachine machine = engine::importFile(path.toStdString());
        // An NCCL graph describes rings and trees, not a machine: it can go over this cluster.
        if (!machine.graphs.empty()) {
            const GraphImport choice = askGraphImport(path);
            if (choice == GraphImport::Overlay)
                return overlayGraph(machine, path);
            if (choice == GraphImport::Cancel)
                return false;
        }
        if (!maybeSave())
            return false;
        doc = Document::create(engine::layoutFromImport(machine, engine::Catalog::builtin()),
                               &error);
    } catch (const engine::InputError &e) {
        error = QString::fromStdString(e.what());
    } catch (const std::bad_alloc &) {
        error = path + tr(": out of memory while importing");
    }
    if (!doc) {
        showError(tr("Cannot import"), error);
        return false;
    }
    m_lastError.clear();
    setDocument(std::move(doc));
    statusBar()->showMessage(tr("Imported %1 as a new layout: see its notes for what the "
                                "layout could not carry")
                                     .arg(QFileInfo(path).fileName()),
                             10000);
    return true;
}

void MainWindow::importDialog()
{
    const QString path
            = m_prompts.importFrom
                      ? m_prompts.importFrom(this)
                      : QFileDialog::getOpenFileName(
                              this,
                              tr("Import"),
                              QString(),
                              tr("Cluster files (*.txt *.log *.xml);;nvidia-smi topo -m (*.txt);;"
                                 "NCCL topology or graph XML (*.xml);;nccl-tests logs (*.txt "
                                 "*.log);;All files (*)"));
    if (!path.isEmpty())
        importFile(path);
}

void MainWindow::newCluster()
{
    // Unsaved work first: the user decides about it before spending effort on the new cluster.
    if (!maybeSave())
        return;
    NewClusterDialog dialog(m_document->layout(), this);
    if (dialog.exec() != QDialog::Accepted)
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
    m_viewState->writeDocumentView();
    // Another program (or another window) saved over the file since this window read it:
    // overwriting would silently drop that work.
    if (QFileInfo(path).absoluteFilePath() == m_document->filePath() && m_document->changedOnDisk()
        && !askOverwriteChanged(path)) {
        statusBar()->showMessage(tr("Not saved: %1 was changed on disk").arg(path), 8000);
        return false;
    }
    QString error;
    if (!m_document->save(path, &error)) {
        showError(tr("Cannot save"), error);
        return false;
    }
    addRecentFile(m_document->filePath());
    watchFile(); // the file saved is a new one (renamed over the old)
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
    QString path = m_prompts.save ? m_prompts.save(this, m_document->displayName())
                                  : QFileDialog::getSaveFileName(this,
                                                                 tr("Save Layout As"),
                                                                 m_document->displayName(),
                                                                 tr("Railyard layouts "
                                                                    "(*.railyard.json)"));
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

} // namespace railyard
