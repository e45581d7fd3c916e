#pragma once

#include "layout.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace railyard {

class ClusterForm;

// File > New Cluster: a title and the cluster's settings. The result is a new layout with the
// workload of `base` (model and training) and parallel sizes that fill the new cluster with
// data parallelism.
class NewClusterDialog : public QDialog
{
    Q_OBJECT

public:
    explicit NewClusterDialog(const engine::Layout &base, QWidget *parent = nullptr);

    ClusterForm *form() const { return m_form; }
    engine::Layout layout() const;
    QString errorText() const;

private:
    void validate();

    engine::Layout m_base;
    QLineEdit *m_title;
    ClusterForm *m_form;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
};

} // namespace railyard
