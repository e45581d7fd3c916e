#pragma once

#include "layout/layout.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QTimer;

namespace railyard {

class ClusterForm;

// File > New Cluster: a title and the cluster's settings. The result is a new layout with the
// workload of `base` (model and training) at the parallel sizes the engine picks for the new
// cluster (engine::defaultPlan: TP inside the NVLink domain, then PP, within HBM; DP fills the
// rest), which the dialog states before the user accepts.
class NewClusterDialog : public QDialog
{
    Q_OBJECT

public:
    explicit NewClusterDialog(const engine::Layout &base, QWidget *parent = nullptr);

    ClusterForm *form() const { return m_form; }
    // The new layout (planning it now if the user has not paused since the last edit).
    engine::Layout layout();
    QString errorText() const;
    // What the job starts at on this cluster, or why it does not fit.
    QString planText();

private:
    void validate(); // the cluster, at once
    void plan();     // the workload's sizes on it, once the user pauses

    engine::Layout m_base;
    engine::Layout m_layout; // the cluster and the planned workload, without the title
    QLineEdit *m_title;
    ClusterForm *m_form;
    QLabel *m_plan;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
    QTimer *m_planTimer;
    bool m_planStale = false;
};

} // namespace railyard
