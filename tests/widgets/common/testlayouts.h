#pragma once

#include "document/document.h"

#include <QString>

#include <memory>

namespace railyard::test {

// A shipped layout (layouts/NAME), opened as the app opens files; null (with a warning) if it
// does not load.
inline std::unique_ptr<Document> openLayout(const char *name)
{
    QString error;
    auto doc = Document::load(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name),
                              &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

} // namespace railyard::test
