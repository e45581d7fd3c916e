#pragma once

#include <QPointer>
#include <QWidget>

class QLabel;
class QPushButton;
class QLineEdit;
class QPlainTextEdit;

namespace railyard {

class ClusterForm;
class Document;

// The Cluster dock: the layout's title and notes and the cluster's settings, editable later
// with the same form as the New Cluster dialog. Every edit is an undo command; an edit the
// engine would refuse is shown with the engine's reason and not applied.
class ClusterPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ClusterPanel(QWidget *parent = nullptr);

    void setDocument(Document *document);
    ClusterForm *form() const { return m_form; }
    QString errorText() const;
    // Shown while the layout has an explicit server: drops it (one undo step) so every field
    // can be edited again.
    QPushButton *generatedServerButton() const { return m_generated; }

private:
    void syncFromDocument();
    void syncTitle();
    void clusterEdited(const QString &field);
    void useGeneratedServer();

    QPointer<Document> m_document;
    QLineEdit *m_title;
    QPlainTextEdit *m_notes;
    ClusterForm *m_form;
    QLabel *m_error;
    QLabel *m_explicit;
    QPushButton *m_generated;
};

} // namespace railyard
