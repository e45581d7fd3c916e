#pragma once

#include "layout/layout.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace railyard {

// The cluster's settings as a form: GPU, servers, GPUs per server, NVLink domain, NICs, fabric,
// SHARP and price. Used by the New Cluster dialog and the Cluster panel. It only edits values;
// whoever owns it decides what an edit does (a new document, or an undo command).
class ClusterForm : public QWidget
{
    Q_OBJECT

public:
    explicit ClusterForm(QWidget *parent = nullptr);

    void setCluster(const engine::ClusterConfig &cluster); // does not emit edited()
    engine::ClusterConfig cluster() const;

    // The usual shape for a GPU: 4 GPUs per tray in a 72-GPU NVLink domain for GB200/GB300,
    // 8-GPU HGX servers otherwise, and the catalog's price.
    static engine::ClusterConfig withGpu(const engine::ClusterConfig &cluster,
                                         const std::string &gpu);

Q_SIGNALS:
    // The user changed a field; `field` names it (the undo merge key).
    void edited(const QString &field);

private:
    void updateSummary();

    QComboBox *m_gpu;
    QSpinBox *m_nodes;
    QSpinBox *m_gpusPerNode;
    QSpinBox *m_nvlinkDomain;
    QDoubleSpinBox *m_nicsPerGpu;
    QComboBox *m_nicGbps;
    QComboBox *m_fabric;
    QDoubleSpinBox *m_oversubscription;
    QCheckBox *m_sharp;
    QDoubleSpinBox *m_price;
    QLabel *m_summary;
    engine::ClusterConfig m_base; // keeps what the form does not show (tuning, NIC model, ...)
    bool m_updating = false;
};

} // namespace railyard
