#include "clusterform.h"

#include "layout/catalog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>

namespace railyard {

ClusterForm::ClusterForm(QWidget *parent)
    : QWidget(parent)
    , m_gpu(new QComboBox(this))
    , m_nodes(new QSpinBox(this))
    , m_gpusPerNode(new QSpinBox(this))
    , m_nvlinkDomain(new QSpinBox(this))
    , m_nicsPerGpu(new QDoubleSpinBox(this))
    , m_nicGbps(new QComboBox(this))
    , m_fabric(new QComboBox(this))
    , m_oversubscription(new QDoubleSpinBox(this))
    , m_sharp(new QCheckBox(tr("In-network reduction (SHARP)"), this))
    , m_price(new QDoubleSpinBox(this))
    , m_summary(new QLabel(this))
{
    for (const engine::GpuSpec &g : engine::Catalog::builtin().gpus())
        m_gpu->addItem(QString::fromStdString(g.name), QString::fromStdString(g.id));
    m_nodes->setRange(1, engine::kMaxGpus);
    m_nodes->setToolTip(tr("Servers (or NVL72 compute trays). Railyard accepts clusters of up "
                           "to %1 GPUs.")
                                .arg(QLocale().toString(engine::kMaxGpus)));
    m_gpusPerNode->setRange(1, 128);
    m_nvlinkDomain->setRange(1, 1024);
    m_nvlinkDomain->setToolTip(tr("GPUs per NVLink domain: 8 for an HGX server, 72 for an NVL72 "
                                  "rack. A multiple of the GPUs per server."));
    m_nicsPerGpu->setRange(0, 16);
    m_nicsPerGpu->setDecimals(3);
    m_nicsPerGpu->setSingleStep(0.25);
    for (int g : {100, 200, 400, 800, 1600})
        m_nicGbps->addItem(tr("%1 Gbit/s").arg(g), g);
    m_fabric->addItem(tr("Rail-optimized leaf/spine"), QStringLiteral("rail-optimized"));
    m_fabric->addItem(tr("Single switch"), QStringLiteral("single-switch"));
    m_fabric->addItem(tr("Three-tier fat tree"), QStringLiteral("three-tier"));
    m_oversubscription->setRange(1, 64);
    m_oversubscription->setSingleStep(0.5);
    m_oversubscription->setSuffix(QStringLiteral(":1"));
    m_price->setRange(0, 10000);
    m_price->setDecimals(2);
    m_price->setPrefix(QStringLiteral("$"));
    m_price->setSuffix(tr(" per GPU-hour"));
    m_summary->setWordWrap(true);
    m_summary->setStyleSheet(QStringLiteral("color: palette(mid);"));
    // Typing "36" must not pass through a 3-server cluster on the way.
    for (QAbstractSpinBox *box : {static_cast<QAbstractSpinBox *>(m_nodes),
                                  static_cast<QAbstractSpinBox *>(m_gpusPerNode),
                                  static_cast<QAbstractSpinBox *>(m_nvlinkDomain),
                                  static_cast<QAbstractSpinBox *>(m_nicsPerGpu),
                                  static_cast<QAbstractSpinBox *>(m_oversubscription),
                                  static_cast<QAbstractSpinBox *>(m_price)})
        box->setKeyboardTracking(false);

    // A narrow dock wraps a field under its label rather than growing the dock; long names
    // (GPU, fabric) elide in the closed box and show whole in its list.
    for (QComboBox *box : {m_gpu, m_nicGbps, m_fabric}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(10);
        box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    auto *form = new QFormLayout(this);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("GPU"), m_gpu);
    form->addRow(tr("Servers"), m_nodes);
    form->addRow(tr("GPUs per server"), m_gpusPerNode);
    form->addRow(tr("NVLink domain"), m_nvlinkDomain);
    form->addRow(tr("NICs per GPU"), m_nicsPerGpu);
    form->addRow(tr("NIC speed"), m_nicGbps);
    form->addRow(tr("Fabric"), m_fabric);
    form->addRow(tr("Oversubscription"), m_oversubscription);
    form->addRow(QString(), m_sharp);
    form->addRow(tr("Price"), m_price);
    form->addRow(m_summary);

    const auto emitter = [this](const QString &field) {
        return [this, field] {
            if (m_updating)
                return;
            updateSummary();
            Q_EMIT edited(field);
        };
    };
    connect(m_gpu, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating)
            return;
        // A new GPU brings its usual server shape and price.
        setCluster(withGpu(cluster(), m_gpu->currentData().toString().toStdString()));
        Q_EMIT edited(QStringLiteral("gpu"));
    });
    connect(m_nodes, &QSpinBox::valueChanged, this, emitter(QStringLiteral("nodes")));
    connect(m_gpusPerNode, &QSpinBox::valueChanged, this, emitter(QStringLiteral("gpus_per_node")));
    connect(m_nvlinkDomain, &QSpinBox::valueChanged, this, emitter(QStringLiteral("nvlink_domain")));
    connect(m_nicsPerGpu,
            &QDoubleSpinBox::valueChanged,
            this,
            emitter(QStringLiteral("nic.per_gpu")));
    connect(m_nicGbps, &QComboBox::currentIndexChanged, this, emitter(QStringLiteral("nic.gbps")));
    connect(m_fabric, &QComboBox::currentIndexChanged, this, emitter(QStringLiteral("fabric.kind")));
    connect(m_oversubscription,
            &QDoubleSpinBox::valueChanged,
            this,
            emitter(QStringLiteral("fabric.oversubscription")));
    connect(m_sharp, &QCheckBox::toggled, this, emitter(QStringLiteral("fabric.sharp")));
    connect(m_price, &QDoubleSpinBox::valueChanged, this, emitter(QStringLiteral("price")));
}

engine::ClusterConfig ClusterForm::withGpu(const engine::ClusterConfig &cluster,
                                           const std::string &gpu)
{
    engine::ClusterConfig c = cluster;
    const engine::GpuSpec *spec = engine::Catalog::builtin().gpu(gpu);
    if (!spec)
        return c;
    // An explicit server keeps its shape: only the GPU's rates and price change.
    const bool wasRack = c.server ? false : c.nvlinkDomain > c.gpusPerNode;
    const int gpus = c.gpuCount();
    c.gpu = gpu;
    const bool rack = !c.server && (gpu == "GB200" || gpu == "GB300");
    if (rack != wasRack) {
        c.gpusPerNode = rack ? 4 : 8;
        c.nvlinkDomain = rack ? 72 : 8;
        // Keep about as many GPUs, in whole NVLink domains.
        const int domains = std::max(1, (gpus + c.nvlinkDomain - 1) / c.nvlinkDomain);
        c.nodes = domains * c.nodesPerDomain();
        c.serversPerRack.reset();
    }
    if (spec->pricePerGpuHour > 0)
        c.pricePerGpuHour = spec->pricePerGpuHour;
    c.nic.model.clear(); // chosen by rate for the new GPU
    return c;
}

void ClusterForm::setCluster(const engine::ClusterConfig &c)
{
    m_updating = true;
    m_base = c;
    m_gpu->setCurrentIndex(std::max(0, m_gpu->findData(QString::fromStdString(c.gpu))));
    m_nodes->setValue(c.nodes);
    m_gpusPerNode->setValue(c.gpusPerNode);
    m_nvlinkDomain->setValue(c.nvlinkDomain);
    m_nicsPerGpu->setValue(c.nic.perGpu);
    int nic = m_nicGbps->findData(static_cast<int>(c.nic.gbitPerS));
    if (nic < 0) {
        m_nicGbps->addItem(tr("%1 Gbit/s").arg(c.nic.gbitPerS), static_cast<int>(c.nic.gbitPerS));
        nic = m_nicGbps->count() - 1;
    }
    m_nicGbps->setCurrentIndex(nic);
    m_fabric->setCurrentIndex(m_fabric->findData(QString::fromLatin1(toString(c.fabric.kind))));
    m_oversubscription->setValue(c.fabric.oversubscription);
    m_sharp->setChecked(c.fabric.sharp);
    m_price->setValue(c.pricePerGpuHour.value_or(0));
    // A server written out device by device (layout format 2) fixes the GPUs and NICs of every
    // server and the NVLink domain; the fields say so rather than offer edits the layout
    // would refuse.
    const bool fixed = c.server.has_value();
    const QString why = tr("Set by the server this layout writes out device by device (an "
                           "imported machine): use the generated server to change it");
    for (QWidget *w : {static_cast<QWidget *>(m_gpusPerNode),
                       static_cast<QWidget *>(m_nvlinkDomain),
                       static_cast<QWidget *>(m_nicsPerGpu)}) {
        w->setEnabled(!fixed);
        w->setToolTip(fixed ? why : QString());
    }
    if (!fixed)
        m_nvlinkDomain->setToolTip(tr("GPUs per NVLink domain: 8 for an HGX server, 72 for an "
                                      "NVL72 rack. A multiple of the GPUs per server."));
    m_updating = false;
    updateSummary();
}

engine::ClusterConfig ClusterForm::cluster() const
{
    engine::ClusterConfig c = m_base;
    c.gpu = m_gpu->currentData().toString().toStdString();
    c.nodes = m_nodes->value();
    c.gpusPerNode = m_gpusPerNode->value();
    c.nvlinkDomain = m_nvlinkDomain->value();
    c.nic.perGpu = m_nicsPerGpu->value();
    const double gbps = m_nicGbps->currentData().toInt();
    if (gbps != c.nic.gbitPerS)
        c.nic.model.clear(); // the model named in the file no longer matches the rate
    c.nic.gbitPerS = gbps;
    const QString fabric = m_fabric->currentData().toString();
    c.fabric.kind = fabric == QLatin1String("single-switch") ? engine::FabricKind::SingleSwitch
                    : fabric == QLatin1String("three-tier")  ? engine::FabricKind::ThreeTier
                                                             : engine::FabricKind::RailOptimized;
    c.fabric.oversubscription = m_oversubscription->value();
    c.fabric.sharp = m_sharp->isChecked();
    if (m_price->value() > 0)
        c.pricePerGpuHour = m_price->value();
    else
        c.pricePerGpuHour.reset();
    return c;
}

void ClusterForm::updateSummary()
{
    const engine::ClusterConfig c = cluster();
    const long long gpus = 1LL * c.nodes * c.gpusPerNode;
    const long long domains = c.nvlinkDomain > 0 ? gpus / c.nvlinkDomain : 0;
    m_summary->setText(
            tr("%1 GPUs in %2 of %3")
                    .arg(QLocale().toString(gpus))
                    .arg(c.nvlinkDomain > 0
                                 ? QStringLiteral("%1 %2").arg(QLocale().toString(domains),
                                                               domains == 1 ? tr("NVLink domain")
                                                                            : tr("NVLink domains"))
                                 : tr("? NVLink domains"))
                    .arg(c.nvlinkDomain));
}

} // namespace railyard
