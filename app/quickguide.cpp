#include "quickguide.h"

#include <QDialogButtonBox>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace railyard {

QuickGuide::QuickGuide(const std::function<QString(const char *)> &keyOf, QWidget *parent)
    : QDialog(parent)
    , m_browser(new QTextBrowser(this))
{
    setWindowTitle(tr("Railyard Quick Guide"));
    setObjectName(QStringLiteral("QuickGuide"));
    const auto key = [&keyOf](const char *name) {
        const QString k = keyOf(name);
        return k.isEmpty() ? QString() : QStringLiteral(" <b>(%1)</b>").arg(k.toHtmlEscaped());
    };
    const QString html
            = tr("<h2>Railyard in five minutes</h2>"
                 "<p>Railyard draws a GPU cluster and prices one training step, or one decode "
                 "step and prefill of a served model, placed on it: where the traffic goes, "
                 "what each link carries, and what the step or the token costs.</p>"
                 "<h3>1. Open a cluster</h3>"
                 "<p><b>File &gt; Open Example</b> has the shipped layouts: one HGX server, a "
                 "16-server H200 cluster, GB200 NVL72 racks, Llama&nbsp;3.1 405B on 16,384 GPUs, "
                 "TP inside vs across servers. <b>File &gt; New Cluster</b>%1 builds one from the "
                 "GPU type, servers, NVLink domain and fabric; the job starts at parallel sizes "
                 "that fit in memory. <b>Open</b>%2 reads a <tt>.railyard.json</tt> file.</p>"
                 "<h3>2. Look around</h3>"
                 "<p>Wheel or <b>+/\u2212</b> zooms from racks to servers to GPUs; drag the "
                 "background to pan; <b>Fit to Cluster</b>%3 shows everything. Hover a GPU for "
                 "its groups and the links its traffic crosses; click a device for the "
                 "<b>Inspector</b>. <b>Find</b>%4 takes \u201cGPU 1234\u201d, \u201cnode 17\u201d "
                 "or \u201cleaf 3\u201d.</p>"
                 "<h3>3. Set the job</h3>"
                 "<p>The <b>Workload</b> panel sets the model, batch, precision and the parallel "
                 "sizes TP, CP, EP, PP and DP; sizes that cannot work are listed with the reason. "
                 "The <b>Cluster</b> tab beside it edits the hardware. Every edit can be "
                 "undone%5.</p>"
                 "<h3>4. Place the groups</h3>"
                 "<p>Colour the GPUs by a parallel dimension (Alt+1 to Alt+5). Drag a chip from "
                 "the <b>Groups</b> panel onto a GPU, a server or a rack to put that group "
                 "there; drag one GPU onto another to swap them; Shift-drag selects GPUs and "
                 "<b>Make Group Here</b>%6 moves a group onto them. A drop that cannot work says "
                 "why in the status bar.</p>"
                 "<h3>5. Read the price</h3>"
                 "<p>The <b>Pricing</b> panel shows the step time, its breakdown, memory per GPU "
                 "against HBM, tokens/s and MFU, and what the last edit changed. "
                 "<b>Link Load</b>%7 colours links by how busy they are. The <b>Warnings</b> "
                 "panel lists placement problems with their cost; click one to select its "
                 "GPUs. <b>Pin as A</b>%8 keeps the current numbers to compare later edits "
                 "against.</p>"
                 "<p>Panels can be moved, closed and brought back from <b>View &gt; Panels</b>; "
                 "<b>View &gt; Reset Layout</b> puts them back. <b>Help &gt; Keyboard "
                 "Shortcuts</b>%9 lists every key.</p>")
                      .arg(key("actionNewCluster"),
                           key("actionOpen"),
                           key("actionFit"),
                           key("actionFind"),
                           key("actionUndo"),
                           key("actionMakeGroup"),
                           key("actionLinkLoad"),
                           key("actionPin"),
                           key("actionShortcuts"));
    m_browser->setHtml(html);
    m_browser->setOpenExternalLinks(false);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_browser);
    layout->addWidget(buttons);
    resize(620, 640);
}

} // namespace railyard
