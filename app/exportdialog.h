#pragma once

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;

namespace railyard {

// File > Export: where to (the format follows the file's suffix), what (the whole cluster, the
// visible part, a Pricing chart; a .md, .csv or .json file is the report) and, for PNG, the
// scale. It only asks; the window writes the file.
class ExportDialog : public QDialog
{
    Q_OBJECT

public:
    enum class What { WholeCluster, VisibleArea, StepChart, MemoryChart };

    // `suggestedPath`: the file to offer (next to the document, named after it).
    ExportDialog(const QString &suggestedPath, QWidget *parent = nullptr);

    QString path() const;
    What what() const;
    double scale() const;
    void setPath(const QString &path);
    void setWhat(What what);
    // Why the choice cannot be exported (shown under the fields), or empty.
    QString problem() const;

private:
    void browse();
    void sync();

    QLineEdit *m_path;
    QComboBox *m_what;
    QDoubleSpinBox *m_scale;
    QLabel *m_note;
    QDialogButtonBox *m_buttons;
};

} // namespace railyard
