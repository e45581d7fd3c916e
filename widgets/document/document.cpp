#include "document.h"

#include "inputerror.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QUndoStack>

namespace railyard {

Document::Document(engine::Layout layout, QObject *parent)
    : QObject(parent)
    , m_layout(std::move(layout))
    , m_topology(std::make_unique<engine::Topology>(
              engine::buildTopology(m_layout.cluster, engine::Catalog::builtin())))
    , m_undoStack(new QUndoStack(this))
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this, [this](bool clean) {
        Q_EMIT modifiedChanged(!clean);
    });
}

Document::~Document() = default;

std::unique_ptr<Document> Document::fromText(const QByteArray &text,
                                             const QString &name,
                                             QString *error)
{
    try {
        engine::Layout layout = engine::parseLayout(text.toStdString(), name.toStdString());
        return std::make_unique<Document>(std::move(layout));
    } catch (const engine::InputError &e) {
        if (error)
            *error = QString::fromStdString(e.what());
    } catch (const std::bad_alloc &) {
        if (error)
            *error = name + QStringLiteral(": the layout is too large to open");
    }
    return nullptr;
}

std::unique_ptr<Document> Document::load(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = path + QStringLiteral(": cannot open: ") + file.errorString();
        return nullptr;
    }
    constexpr qint64 kMaxBytes = 256LL << 20;
    if (file.size() > kMaxBytes) {
        if (error)
            *error = path
                     + QStringLiteral(": the file is %1 MiB; a layout is at most 256 MiB")
                               .arg(file.size() >> 20);
        return nullptr;
    }
    auto doc = fromText(file.readAll(), path, error);
    if (doc)
        doc->setFilePath(QFileInfo(path).absoluteFilePath());
    return doc;
}

void Document::setFilePath(const QString &path)
{
    if (path == m_filePath)
        return;
    m_filePath = path;
    Q_EMIT filePathChanged();
}

QString Document::displayName() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).fileName();
    if (!m_layout.title.empty())
        return QString::fromStdString(m_layout.title);
    return tr("Untitled");
}

bool Document::isModified() const
{
    return !m_undoStack->isClean();
}

bool Document::save(const QString &path, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = path + QStringLiteral(": cannot write: ") + file.errorString();
        return false;
    }
    const std::string text = engine::layoutToText(m_layout);
    file.write(text.data(), static_cast<qint64>(text.size()));
    if (!file.commit()) {
        if (error)
            *error = path + QStringLiteral(": cannot write: ") + file.errorString();
        return false;
    }
    setFilePath(QFileInfo(path).absoluteFilePath());
    m_undoStack->setClean();
    return true;
}

} // namespace railyard
