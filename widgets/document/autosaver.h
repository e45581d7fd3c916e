#pragma once

#include <QDateTime>
#include <QList>
#include <QLockFile>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <memory>

namespace railyard {

class Document;

// What a crashed session left in the recovery folder.
struct RecoveryFile
{
    QString file;         // the recovered layout text
    QString originalPath; // where the document was saved, if anywhere
    QString title;
    QDateTime saved;
    QString originalFingerprint; // Document::diskFingerprint() of the original, if known
};

// Writes the open document to a recovery file while it has unsaved changes (every minute by
// default), and removes the file when the work is saved, discarded or the window closes. Each
// running Railyard holds a lock beside its file, so a file without a live owner is what a crash
// left behind: orphans() lists those for the next start to offer.
class AutoSaver : public QObject
{
    Q_OBJECT

public:
    using Recovery = RecoveryFile;

    explicit AutoSaver(const QString &directory = defaultDirectory(), QObject *parent = nullptr);
    ~AutoSaver() override;

    static QString defaultDirectory(); // AppDataLocation/recovery
    // Newest first.
    static QList<Recovery> orphans(const QString &directory = defaultDirectory());
    static void remove(const Recovery &recovery);

    void setDocument(Document *document);
    void setInterval(int ms) { m_timer.setInterval(ms); }
    int interval() const { return m_timer.interval(); }
    QString recoveryFile() const { return m_file; }

    // Writes the recovery file if the document has changes not yet written there. Returns
    // whether it wrote. A failed write (a full disk) leaves the previous recovery copy whole
    // and sets lastError(), naming the file and the reason.
    bool saveNow();
    QString lastError() const { return m_lastError; }

    // Removes this session's recovery file (the work was saved or knowingly dropped).
    void discard();

Q_SIGNALS:
    void saveFailed(const QString &message); // as lastError()

private:
    void documentModified(bool modified);

    QString m_directory;
    QString m_file;
    QString m_meta;
    std::unique_ptr<QLockFile> m_lock;
    QPointer<Document> m_document;
    QTimer m_timer;
    bool m_dirty = false; // changed since the last write
    QString m_lastError;
};

} // namespace railyard
