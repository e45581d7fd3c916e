#include "clusterpanel.h"

#include "clusterform.h"
#include "commands/changecluster.h"
#include "commands/changenotes.h"
#include "commands/changetitle.h"
#include "document/document.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QUndoStack>
#include <QVBoxLayout>

namespace railyard {

ClusterPanel::ClusterPanel(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLineEdit(this))
    , m_notes(new QPlainTextEdit(this))
    , m_form(new ClusterForm(this))
    , m_error(new QLabel(this))
{
    m_notes->setMaximumHeight(90);
    m_notes->setPlaceholderText(tr("What this layout is for"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    auto *layout = new QVBoxLayout(this);
    auto *top = new QFormLayout;
    top->addRow(tr("Title"), m_title);
    top->addRow(tr("Notes"), m_notes);
    layout->addLayout(top);
    layout->addWidget(m_form);
    layout->addWidget(m_error);
    layout->addStretch(1);

    connect(m_title, &QLineEdit::textEdited, this, [this](const QString &text) {
        if (m_document)
            m_document->undoStack()->push(new ChangeTitle(m_document, text));
    });
    connect(m_notes, &QPlainTextEdit::textChanged, this, [this] {
        if (!m_document)
            return;
        const QString text = m_notes->toPlainText();
        if (text.toStdString() != m_document->layout().notes)
            m_document->undoStack()->push(new ChangeNotes(m_document, text));
    });
    connect(m_form, &ClusterForm::edited, this, &ClusterPanel::clusterEdited);
    setEnabled(false);
}

void ClusterPanel::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    setEnabled(document != nullptr);
    if (!document)
        return;
    connect(document, &Document::clusterChanged, this, &ClusterPanel::syncFromDocument);
    connect(document, &Document::titleChanged, this, &ClusterPanel::syncTitle);
    syncTitle();
    syncFromDocument();
}

QString ClusterPanel::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

void ClusterPanel::syncFromDocument()
{
    m_form->setCluster(m_document->layout().cluster);
}

void ClusterPanel::syncTitle()
{
    const QString title = QString::fromStdString(m_document->layout().title);
    if (m_title->text() != title)
        m_title->setText(title);
    const QString notes = QString::fromStdString(m_document->layout().notes);
    if (m_notes->toPlainText() != notes) {
        const QSignalBlocker block(m_notes);
        m_notes->setPlainText(notes);
    }
}

void ClusterPanel::clusterEdited(const QString &field)
{
    if (!m_document)
        return;
    const engine::ClusterConfig cluster = m_form->cluster();
    const QString problem = Document::checkLayout(
            ChangeCluster::apply(m_document->layout(), cluster));
    if (!problem.isEmpty()) {
        m_error->setText(problem);
        m_error->show();
        syncFromDocument(); // the form shows what the document holds
        return;
    }
    m_error->hide();
    m_document->undoStack()->push(
            new ChangeCluster(m_document, cluster, tr("Change %1").arg(field), field));
}

} // namespace railyard
