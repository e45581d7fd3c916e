#pragma once

#include "layout.h"
#include "topology.h"

#include <QObject>
#include <QString>

#include <memory>

class QUndoStack;

namespace railyard {

// The open layout: the only owner of state. Views and panels read it and re-sync from its change
// signals; every edit goes through an undo command on its stack.
class Document : public QObject
{
    Q_OBJECT

public:
    explicit Document(engine::Layout layout, QObject *parent = nullptr);
    ~Document() override;

    // Reads a layout file. On failure returns nullptr and sets `error` to a message that names
    // the file, the place and what was expected.
    static std::unique_ptr<Document> load(const QString &path, QString *error);
    // Parses layout text (e.g. a built-in example); `name` is used in errors.
    static std::unique_ptr<Document> fromText(const QByteArray &text,
                                              const QString &name,
                                              QString *error);

    const engine::Layout &layout() const { return m_layout; }
    const engine::Topology &topology() const { return *m_topology; }
    QUndoStack *undoStack() const { return m_undoStack; }

    QString filePath() const { return m_filePath; }
    void setFilePath(const QString &path);
    QString displayName() const;
    bool isModified() const;

    // Writes atomically (QSaveFile). Returns false and sets `error` on failure.
    bool save(const QString &path, QString *error);

Q_SIGNALS:
    void clusterChanged(); // the cluster (and so the topology) changed
    void filePathChanged();
    void modifiedChanged(bool modified);

private:
    engine::Layout m_layout;
    std::unique_ptr<engine::Topology> m_topology;
    QUndoStack *m_undoStack;
    QString m_filePath;
};

} // namespace railyard
