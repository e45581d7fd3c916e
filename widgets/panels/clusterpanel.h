#pragma once

#include <QPointer>
#include <QWidget>

class QGroupBox;
class QLabel;
class QPushButton;
class QLineEdit;
class QPlainTextEdit;

namespace railyard {

class CalibrationChart;
class ClusterForm;
class Document;

// The Cluster dock: the layout's title and notes and the cluster's settings, editable later
// with the same form as the New Cluster dialog. Every edit is an undo command; an edit the
// engine would refuse is shown with the engine's reason and not applied. A layout imported from
// an nccl-tests log also shows the log's bus bandwidth against the model's on this cluster.
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
    // The nccl-tests calibration of an imported log (hidden when the layout has none).
    CalibrationChart *calibrationChart() const { return m_calibration; }
    QString calibrationText() const;

private:
    void syncFromDocument();
    void syncTitle();
    void clusterEdited(const QString &field);
    void useGeneratedServer();
    void syncCalibration();

    QPointer<Document> m_document;
    QLineEdit *m_title;
    QPlainTextEdit *m_notes;
    ClusterForm *m_form;
    QLabel *m_error;
    QLabel *m_explicit;
    QPushButton *m_generated;
    QGroupBox *m_calibrationBox;
    CalibrationChart *m_calibration;
    QLabel *m_calibrationText;
};

} // namespace railyard
