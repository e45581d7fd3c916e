// MainWindow and the disk: the open file changing under the window (another program, or a
// second window on the same file), and the recovery files crashed sessions left.
#include "mainwindow.h"

#include "document/autosaver.h"
#include "document/document.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace railyard {

namespace {

QString recoveryName(const RecoveryFile &r)
{
    if (!r.originalPath.isEmpty())
        return QFileInfo(r.originalPath).fileName();
    return r.title.isEmpty() ? MainWindow::tr("an unsaved layout") : r.title;
}

// The recovery dialog: one row for each file (its layout, where it was saved, when it was
// recovered) with a choice; Cancel keeps them all for the next start.
QList<RecoveryChoice> recoveryDialog(QWidget *parent, const QList<RecoveryFile> &found)
{
    QDialog dialog(parent);
    dialog.setWindowTitle(MainWindow::tr("Restore Unsaved Work"));
    auto *layout = new QVBoxLayout(&dialog);
    auto *intro = new QLabel(
            MainWindow::tr("Railyard did not close normally, and left unsaved work for %n "
                           "layout(s). Restore each (in a window of its own), keep it for "
                           "the next start, or discard it.",
                           nullptr,
                           int(found.size())),
            &dialog);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto *tree = new QTreeWidget(&dialog);
    tree->setRootIsDecorated(false);
    tree->setHeaderLabels({MainWindow::tr("Layout"),
                           MainWindow::tr("File"),
                           MainWindow::tr("Recovered"),
                           MainWindow::tr("Action")});
    QList<QComboBox *> boxes;
    for (const RecoveryFile &r : found) {
        auto *item = new QTreeWidgetItem(tree,
                                         {r.title.isEmpty() ? recoveryName(r) : r.title,
                                          r.originalPath.isEmpty() ? MainWindow::tr("never saved")
                                                                   : r.originalPath,
                                          QLocale().toString(r.saved, QLocale::ShortFormat)});
        item->setToolTip(1, r.file);
        auto *box = new QComboBox(tree);
        box->addItem(MainWindow::tr("Restore"), int(RecoveryChoice::Restore));
        box->addItem(MainWindow::tr("Keep for later"), int(RecoveryChoice::Keep));
        box->addItem(MainWindow::tr("Discard"), int(RecoveryChoice::Discard));
        tree->setItemWidget(item, 3, box);
        boxes << box;
    }
    tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(tree);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog.resize(760, 320);
    QList<RecoveryChoice> choices;
    if (dialog.exec() != QDialog::Accepted)
        return choices; // all kept
    for (const QComboBox *box : boxes)
        choices << RecoveryChoice(box->currentData().toInt());
    return choices;
}

} // namespace

void MainWindow::setFilePrompts(FilePrompts prompts)
{
    m_filePrompts = std::move(prompts);
}

void MainWindow::watchFile()
{
    if (!m_watcher) {
        m_watcher = new QFileSystemWatcher(this);
        connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &MainWindow::fileChangedOnDisk);
    }
    m_declinedVersion.clear();
    if (!m_watcher->files().isEmpty())
        m_watcher->removePaths(m_watcher->files());
    const QString path = m_document ? m_document->filePath() : QString();
    if (!path.isEmpty() && QFileInfo::exists(path))
        m_watcher->addPath(path);
}

void MainWindow::fileChangedOnDisk(const QString &path)
{
    if (!m_document || path != m_document->filePath())
        return;
    // Saving by renaming a new file over the old (as Railyard and most editors do) ends the
    // watch on the old file: watch the new one.
    if (!m_watcher->files().contains(path) && QFileInfo::exists(path))
        m_watcher->addPath(path);
    // One write is several events, and a program may write in pieces: wait for it to settle.
    if (m_diskCheckPending)
        return;
    m_diskCheckPending = true;
    QTimer::singleShot(300, this, [this] {
        m_diskCheckPending = false;
        checkFileOnDisk();
    });
}

void MainWindow::checkFileOnDisk()
{
    if (!m_document || m_askingAboutDisk || !m_document->changedOnDisk())
        return; // our own save, a touch, or already being asked
    const QString path = m_document->filePath();
    const QFileInfo info(path);
    const QString version
            = QStringLiteral("%1 %2").arg(info.size()).arg(info.lastModified().toMSecsSinceEpoch());
    if (version == m_declinedVersion)
        return; // asked about this version already
    m_askingAboutDisk = true;
    const bool modified = m_document->isModified();
    const bool reload = askReloadChanged(path, modified);
    m_askingAboutDisk = false;
    if (!reload) {
        m_declinedVersion = version;
        statusBar()
                ->showMessage(tr("%1 was changed on disk by another program; Save will ask before "
                                 "overwriting it")
                                      .arg(info.fileName()),
                              10000);
        return;
    }
    // The user chose to drop any changes; a file that no longer opens keeps them.
    QString error;
    auto doc = Document::load(path, &error);
    if (!doc) {
        showError(tr("Cannot reload"), error);
        return;
    }
    setDocument(std::move(doc));
    statusBar()->showMessage(tr("Reloaded %1").arg(info.fileName()), 6000);
}

bool MainWindow::askOverwriteChanged(const QString &path)
{
    if (m_filePrompts.overwriteChanged)
        return m_filePrompts.overwriteChanged(this, path);
    QMessageBox box(QMessageBox::Warning,
                    tr("File Changed on Disk"),
                    tr("%1 was changed on disk by another program since you opened it.")
                            .arg(QFileInfo(path).fileName()),
                    QMessageBox::Cancel,
                    this);
    box.setInformativeText(tr("Overwrite it with this window's layout, losing those changes? "
                              "Or cancel, and use Save As to keep both."));
    QPushButton *overwrite = box.addButton(tr("Overwrite"), QMessageBox::DestructiveRole);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    return box.clickedButton() == overwrite;
}

bool MainWindow::askReloadChanged(const QString &path, bool modified)
{
    if (m_filePrompts.reloadChanged)
        return m_filePrompts.reloadChanged(this, path, modified);
    QMessageBox box(QMessageBox::Question,
                    tr("File Changed on Disk"),
                    tr("%1 was changed on disk by another program.").arg(QFileInfo(path).fileName()),
                    QMessageBox::NoButton,
                    this);
    box.setInformativeText(modified ? tr("This window has unsaved changes. Reload the file and "
                                         "drop them, or keep them (Save will ask before "
                                         "overwriting the file)?")
                                    : tr("Reload it to see the new version?"));
    QPushButton *reload = box.addButton(modified ? tr("Reload and Drop My Changes") : tr("Reload"),
                                        modified ? QMessageBox::DestructiveRole
                                                 : QMessageBox::AcceptRole);
    QPushButton *keep = box.addButton(modified ? tr("Keep My Changes") : tr("Ignore"),
                                      QMessageBox::RejectRole);
    box.setDefaultButton(modified ? keep : reload);
    box.exec();
    return box.clickedButton() == reload;
}

QList<RecoveryChoice> MainWindow::askRecover(const QList<RecoveryFile> &found)
{
    if (m_filePrompts.recover)
        return m_filePrompts.recover(this, found);
    return recoveryDialog(this, found);
}

bool MainWindow::offerRecovery(bool ask)
{
    const QString directory = QFileInfo(m_autoSaver->recoveryFile()).absolutePath();
    const QList<RecoveryFile> found = AutoSaver::orphans(directory);
    if (found.isEmpty())
        return false;
    const QList<RecoveryChoice> choices = ask ? askRecover(found)
                                              : QList<RecoveryChoice>{RecoveryChoice::Restore};
    bool here = false;
    for (qsizetype i = 0; i < found.size(); ++i) {
        const RecoveryChoice choice = i < choices.size() ? choices[i] : RecoveryChoice::Keep;
        const RecoveryFile &r = found[i];
        if (choice == RecoveryChoice::Discard) {
            AutoSaver::remove(r);
        } else if (choice == RecoveryChoice::Restore && !here) {
            here = maybeSave() && restoreRecovery(r);
        } else if (choice == RecoveryChoice::Restore) {
            // This window holds one layout already: the next gets a window of its own.
            auto *w = new MainWindow(nullptr, directory);
            w->setAttribute(Qt::WA_DeleteOnClose);
            w->m_prompts = m_prompts;
            w->m_filePrompts = m_filePrompts;
            w->m_graphImportPrompt = m_graphImportPrompt;
            w->resize(size());
            if (w->restoreRecovery(r)) {
                w->show();
            } else {
                const QString error = w->lastError();
                delete w;
                showError(tr("Cannot restore"), error);
            }
        }
        // Keep: left where it is, offered again at the next start.
    }
    return here;
}

bool MainWindow::restoreRecovery(const RecoveryFile &recovery)
{
    QFile f(recovery.file);
    QString error;
    std::unique_ptr<Document> doc;
    if (f.open(QIODevice::ReadOnly))
        doc = Document::fromText(f.readAll(), recovery.file, &error);
    else
        error = recovery.file + tr(": cannot open: ") + f.errorString();
    if (!doc) {
        // Kept: the user may still want to rescue it by hand (or discard it next time).
        showError(tr("Cannot restore"), error);
        return false;
    }
    doc->setFilePath(recovery.originalPath);
    // What the crashed session had read: Save still asks if the file changed since.
    doc->setDiskFingerprint(recovery.originalFingerprint);
    doc->markModified();
    setDocument(std::move(doc));
    // The crashed session's file goes only once this session's own copy holds the work.
    if (m_autoSaver->saveNow())
        AutoSaver::remove(recovery);
    else
        statusBar()->showMessage(m_autoSaver->lastError(), 10000);
    return true;
}

} // namespace railyard
