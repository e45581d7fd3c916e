#include "cli.h"
#include "document/document.h"
#include "layout.h"
#include "mainwindow.h"

#include <railyard/version.h>

#include <QApplication>
#include <QFile>
#include <QScreen>
#include <QTimer>

#include <iostream>
#include <set>

namespace {

// The layout FILE among the GUI arguments, skipping Qt's own options and their values.
std::string fileArgument(int argc, char **argv)
{
    static const std::set<std::string> qtValued = {"-platform",
                                                   "-platformpluginpath",
                                                   "-platformtheme",
                                                   "-plugin",
                                                   "-qmljsdebugger",
                                                   "-style",
                                                   "-stylesheet",
                                                   "-display",
                                                   "-geometry",
                                                   "-title",
                                                   "-qwindowgeometry",
                                                   "-qwindowtitle",
                                                   "-qwindowicon",
                                                   "-reverse"};
    std::string file;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.size() > 1 && a[0] == '-') {
            if (qtValued.count(a) && a != "-reverse")
                ++i;
            continue;
        }
        file = a;
    }
    return file;
}

} // namespace

int main(int argc, char **argv)
{
    {
        const std::vector<std::string> args(argv, argv + argc);
        const auto outcome = railyard::cli::run(args, std::cout, std::cerr);
        if (outcome.handled)
            return outcome.exitCode;
    }

    // Check the file before any window exists, so a bad file fails fast and headless.
    const std::string file = fileArgument(argc, argv);
    if (!file.empty()) {
        try {
            railyard::engine::readLayoutFile(file);
        } catch (const std::exception &e) {
            std::cerr << "railyard: " << e.what() << "\n";
            return 1;
        }
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Railyard"));
    QApplication::setOrganizationName(QStringLiteral("Railyard"));
    QApplication::setApplicationVersion(QStringLiteral(RAILYARD_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.railyard.Railyard"));

    railyard::MainWindow window;
    QString error;
    std::unique_ptr<railyard::Document> doc;
    if (!file.empty()) {
        doc = railyard::Document::load(QString::fromStdString(file), &error);
    } else {
        QFile f(QStringLiteral(":/layouts/hgx-h100-server.railyard.json"));
        f.open(QIODevice::ReadOnly);
        doc = railyard::Document::fromText(f.readAll(), QStringLiteral("hgx-h100-server"), &error);
    }
    if (!doc) {
        std::cerr << "railyard: " << error.toStdString() << "\n";
        return 1;
    }
    window.setDocument(std::move(doc));
    if (const QScreen *screen = QGuiApplication::primaryScreen()) {
        // Fill a small screen; keep a comfortable size on a large one.
        const QSize avail = screen->availableGeometry().size();
        window.resize(std::min(avail.width(), 2400), std::min(avail.height(), 1500));
    }
    window.show();
    // After a crash, the last session's unsaved work waits in the recovery folder.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return app.exec();
}
