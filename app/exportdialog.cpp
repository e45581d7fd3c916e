#include "exportdialog.h"

#include "export/diagramexport.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace railyard {

ExportDialog::ExportDialog(const QString &suggestedPath, QWidget *parent)
    : QDialog(parent)
    , m_path(new QLineEdit(suggestedPath, this))
    , m_what(new QComboBox(this))
    , m_scale(new QDoubleSpinBox(this))
    , m_note(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Export"));
    m_path->setObjectName(QStringLiteral("exportPath"));
    m_path->setMinimumWidth(420);
    auto *browse = new QPushButton(tr("Browse\u2026"), this);
    auto *pathRow = new QHBoxLayout;
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    m_what->setObjectName(QStringLiteral("exportWhat"));
    m_what->addItem(tr("The whole cluster, with legend and title"), int(What::WholeCluster));
    m_what->addItem(tr("The visible area, with legend and title"), int(What::VisibleArea));
    m_what->addItem(tr("The step-time chart"), int(What::StepChart));
    m_what->addItem(tr("The memory chart"), int(What::MemoryChart));
    m_scale->setObjectName(QStringLiteral("exportScale"));
    m_scale->setRange(0.25, 8);
    m_scale->setSingleStep(0.5);
    m_scale->setValue(2);
    m_scale->setSuffix(QStringLiteral(" \u00d7"));
    m_scale->setToolTip(tr("PNG only: 2 doubles the width and the height"));
    m_note->setWordWrap(true);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));

    auto *form = new QFormLayout(this);
    form->addRow(tr("File:"), pathRow);
    form->addRow(QString(),
                 new QLabel(tr("SVG, PNG or PDF for a picture; Markdown (.md), CSV "
                               "(per-link loads) or JSON (every number) for the "
                               "report."),
                            this));
    form->addRow(tr("Export:"), m_what);
    form->addRow(tr("PNG scale:"), m_scale);
    form->addRow(m_note);
    form->addRow(m_buttons);
    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_path, &QLineEdit::textChanged, this, &ExportDialog::sync);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    sync();
}

QString ExportDialog::path() const
{
    return m_path->text().trimmed();
}

ExportDialog::What ExportDialog::what() const
{
    return What(m_what->currentData().toInt());
}

double ExportDialog::scale() const
{
    return m_scale->value();
}

void ExportDialog::setPath(const QString &path)
{
    m_path->setText(path);
}

void ExportDialog::setWhat(What what)
{
    m_what->setCurrentIndex(m_what->findData(int(what)));
}

QString ExportDialog::problem() const
{
    if (path().isEmpty())
        return tr("Name the file to write.");
    if (!exportFormatForPath(path()))
        return tr("Give the file one of the suffixes .svg, .png, .pdf, .md, .csv or .json.");
    const QFileInfo dir(QFileInfo(path()).absolutePath());
    if (!dir.isDir() || !dir.isWritable())
        return tr("Cannot write in %1.").arg(dir.absoluteFilePath());
    return {};
}

void ExportDialog::browse()
{
    const QString filters = tr("SVG picture (*.svg);;PNG image (*.png);;PDF document (*.pdf);;"
                               "Markdown report (*.md);;CSV link loads (*.csv);;JSON numbers "
                               "(*.json)");
    QString selected;
    const auto format = exportFormatForPath(path());
    const QStringList list = filters.split(QStringLiteral(";;"));
    const QString suffix = QFileInfo(path()).suffix().toLower();
    for (const QString &f : list)
        if (format && f.contains(QStringLiteral("*.") + suffix + QLatin1Char(')')))
            selected = f;
    QString chosen = QFileDialog::getSaveFileName(this, tr("Export To"), path(), filters, &selected);
    if (chosen.isEmpty())
        return;
    // The filter names the format when the typed name has no suffix.
    if (QFileInfo(chosen).suffix().isEmpty()) {
        const int star = selected.indexOf(QStringLiteral("*."));
        if (star >= 0)
            chosen += selected.mid(star + 1, selected.indexOf(QLatin1Char(')')) - star - 1);
    }
    m_path->setText(chosen);
}

void ExportDialog::sync()
{
    const auto format = exportFormatForPath(path());
    const bool report = format && !isDiagramFormat(*format);
    m_what->setEnabled(!report);
    m_scale->setEnabled(format == ExportFormat::Png);
    const QString why = problem();
    m_note->setText(why.isEmpty() && report ? tr("The report of the priced step.") : why);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

} // namespace railyard
