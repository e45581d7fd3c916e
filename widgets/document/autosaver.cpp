#include "autosaver.h"

#include "document.h"
#include "safesave.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QUndoStack>

namespace railyard {

namespace {

constexpr auto kSuffix = ".recovery.railyard.json";

QString metaPathFor(const QString &file)
{
    QString meta = file;
    meta.chop(int(qstrlen(kSuffix)));
    return meta + QStringLiteral(".recovery.meta.json");
}

QString lockPathFor(const QString &file)
{
    QString lock = file;
    lock.chop(int(qstrlen(kSuffix)));
    return lock + QStringLiteral(".recovery.lock");
}

} // namespace

AutoSaver::AutoSaver(const QString &directory, QObject *parent)
    : QObject(parent)
    , m_directory(directory)
{
    QDir().mkpath(m_directory);
    // Unique among the windows of one process too (two can start in the same millisecond).
    static int windows = 0;
    const QString id = QStringLiteral("session-%1-%2-%3")
                               .arg(QCoreApplication::applicationPid())
                               .arg(QDateTime::currentMSecsSinceEpoch())
                               .arg(++windows);
    m_file = QDir(m_directory).filePath(id + QLatin1String(kSuffix));
    m_meta = metaPathFor(m_file);
    m_lock = std::make_unique<QLockFile>(lockPathFor(m_file));
    m_lock->setStaleLockTime(0); // only a dead owner makes a lock stale, never its age
    m_lock->tryLock(0);
    m_timer.setInterval(60 * 1000);
    connect(&m_timer, &QTimer::timeout, this, &AutoSaver::saveNow);
    m_timer.start();
}

AutoSaver::~AutoSaver()
{
    discard();
}

QString AutoSaver::defaultDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
           + QStringLiteral("/recovery");
}

void AutoSaver::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    discard();
    m_document = document;
    m_dirty = document && document->isModified();
    if (!document)
        return;
    connect(document, &Document::modifiedChanged, this, &AutoSaver::documentModified);
    // Any edit (including an undo back to a modified state) makes the recovery copy stale.
    connect(document->undoStack(), &QUndoStack::indexChanged, this, [this] {
        m_dirty = m_document && m_document->isModified();
    });
}

void AutoSaver::documentModified(bool modified)
{
    if (!modified)
        discard(); // saved, or undone back to the saved state
    m_dirty = modified;
}

bool AutoSaver::saveNow()
{
    if (!m_document || !m_dirty || !m_document->isModified())
        return false;
    // Atomic and checked: on a full disk the previous recovery copy stays whole (and this one
    // is tried again at the next interval).
    QString reason;
    if (!writeFileAtomically(m_file, m_document->toText(), &reason)) {
        m_lastError = m_file + tr(": cannot write the recovery copy: ") + reason;
        Q_EMIT saveFailed(m_lastError);
        return false;
    }
    QJsonObject meta;
    meta[QStringLiteral("original")] = m_document->filePath();
    meta[QStringLiteral("title")] = m_document->displayName();
    meta[QStringLiteral("original_fingerprint")] = m_document->diskFingerprint();
    meta[QStringLiteral("saved")] = QDateTime::currentDateTime().toString(Qt::ISODate);
    // The layout is safe without its note (the recovery still opens, untitled).
    writeFileAtomically(m_meta, QJsonDocument(meta).toJson(), &reason);
    m_lastError.clear();
    m_dirty = false;
    return true;
}

void AutoSaver::discard()
{
    QFile::remove(m_file);
    QFile::remove(m_meta);
    if (m_document)
        m_dirty = m_document->isModified();
}

QList<AutoSaver::Recovery> AutoSaver::orphans(const QString &directory)
{
    QList<Recovery> out;
    const QDir dir(directory);
    const QStringList files = dir.entryList({QStringLiteral("*") + QLatin1String(kSuffix)},
                                            QDir::Files,
                                            QDir::Time);
    for (const QString &name : files) {
        const QString path = dir.filePath(name);
        QLockFile lock(lockPathFor(path));
        lock.setStaleLockTime(0);
        if (!lock.tryLock(0))
            continue; // its Railyard is still running
        lock.unlock();
        Recovery r;
        r.file = path;
        r.saved = QFileInfo(path).lastModified();
        QFile metaFile(metaPathFor(path));
        if (metaFile.open(QIODevice::ReadOnly)) {
            const QJsonObject meta = QJsonDocument::fromJson(metaFile.readAll()).object();
            r.originalPath = meta.value(QStringLiteral("original")).toString();
            r.title = meta.value(QStringLiteral("title")).toString();
            r.originalFingerprint = meta.value(QStringLiteral("original_fingerprint")).toString();
        }
        out << r;
    }
    return out;
}

void AutoSaver::remove(const Recovery &recovery)
{
    QFile::remove(recovery.file);
    QFile::remove(metaPathFor(recovery.file));
    QFile::remove(lockPathFor(recovery.file));
}

} // namespace railyard
