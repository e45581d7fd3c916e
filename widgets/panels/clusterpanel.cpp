#include "clusterpanel.h"

#include "base/showntext.h"
#include "base/units.h"
#include "charts/calibrationchart.h"
#include "clusterform.h"
#include "commands/changecluster.h"
#include "commands/changenotes.h"
#include "commands/changetitle.h"
#include "document/document.h"
#include "import/calibration.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <QLocale>

#include <cmath>

namespace railyard {

ClusterPanel::ClusterPanel(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLineEdit(this))
    , m_notes(new QPlainTextEdit(this))
    , m_form(new ClusterForm(this))
    , m_error(new QLabel(this))
    , m_explicit(new QLabel(this))
    , m_generated(new QPushButton(tr("Use the Generated Server Instead"), this))
    , m_calibrationBox(new QGroupBox(tr("Measured against the model"), this))
    , m_calibration(new CalibrationChart(m_calibrationBox))
    , m_calibrationText(new QLabel(m_calibrationBox))
{
    m_explicit->setWordWrap(true);
    m_explicit->hide();
    m_generated->setObjectName(QStringLiteral("useGeneratedServer"));
    m_generated->setToolTip(tr("Replace the server written out in this layout by the generated "
                               "one for its GPU (undoable), so every field can be edited"));
    m_generated->hide();
    connect(m_generated, &QPushButton::clicked, this, &ClusterPanel::useGeneratedServer);
    m_title->setObjectName(QStringLiteral("clusterTitle"));
    m_notes->setObjectName(QStringLiteral("clusterNotes"));
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
    layout->addWidget(m_explicit);
    layout->addWidget(m_generated);
    layout->addWidget(m_error);
    m_calibrationText->setWordWrap(true);
    m_calibrationText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *calibration = new QVBoxLayout(m_calibrationBox);
    calibration->addWidget(m_calibration);
    calibration->addWidget(m_calibrationText);
    m_calibrationBox->hide();
    layout->addWidget(m_calibrationBox);
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
    const engine::ClusterConfig &c = m_document->layout().cluster;
    m_form->setCluster(c);
    if (c.server) {
        const engine::ServerTemplate &s = *c.server;
        m_explicit->setText(
                tr("Each server is written out device by device: %1 GPUs, %2 NICs, %3 PCIe "
                   "switches, %4 CPUs, %5 NVSwitches. GPUs per server, NICs and the NVLink "
                   "domain follow from it.")
                        .arg(s.count(engine::ServerDeviceKind::Gpu))
                        .arg(s.count(engine::ServerDeviceKind::Nic))
                        .arg(s.count(engine::ServerDeviceKind::PcieSwitch))
                        .arg(s.count(engine::ServerDeviceKind::Cpu))
                        .arg(s.count(engine::ServerDeviceKind::NvSwitch)));
    }
    m_explicit->setVisible(c.server.has_value());
    m_generated->setVisible(c.server.has_value());
    syncCalibration();
}

void ClusterPanel::useGeneratedServer()
{
    if (!m_document || !m_document->layout().cluster.server)
        return;
    engine::ClusterConfig cluster = m_document->layout().cluster;
    cluster.server.reset();
    const QString problem = Document::checkLayout(
            ChangeCluster::apply(m_document->layout(), cluster));
    if (!problem.isEmpty()) {
        m_error->setText(problem);
        m_error->show();
        return;
    }
    m_error->hide();
    m_document->undoStack()->push(
            new ChangeCluster(m_document, cluster, tr("Use the Generated Server")));
}

QString ClusterPanel::calibrationText() const
{
    return m_calibrationBox->isHidden() ? QString() : m_calibrationText->text();
}

void ClusterPanel::syncCalibration()
{
    // The engine prices the log's sizes again on the cluster as it is now: an edit (another
    // NIC, another efficiency) moves the dashed line away from the measured one.
    const auto cal = engine::calibrationOf(m_document->layout(), m_document->topology());
    m_calibrationBox->setVisible(cal.has_value());
    if (!cal)
        return;
    m_calibration->setCalibration(*cal);
    const auto gb = [](double v) { return QString::fromStdString(engine::formatNumber(v)); };
    QString text = tr("%1 from %2, every GPU. At %3 the log measured %4 GB/s bus bandwidth; "
                      "the model gave %5 GB/s at line rate and was calibrated with "
                      "tuning.efficiency %6.")
                           .arg(QString::fromStdString(cal->test),
                                QString::fromStdString(cal->file),
                                QString::fromStdString(engine::formatBytes(cal->sizeBytes)),
                                gb(cal->measuredGBps),
                                gb(cal->modelledBeforeGBps),
                                gb(cal->efficiency));
    if (const engine::CalibrationPoint *p = cal->worstFrom1MiB()) {
        const double gap = p->modelledGBps / p->measuredGBps - 1;
        if (std::abs(gap) < 0.05)
            text += tr(" From 1 MiB up the model is within 5% of the log at every size.");
        else
            text += tr(" From 1 MiB up the model is furthest from the log at %1: %2 GB/s "
                       "against %3 GB/s measured (%4%5%). %6")
                            .arg(QString::fromStdString(engine::formatBytes(p->sizeBytes)),
                                 gb(p->modelledGBps),
                                 gb(p->measuredGBps),
                                 gap > 0 ? QStringLiteral("+") : QString(),
                                 QString::number(std::lround(gap * 100)),
                                 gap > 0 ? tr("The model is unsure there: it assumes less latency "
                                              "per step than this fabric shows.")
                                         : tr("The model is unsure there."));
    }
    m_calibrationText->setText(text);
}

void ClusterPanel::syncTitle()
{
    // A title or notes too long to edit (a hostile file's megabytes) are shown cut, read-only:
    // the layout keeps them whole.
    const std::string &fullTitle = m_document->layout().title;
    const bool titleFits = fullTitle.size() <= engine::kEditableTitleBytes;
    const QString title = QString::fromStdString(titleFits ? fullTitle
                                                           : engine::shownTitle(fullTitle));
    m_title->setReadOnly(!titleFits);
    m_title->setToolTip(titleFits ? QString()
                                  : tr("This title is %1 bytes long: too long to edit here")
                                            .arg(QLocale().toString(qulonglong(fullTitle.size()))));
    if (m_title->text() != title)
        m_title->setText(title);
    const std::string &fullNotes = m_document->layout().notes;
    const bool notesFit = fullNotes.size() <= engine::kEditableNotesBytes;
    const QString notes = QString::fromStdString(notesFit ? fullNotes
                                                          : engine::shownNotes(fullNotes));
    m_notes->setReadOnly(!notesFit);
    m_notes->setToolTip(notesFit ? QString()
                                 : tr("These notes are %1 bytes long: too long to edit here")
                                           .arg(QLocale().toString(qulonglong(fullNotes.size()))));
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
