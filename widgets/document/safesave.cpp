#include "safesave.h"

#include "base/inputerror.h"
#include "base/outputfile.h"

#include <QCoreApplication>
#include <QFile>
#include <QSaveFile>

#include <cerrno>
#include <cstring>
#include <ostream>
#include <string>

#ifdef Q_OS_UNIX
#include <unistd.h>
#endif

namespace railyard {

namespace {

// The system's reason when `err` names one (a short write leaves Qt's own text empty or
// "Unknown error"), else what the file says.
QString reasonFor(int err, const QSaveFile &file)
{
    if (err != 0)
        return QString::fromLocal8Bit(std::strerror(err));
    const QString text = file.errorString();
    if (!text.isEmpty() && text != QLatin1String("Unknown error"))
        return text;
    return QCoreApplication::translate("SafeSave", "not all of the data could be written");
}

bool cancel(QSaveFile &file, int err, QString *reason)
{
    if (reason)
        *reason = reasonFor(err, file);
    file.cancelWriting();
    // commit() after cancelWriting() removes the temporary file now (freeing its space)
    // and never touches the target.
    file.commit();
    return false;
}

} // namespace

bool commitSaveFile(QSaveFile &file, QString *reason)
{
    if (!file.isOpen()) {
        if (reason)
            *reason = reasonFor(0, file);
        return false;
    }
    // A write that failed earlier (a painter's device does not look at write()'s result).
    if (file.error() != QFileDevice::NoError)
        return cancel(file, 0, reason);
    errno = 0;
    if (!file.flush())
        return cancel(file, errno, reason);
#ifdef Q_OS_UNIX
    // Some file systems only report a full disk (or a failing device) when the data reaches
    // it; QSaveFile's own sync ignores the result.
    if (const int fd = file.handle(); fd >= 0) {
        errno = 0;
        if (::fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP)
            return cancel(file, errno, reason);
    }
#endif
    if (!file.commit()) {
        if (reason)
            *reason = reasonFor(0, file);
        return false;
    }
    return true;
}

bool writeAndCommitSaveFile(QSaveFile &file, const QByteArray &bytes, QString *reason)
{
    errno = 0;
    if (file.write(bytes) != bytes.size())
        return cancel(file, errno, reason);
    return commitSaveFile(file, reason);
}

bool writeFileAtomically(const QString &path, const QByteArray &bytes, QString *reason)
{
    // The engine's one writer (engine/base/outputfile.h): a temporary file beside the target,
    // every write, the sync and the rename checked, nothing left behind on failure.
    try {
        engine::writeOutputFile(QFile::encodeName(path).toStdString(), [&](std::ostream &out) {
            out.write(bytes.constData(), static_cast<std::streamsize>(bytes.size()));
        });
        return true;
    } catch (const engine::InputError &e) {
        // The callers name the file and say it could not be written: the reason alone.
        std::string why = e.message();
        for (const std::string prefix : {"cannot write: ", "refusing to write: "})
            if (why.rfind(prefix, 0) == 0) {
                why.erase(0, prefix.size());
                break;
            }
        if (reason)
            *reason = QString::fromStdString(why);
        return false;
    }
}

} // namespace railyard
