#include "newclusterdialog.h"

#include "clusterform.h"
#include "document/document.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace railyard {

NewClusterDialog::NewClusterDialog(const engine::Layout &base, QWidget *parent)
    : QDialog(parent)
    , m_base(base)
    , m_title(new QLineEdit(tr("New cluster"), this))
    , m_form(new ClusterForm(this))
    , m_error(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("New Cluster"));
    engine::ClusterConfig start = base.cluster;
    start.serversPerRack.reset();
    m_form->setCluster(start);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    auto *layout = new QVBoxLayout(this);
    auto *top = new QFormLayout;
    top->addRow(tr("Title"), m_title);
    layout->addLayout(top);
    layout->addWidget(m_form);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_form, &ClusterForm::edited, this, &NewClusterDialog::validate);
    validate();
}

engine::Layout NewClusterDialog::layout() const
{
    engine::Layout l;
    l.title = m_title->text().toStdString();
    l.cluster = m_form->cluster();
    l.model = m_base.model;
    l.training = m_base.training;
    l.parallel = engine::ParallelConfig{}; // DP fills the cluster
    return l;
}

QString NewClusterDialog::errorText() const
{
    return m_error->text();
}

void NewClusterDialog::validate()
{
    const QString problem = Document::checkLayout(layout());
    m_error->setText(problem);
    m_error->setVisible(!problem.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

} // namespace railyard
