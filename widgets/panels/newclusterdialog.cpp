#include "newclusterdialog.h"

#include "clusterform.h"
#include "document/document.h"
#include "planner/defaultplan.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

namespace railyard {

NewClusterDialog::NewClusterDialog(const engine::Layout &base, QWidget *parent)
    : QDialog(parent)
    , m_base(base)
    , m_title(new QLineEdit(tr("New cluster"), this))
    , m_form(new ClusterForm(this))
    , m_plan(new QLabel(this))
    , m_error(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
    , m_planTimer(new QTimer(this))
{
    m_planTimer->setSingleShot(true);
    m_planTimer->setInterval(150);
    connect(m_planTimer, &QTimer::timeout, this, &NewClusterDialog::plan);
    setWindowTitle(tr("New Cluster"));
    engine::ClusterConfig start = base.cluster;
    start.serversPerRack.reset();
    start.server.reset(); // a new cluster is generated, even from an imported machine's shape
    m_form->setCluster(start);
    m_plan->setWordWrap(true);
    m_plan->setObjectName(QStringLiteral("plan"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    auto *layout = new QVBoxLayout(this);
    auto *top = new QFormLayout;
    top->addRow(tr("Title"), m_title);
    layout->addLayout(top);
    layout->addWidget(m_form);
    layout->addWidget(m_plan);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_form, &ClusterForm::edited, this, &NewClusterDialog::validate);
    validate();
    if (m_planStale)
        plan();
}

engine::Layout NewClusterDialog::layout()
{
    if (m_planStale)
        plan();
    engine::Layout l = m_layout;
    l.title = m_title->text().toStdString();
    return l;
}

QString NewClusterDialog::errorText() const
{
    return m_error->text();
}

QString NewClusterDialog::planText()
{
    if (m_planStale)
        plan();
    return m_plan->text();
}

void NewClusterDialog::validate()
{
    engine::Layout l;
    l.cluster = m_form->cluster();
    l.model = m_base.model;
    l.training = m_base.training;
    l.parallel = engine::ParallelConfig{}; // DP fills the cluster until the plan says more
    const QString problem = Document::checkLayout(l);
    m_error->setText(problem);
    m_error->setVisible(!problem.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
    m_plan->setVisible(problem.isEmpty());
    m_layout = l;
    m_planStale = problem.isEmpty();
    // Planning prices a few configurations (a second or two at 262,144 GPUs): once the user
    // pauses, not on every step of a spin box.
    if (m_planStale)
        m_planTimer->start();
}

void NewClusterDialog::plan()
{
    m_planTimer->stop();
    if (!m_planStale)
        return;
    m_planStale = false;
    engine::Layout l = m_layout;
    // Which sizes fit the new cluster is the engine's rule, not the dialog's.
    const engine::Topology topology = engine::buildTopology(l.cluster, engine::Catalog::builtin());
    const engine::DefaultPlan plan = engine::defaultPlan(l, topology);
    m_layout = engine::withPlan(l, plan);
    m_plan->clear();
    if (!l.model) {
        m_plan->setText(tr("No model: the cluster only."));
        m_plan->setStyleSheet(QStringLiteral("color: #5b6675;"));
        return;
    }
    const engine::ParallelConfig &p = plan.parallel;
    const int dp = m_layout.dataParallel();
    QString sizes = tr("TP %1 \u00b7 PP %2 \u00b7 DP %3").arg(p.tp).arg(p.pp).arg(dp);
    if (p.ep > 1)
        sizes += tr(" \u00b7 EP %1").arg(p.ep);
    const QString model = QString::fromStdString(
            m_base.model->preset.empty() ? std::string("The model") : m_base.model->preset);
    QString text;
    if (plan.fits) {
        text = tr("%1 starts at %2: %3 of %4 GiB per GPU.")
                       .arg(model,
                            sizes,
                            QLocale().toString(plan.memoryGiB, 'f', 1),
                            QLocale().toString(plan.hbmGiB, 'f', 0));
        m_plan->setStyleSheet(QStringLiteral("color: #5b6675;"));
    } else {
        text = tr("%1. It opens at %2, out of memory.")
                       .arg(QString::fromStdString(plan.reason), sizes);
        m_plan->setStyleSheet(QStringLiteral("color: #9a5b00;"));
    }
    if (plan.globalBatch != m_base.training.globalBatch)
        text += QLatin1Char(' ')
                + tr("Global batch %1 \u2192 %2, so that %3 replicas split it.")
                          .arg(QLocale().toString(m_base.training.globalBatch),
                               QLocale().toString(plan.globalBatch),
                               QLocale().toString(dp));
    m_plan->setText(text);
}

} // namespace railyard
