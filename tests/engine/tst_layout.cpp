#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "layout/layout.h"
#include "layout/parallel.h"
#include "layout/softwarestack.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QDir>
#include <QStringDecoder>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

#include <sys/stat.h>

using namespace railyard::engine;

static std::string dataPath(const QString &name)
{
    return std::string(RAILYARD_TEST_DATA "/") + name.toStdString();
}

// The message names the file and the place, is valid UTF-8 (a hostile file's bytes are not
// echoed raw) and stays short whatever the input.
static void checkMessage(const InputError &e, const QStringList &expected)
{
    const std::string what = e.what();
    QStringDecoder utf8(QStringDecoder::Utf8);
    const QString msg = utf8(QByteArray::fromStdString(what));
    qInfo("%s", qPrintable(msg.left(400)));
    QVERIFY2(!utf8.hasError(), "the message is not valid UTF-8");
    QVERIFY2(what.size() < 1000, qPrintable(QString::number(what.size())));
    for (const QString &part : expected)
        QVERIFY2(msg.contains(part), qPrintable(msg.left(400) + " lacks: " + part));
}

class TestLayout : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void readsReferenceExample()
    {
        const Layout l = readLayoutFile(dataPath("example.railyard.json"));
        QCOMPARE(l.cluster.gpu, std::string("H200-SXM"));
        QCOMPARE(l.cluster.nodes, 16);
        QCOMPARE(l.cluster.gpuCount(), 128);
        QCOMPARE(l.cluster.nic.gbitPerS, 400.0);
        QCOMPARE(l.cluster.tuning.qpsPerConnection, 4);
        QCOMPARE(*l.cluster.pricePerGpuHour, 3.20);
        QVERIFY(l.model);
        QCOMPARE(l.model->preset, std::string("llama3-70b"));
        QCOMPARE(l.training.seqLen, 8192);
        QCOMPARE(l.training.recompute, Recompute::Selective);
        QCOMPARE(l.parallel.tp, 8);
        QCOMPARE(l.parallel.vp, 5);
        QCOMPARE(l.dataParallel(), 4);
        QCOMPARE(l.view.get()["color_by"].get<std::string>(), std::string("tp"));
    }

    void readsMoeExampleWithMapping()
    {
        const Layout l = readLayoutFile(dataPath("example-moe.railyard.json"));
        QVERIFY(l.model && l.model->moe);
        QCOMPARE(*l.model->moe->experts, 128);
        QCOMPARE(l.mapping.size(), std::size_t(16));
        const ResolvedModel m = resolveModel(*l.model);
        QVERIFY2(m.error.empty(), m.error.c_str());
        QCOMPARE(m.dims.headDim, 128);
        QCOMPARE(m.dims.kvHeads, 4);
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("example") << "example.railyard.json";
        QTest::newRow("moe") << "example-moe.railyard.json";
        QTest::newRow("seed 16") << "seed-16-servers.railyard.json";
    }
    void roundTrip()
    {
        QFETCH(QString, file);
        const Layout a = readLayoutFile(dataPath(file));
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("out.railyard.json")).toStdString();
        writeLayoutFile(a, out);
        const Layout b = readLayoutFile(out);
        QVERIFY(a.sameContent(b));
        // Writing again gives the same bytes: saving is stable.
        QCOMPARE(layoutToText(b), layoutToText(a));
    }

    void unknownKeysSurvive()
    {
        const Layout a = readLayoutFile(dataPath("seed-16-servers.railyard.json"));
        const Json j = layoutToJson(a);
        QVERIFY(j.contains("x_unknown_tool_setting"));
        QCOMPARE(j["x_unknown_tool_setting"]["keep"].size(), std::size_t(3));
    }

    // A layout's view and original document are values (JsonValue keeps nlohmann/json.hpp out
    // of layout.h): a copy is deep, a moved-from one holds an empty object, never null.
    void viewAndOriginalAreValues()
    {
        Layout a = readLayoutFile(dataPath("seed-16-servers.railyard.json"));
        a.view.get()["zoom"] = 2.0;
        Layout b = a;
        b.view.get()["zoom"] = 3.0;
        b.original.get()["x_unknown_tool_setting"] = nullptr;
        QCOMPARE(a.view.get()["zoom"].get<double>(), 2.0);
        QVERIFY(a.original.get()["x_unknown_tool_setting"].is_object());
        QVERIFY(!(a.view == b.view));
        b = a;
        QVERIFY(a.view == b.view);

        Layout moved = std::move(b);
        QCOMPARE(moved.view.get()["zoom"].get<double>(), 2.0);
        const Layout fresh;
        QVERIFY(fresh.view.get().is_object() && fresh.view.get().empty());
        QVERIFY(fresh.original.get().is_object());
    }

    void editsAreWritten()
    {
        Layout a = readLayoutFile(dataPath("example.railyard.json"));
        a.cluster.nodes = 32;
        a.parallel.dp = 8;
        a.model->preset = "llama3-8b";
        const Layout b = parseLayout(layoutToText(a), "edited");
        QCOMPARE(b.cluster.nodes, 32);
        QCOMPARE(b.dataParallel(), 8);
        QCOMPARE(b.model->preset, std::string("llama3-8b"));
    }

    // training.compile: the stack sets the default (torchtitan's configs leave torch.compile
    // off; the generic stack's kernels are fused), a key beside it overrides, and the file
    // holds the key only where it differs from the stack's default.
    void compileFollowsTheStack()
    {
        Layout a = readLayoutFile(dataPath("example.railyard.json"));
        QVERIFY(a.training.compile);
        QVERIFY(layoutToText(a).find("\"compile\"") == std::string::npos);
        applyStackDefaults(a.training, *findStack("torchtitan"));
        QVERIFY(!a.training.compile);
        QVERIFY(layoutToText(a).find("\"compile\"") == std::string::npos);
        QVERIFY(!parseLayout(layoutToText(a), "titan").training.compile);
        a.training.compile = true;
        const std::string text = layoutToText(a);
        QVERIFY(text.find("\"compile\": true") != std::string::npos);
        QVERIFY(parseLayout(text, "titan compiled").training.compile);
        // On a stack with fused kernels of its own, an eager layout says so in its file.
        applyStackDefaults(a.training, *findStack("megatron-core"));
        a.training.compile = false;
        QVERIFY(!parseLayout(layoutToText(a), "mcore").training.compile);
    }

    // training.cpu_offload_layers: written only where set, read back as written; a negative
    // count is refused with the place and the range.
    void cpuOffloadLayersRoundTrip()
    {
        Layout a = readLayoutFile(dataPath("example.railyard.json"));
        QCOMPARE(a.training.offloadLayers, 0);
        QVERIFY(layoutToText(a).find("cpu_offload_layers") == std::string::npos);
        a.training.offloadLayers = 20;
        const std::string text = layoutToText(a);
        QVERIFY(text.find("\"cpu_offload_layers\": 20") != std::string::npos);
        QCOMPARE(parseLayout(text, "offload").training.offloadLayers, 20);
        std::string bad = text;
        bad.replace(bad.find("\"cpu_offload_layers\": 20"),
                    std::string("\"cpu_offload_layers\": 20").size(),
                    "\"cpu_offload_layers\": -3");
        try {
            parseLayout(bad, "bad.railyard.json");
            QFAIL("a negative offload was accepted");
        } catch (const InputError &e) {
            const std::string what = e.what();
            QVERIFY2(what.find("bad.railyard.json") != std::string::npos, e.what());
            QVERIFY2(what.find("/training/cpu_offload_layers") != std::string::npos, e.what());
            QVERIFY2(what.find("-3") != std::string::npos, e.what());
        }
    }

    // training.recompute_modules (Megatron's --recompute-modules): written only where selective
    // recomputation names other modules than core_attn, read back as written; an unknown or
    // repeated name, or something not a list, is refused with the place.
    void recomputeModulesRoundTrip()
    {
        Layout a = readLayoutFile(dataPath("example.railyard.json"));
        a.training.recompute = Recompute::Selective;
        QCOMPARE(a.training.recomputeModules, unsigned(kRecomputeCoreAttn));
        QVERIFY(layoutToText(a).find("recompute_modules") == std::string::npos);
        a.training.recomputeModules = kRecomputeLayernorm | kRecomputeMoe;
        const std::string text = layoutToJson(a).dump();
        QVERIFY2(text.find(R"("recompute_modules":["layernorm","moe"])") != std::string::npos,
                 text.c_str());
        QCOMPARE(parseLayout(text, "modules").training.recomputeModules,
                 unsigned(kRecomputeLayernorm | kRecomputeMoe));
        QCOMPARE(recomputeModulesText(a.training.recomputeModules), std::string("layernorm+moe"));
        const auto refused = [&](const std::string &value, const std::string &expected) {
            std::string bad = text;
            const std::string key = R"(["layernorm","moe"])";
            bad.replace(bad.find(key), key.size(), value);
            try {
                parseLayout(bad, "bad.railyard.json");
                QFAIL(qPrintable(QString::fromStdString("accepted " + value)));
            } catch (const InputError &e) {
                const std::string what = e.what();
                QVERIFY2(what.find("bad.railyard.json") != std::string::npos, e.what());
                QVERIFY2(what.find("/training/recompute_modules") != std::string::npos, e.what());
                QVERIFY2(what.find(expected) != std::string::npos, e.what());
            }
        };
        refused(R"(["layernorm","attention"])", "core_attn");
        refused(R"(["moe","moe"])", "named twice");
        refused(R"("moe")", "array");
        refused(R"(["a","b","c","d","e","f","g","h"])", "at most 7");
        // Kept under another recompute setting (it changes nothing there), so switching back
        // to selective recomputation after a save and a reopen finds the modules again.
        a.training.recompute = Recompute::Full;
        const Layout reopened = parseLayout(layoutToJson(a).dump(), "full");
        QCOMPARE(reopened.training.recompute, Recompute::Full);
        QCOMPARE(reopened.training.recomputeModules, unsigned(kRecomputeLayernorm | kRecomputeMoe));
        QVERIFY(nonDefaultRecomputeModules(reopened.training).empty());
    }

    void writeIsAtomicAndLeavesNoTemporary()
    {
        QTemporaryDir dir;
        const std::string out = dir.filePath(QStringLiteral("a.railyard.json")).toStdString();
        const Layout a = readLayoutFile(dataPath("example.railyard.json"));
        writeLayoutFile(a, out);
        writeLayoutFile(a, out);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
        QVERIFY_THROWS_EXCEPTION(InputError, writeLayoutFile(a, "/nonexistent-dir/x.json"));
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("broken JSON")
                << "bad/broken-json.railyard.json"
                << QStringList{"broken-json.railyard.json", "line 5, column 1", "invalid JSON"};
        QTest::newRow("missing key") << "bad/missing-nodes.railyard.json"
                                     << QStringList{"/cluster", "missing required key \"nodes\""};
        QTest::newRow("wrong type")
                << "bad/wrong-type.railyard.json"
                << QStringList{"/cluster/nodes", "expected an integer", "a string \"sixteen\""};
        QTest::newRow("negative count")
                << "bad/negative-nodes.railyard.json"
                << QStringList{"/cluster/nodes", "expected an integer from 1", "got -3"};
        QTest::newRow("unknown version")
                << "bad/future-version.railyard.json"
                << QStringList{"/version", "version 7 is newer than this Railyard reads"};
        QTest::newRow("billion GPUs") << "bad/billion-gpus.railyard.json"
                                      << QStringList{"/cluster/nodes", "at most 262144"};
        QTest::newRow("unknown GPU")
                << "bad/unknown-gpu.railyard.json"
                << QStringList{"/cluster/gpu", "unknown GPU \"X9000\"", "H100-SXM"};
        QTest::newRow("empty file") << "bad/empty.railyard.json"
                                    << QStringList{"empty.railyard.json", "the file is empty"};
        QTest::newRow("array") << "bad/not-an-object.railyard.json"
                               << QStringList{": /: expected an object, got an array"};
        QTest::newRow("missing file")
                << "bad/no-such-file.railyard.json" << QStringList{"no-such-file", "cannot open"};
        // Hostile input (issue 8): each is refused with the file and the place, never a crash.
        QTest::newRow("view nested 100,000 deep")
                << "bad/deep-view.railyard.json"
                << QStringList{"deep-view.railyard.json: line 2, column 81",
                               "nested deeper than 64 levels",
                               "/view/zoom/0/0/0"};
        QTest::newRow("unknown key nested 100,000 deep")
                << "bad/deep-unknown.railyard.json"
                << QStringList{"deep-unknown.railyard.json: line 2, column 264",
                               "nested deeper than 64 levels",
                               "/x_tool//"};
        QTest::newRow("number overflows a double")
                << "bad/number-overflow.railyard.json"
                << QStringList{"number-overflow.railyard.json: line 1, column 12",
                               "1e400",
                               "too large"};
        QTest::newRow("duplicate key")
                << "bad/duplicate-key.railyard.json"
                << QStringList{"duplicate-key.railyard.json: line 7, column 5",
                               "duplicate key \"nodes\" at /cluster/nodes",
                               "first given at line 6, column 5"};
        QTest::newRow("NUL bytes")
                << "bad/nul-bytes.railyard.json"
                << QStringList{"nul-bytes.railyard.json: line 1, column 1", "NUL byte"};
        QTest::newRow("binary") << "bad/binary.railyard.json"
                                << QStringList{"binary.railyard.json: line 3, column 1", "NUL byte"};
        QTest::newRow("NUL after the object")
                << "bad/nul-after-object.railyard.json"
                << QStringList{"nul-after-object.railyard.json: line 1, column 88", "NUL byte"};
        QTest::newRow("invalid UTF-8") << "bad/invalid-utf8.railyard.json"
                                       << QStringList{"invalid-utf8.railyard.json: line 2, column",
                                                      "invalid JSON",
                                                      "UTF-8"};
        QTest::newRow("NaN") << "bad/nan.railyard.json"
                             << QStringList{"nan.railyard.json: line 2, column 67",
                                            "NaN is not a JSON number"};
        QTest::newRow("-Infinity") << "bad/infinity.railyard.json"
                                   << QStringList{"infinity.railyard.json: line 3, column 19",
                                                  "-Infinity is not a JSON number"};
        QTest::newRow("huge integer")
                << "bad/huge-integer.railyard.json"
                << QStringList{"/cluster/nodes", "expected an integer from 1", "got 1e+26"};
        QTest::newRow("integer past int64") << "bad/uint64-integer.railyard.json"
                                            << QStringList{"/cluster/nodes",
                                                           "expected an integer from 1",
                                                           "got 18446744073709551615"};
        QTest::newRow("zero GPUs per node")
                << "bad/zero-gpus-per-node.railyard.json"
                << QStringList{"/cluster/gpus_per_node", "expected an integer from 1", "got 0"};
        QTest::newRow("negative TP")
                << "bad/negative-tp.railyard.json" << QStringList{"/parallel/tp", "got -8"};
    }
    void badFiles()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        try {
            readLayoutFile(dataPath(file));
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e, expected);
        }
    }

    // Nesting: the limit is 64 levels (kMaxJsonDepth) wherever it happens; deeper is refused
    // before anything recursive walks the document.
    void depthLimit_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<int>("levels"); // objects and arrays under `key`
        QTest::addColumn<QString>("open");
        QTest::addColumn<bool>("loads");
        // The root object is level 1: 63 more levels are the most a layout may have.
        QTest::newRow("view, 63 levels") << "view" << 63 << R"({"a":)" << true;
        QTest::newRow("view, 64 levels") << "view" << 64 << R"({"a":)" << false;
        QTest::newRow("view, 100,000 objects") << "view" << 100000 << R"({"a":)" << false;
        QTest::newRow("unknown key, 63 arrays") << "x_tool" << 63 << "[" << true;
        QTest::newRow("unknown key, 100,000 arrays") << "x_tool" << 100000 << "[" << false;
    }
    void depthLimit()
    {
        QFETCH(QString, key);
        QFETCH(int, levels);
        QFETCH(QString, open);
        QFETCH(bool, loads);
        const std::string o = open.toStdString();
        const std::string close = o == "[" ? "]" : "}";
        std::string text
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":1},)"
                  "\n\""
                  + key.toStdString() + "\":";
        for (int i = 0; i < levels; ++i)
            text += o;
        text += o == "[" ? "" : "1";
        for (int i = 0; i < levels; ++i)
            text += close;
        text += "}";
        if (key == "view" && o == "[")
            QFAIL("view must be an object");
        try {
            const Layout l = parseLayout(text, "deep.json");
            QVERIFY2(loads, "loaded");
            // What loads can be copied, compared and saved (all recursive in nlohmann).
            const Layout copy = l;
            QVERIFY(copy.sameContent(l));
            const Layout again = parseLayout(layoutToText(copy), "again.json");
            QVERIFY(again.sameContent(l));
        } catch (const InputError &e) {
            QVERIFY2(!loads, e.what());
            // The container that is one too many: the 64th under the key ("key": is column 1).
            const int column = static_cast<int>(key.size()) + 3 + 63 * open.size() + 1;
            checkMessage(e,
                         {"deep.json: line 2, column " + QString::number(column),
                          "nested deeper than 64 levels",
                          "/" + key + "/"});
        }
    }

    // Duplicate keys are refused wherever they are, in linear time for large objects (an
    // ordered_map looks keys up one by one: 300,000 keys checked that way would take minutes).
    void duplicateKeys_data()
    {
        QTest::addColumn<int>("keys");
        QTest::addColumn<int>("duplicate"); // -1: none
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("small, none") << 3 << -1 << QStringList{};
        QTest::newRow("small") << 3 << 1
                               << QStringList{"line 5, column 1",
                                              "\"k1\"",
                                              "at /x_tool/k1",
                                              "first given at line 3, column 1"};
        QTest::newRow("300,000 keys, none") << 300000 << -1 << QStringList{};
        QTest::newRow("300,000 keys, first repeated")
                << 300000 << 0
                << QStringList{"line 300002, column 1",
                               "duplicate key \"k0\" at /x_tool/k0",
                               "first given at line 2, column 1"};
    }
    void duplicateKeys()
    {
        QFETCH(int, keys);
        QFETCH(int, duplicate);
        QFETCH(QStringList, expected);
        std::string text
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":1},"x_tool":{)";
        for (int i = 0; i < keys; ++i)
            text += "\n\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
        if (duplicate >= 0)
            text += "\n\"k" + std::to_string(duplicate) + "\": -1,";
        text += "\n\"last\": 0}}";
        try {
            const Layout l = parseLayout(text, "keys.json");
            QVERIFY2(duplicate < 0, "a duplicate key was accepted");
            const Json saved = layoutToJson(l);
            QCOMPARE(saved["x_tool"].size(), std::size_t(keys + 1));
            QCOMPARE(saved["x_tool"]["k" + std::to_string(keys - 1)].get<int>(), keys - 1);
        } catch (const InputError &e) {
            QVERIFY2(duplicate >= 0, e.what());
            checkMessage(e, QStringList{"keys.json"} + expected);
        }
    }

    // Only regular files are read: a FIFO without a writer, a directory or a device is refused
    // at once (the FIFO used to block forever).
    void notRegularFiles_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("FIFO") << "fifo"
                              << "is a FIFO; expected a layout file";
        QTest::newRow("directory") << "dir"
                                   << "is a directory; expected a layout file";
        QTest::newRow("device") << "dev"
                                << "is a character device; expected a layout file";
    }
    void notRegularFiles()
    {
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        std::string path = dir.filePath(QStringLiteral("x.railyard.json")).toStdString();
        if (kind == "fifo")
            QCOMPARE(::mkfifo(path.c_str(), 0600), 0);
        else if (kind == "dir")
            QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("x.railyard.json")));
        else
            path = "/dev/zero";
        try {
            readLayoutFile(path);
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e, {QString::fromStdString(path) + ": " + expected});
        }
    }

    // Tens of megabytes are refused by size, before parsing (in bounded time and memory).
    void hugeFile()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("huge.railyard.json")).toStdString();
        std::string text
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":1},"x":[)";
        while (text.size() < (std::size_t(40) << 20))
            text += "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,";
        text += "0]}";
        std::ofstream(path, std::ios::binary) << text;
        try {
            readLayoutFile(path);
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e,
                         {"huge.railyard.json: the file is 40", "MiB; a layout is at most 32 MiB"});
        }
        try {
            parseLayout(text, "pasted");
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e, {"pasted: the file is 40", "at most 32 MiB"});
        }
    }

    // Under the size cap, the count of values bounds parsing (nlohmann takes about 1 us and
    // 50 bytes per value): 3 million zeros in 6 MB are refused.
    void tooManyValues()
    {
        std::string text
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":1},"x":[0)";
        for (int i = 1; i < 3'000'000; ++i)
            text += ",0";
        text += "]}";
        try {
            parseLayout(text, "many.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e, {"many.json: line 1, column ", "more than 2097152 values"});
        }
    }

    // A 10 MB file name or value is echoed by its ends, not whole.
    void longNamesAreElided()
    {
        const std::string name = "/tmp/" + std::string(10'000'000, 'n') + "-end.railyard.json";
        try {
            readLayoutFile(name);
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e, {"/tmp/nnnn", "...", "nnnn-end.railyard.json: cannot open"});
            QCOMPARE(e.file(), name); // the caller still has the whole name
        }
        const std::string gpu = "G\xff" + std::string(10'000'000, 'x') + "\xc3";
        try {
            parseLayout(R"({"format":"railyard-layout","version":1,"cluster":{"gpu":")" + gpu
                                + R"(","nodes":1}})",
                        "long.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            // Invalid UTF-8 is refused by the parser, and its bytes escaped in the message.
            checkMessage(e, {"long.json: line 1, column 60", "ill-formed UTF-8", "\\xFF"});
        }
        const std::string preset(10'000'000, 'p');
        try {
            parseLayout(R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":1},"model":{"preset":")"
                                + preset + R"("}})",
                        "long.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            checkMessage(e,
                         {"long.json: /model/preset: unknown model preset \"pppp",
                          "pppp\" (expected one of"});
        }
    }

    // Products of parallel sizes are 64-bit: EP x expert TP = 65536 x 65536 used to overflow an
    // int (and print 0), TP x CP x PP x DP can pass 2^63.
    void parallelProductsDoNotOverflow_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("ep");
        QTest::addColumn<int>("etp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("expected");
        QTest::newRow("EP x ETP = 2^32")
                << 8 << 65536 << 65536 << 0
                << "EP x expert TP = 65536 x 65536 = 4294967296 must divide TP x CP x DP = 8";
        QTest::newRow("world past 2^63")
                << kMaxGpus << 1 << 1 << kMaxGpus
                << "TP x CP x PP x DP = 262144 x 262144 x 262144 x 262144 = more than 9.2e18";
    }
    void parallelProductsDoNotOverflow()
    {
        QFETCH(int, tp);
        QFETCH(int, ep);
        QFETCH(int, etp);
        QFETCH(int, dp);
        QFETCH(QString, expected);
        Layout l = readLayoutFile(dataPath("bad/ep-overflow.railyard.json"));
        l.parallel.tp = tp;
        l.parallel.ep = ep;
        l.parallel.etp = etp;
        if (dp) {
            l.parallel.cp = l.parallel.pp = tp;
            l.parallel.dp = dp;
        }
        try {
            RankLayout r(l);
            QFAIL("no error");
        } catch (const InputError &e) {
            QVERIFY2(QString::fromStdString(e.what()).contains(expected), e.what());
        }
    }

    // The fuzzer's findings (tests/data/fuzz/crashers) and seeds replayed through what the fuzz
    // target checks: an InputError that names the file, or a layout that saves, reloads to the
    // same content, and builds and prices without throwing.
    void fuzzInputsAreHandled_data()
    {
        QTest::addColumn<QString>("file");
        for (const char *folder : {"fuzz/crashers", "fuzz/layout"}) {
            const QDir dir(QStringLiteral(RAILYARD_TEST_DATA "/") + QLatin1String(folder));
            const QStringList files = dir.entryList(QDir::Files, QDir::Name);
            QVERIFY(!files.isEmpty());
            for (const QString &f : files)
                QTest::newRow(qPrintable(QLatin1String(folder) + "/" + f))
                        << QLatin1String(folder) + "/" + f;
        }
    }
    void fuzzInputsAreHandled()
    {
        QFETCH(QString, file);
        std::ifstream in(dataPath(file), std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        Layout l;
        try {
            l = parseLayout(text, "input.json");
        } catch (const InputError &e) {
            QVERIFY2(std::string(e.what()).rfind("input.json: ", 0) == 0, e.what());
            return;
        }
        const Layout again = parseLayout(layoutToText(l), "saved.json");
        QVERIFY(again.sameContent(l));
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        const Evaluation e = evaluate(l, t);
        // Priced, with a step time and memory that mean something, or refused with a reason.
        if (e.ok) {
            QVERIFY2(std::isfinite(e.stepTimeS) && e.stepTimeS > 0, qPrintable(file));
            QVERIFY2(std::isfinite(e.memory.totalGiB()) && e.memory.totalGiB() >= 0,
                     qPrintable(file));
        } else {
            QVERIFY2(e.error.size() > 10, e.error.c_str());
        }
    }

    void badValues_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        const QString head
                = R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":2},)";
        QTest::newRow("zero tp") << head + R"("parallel":{"tp":0}})"
                                 << "/parallel/tp";
        QTest::newRow("bad order") << head + R"("parallel":{"order":"tp-tp-dp-pp"}})"
                                   << "/parallel/order";
        QTest::newRow("bad precision") << head + R"("training":{"precision":"fp4"}})"
                                       << R"(one of "bf16" or "fp8")";
        QTest::newRow("unknown preset") << head + R"("model":{"preset":"gpt5"}})"
                                        << "unknown model preset \"gpt5\"";
        QTest::newRow("kv heads") << head + R"("model":{"preset":"llama3-8b","kv_heads":5}})"
                                  << "kv_heads (5) must divide heads (32)";
        QTest::newRow("mapping duplicate") << head + R"("parallel":{"dp":2},"mapping":[1,1]})"
                                           << "/mapping/1";
        QTest::newRow("mapping length") << head + R"("parallel":{"dp":16},"mapping":[0,1]})"
                                        << "one GPU per rank";
        QTest::newRow("domain not whole servers")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"GB200","nodes":18,"gpus_per_node":4,"nvlink_domain":70}})"
                << "multiple of gpus_per_node";
        QTest::newRow("partial NVL72")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"GB200","nodes":20,"gpus_per_node":4,"nvlink_domain":72}})"
                << "expected a multiple of 18";
        QTest::newRow("wrong format") << R"({"format":"something","version":1})"
                                      << R"(/format: expected "railyard-layout")";
        QTest::newRow("unknown NIC model")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":2,"nic":{"model":"X-NIC"}}})"
                << R"(/cluster/nic/model: unknown NIC model "X-NIC" (expected one of: )";
        QTest::newRow("no NICs between domains")
                << R"({"format":"railyard-layout","version":1,"cluster":{"gpu":"H100-SXM","nodes":2,"nic":{"per_gpu":0}}})"
                << "/cluster/nic/per_gpu: expected NICs: with 0 per GPU the 2 NVLink domains";
        QTest::newRow("number too large") << head + R"("training":{"seq_len":-1e999}})"
                                          << "line 1, column 102: the number -1e999 is too large";
    }
    void badValues()
    {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            parseLayout(json.toStdString(), "inline.json");
            QFAIL("no error");
        } catch (const InputError &e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.startsWith(QStringLiteral("inline.json: ")), qPrintable(msg));
            QVERIFY2(msg.contains(expected), qPrintable(msg));
        }
    }
};

QTEST_APPLESS_MAIN(TestLayout)
#include "tst_layout.moc"
