#pragma once

#include <QByteArray>
#include <QString>

class QSaveFile;

namespace railyard {

// Every file the program writes for the user (layouts, recovery copies, exports) goes through
// these, so that a full disk or a failing device can never replace a good file with an empty
// or truncated one. QSaveFile writes a temporary file beside the target and renames it over the
// target on commit(); but Qt 6.4's commit() flushes as it closes and renames even when that
// flush failed, and nobody checked write()'s result. Here every write, the flush and the sync
// to disk are checked; on any failure the temporary file is removed and the target is left as
// it was.

// Writes `bytes` to `path` atomically, through engine::writeOutputFile (the policy of
// engine/base/outputfile.h: only a regular file, whole or not at all). On failure returns
// false, leaves the file at `path` as it was and sets `reason` to why, in the system's words
// ("No space left on device").
bool writeFileAtomically(const QString &path, const QByteArray &bytes, QString *reason);

// Finishes a QSaveFile that something else filled (an SVG generator, a PDF writer, an image
// writer): checks that no write failed, flushes, syncs to disk and commits; or cancels the
// write. Returns false and sets `reason` as above on failure.
bool commitSaveFile(QSaveFile &file, QString *reason);
// Writes `bytes` (a document drawn in memory) and commits as commitSaveFile does; a short
// write cancels with the system's reason (a full disk: "No space left on device").
bool writeAndCommitSaveFile(QSaveFile &file, const QByteArray &bytes, QString *reason);

} // namespace railyard
