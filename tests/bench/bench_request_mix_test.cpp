#include "EngineTestSupport.h"
#include "TestHttpServer.h"

using namespace benchtest;

class RequestMixTest : public QObject {
    Q_OBJECT

private slots:
    void weightedMixSendsEachKindByItsWeight()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        const Target target = targetFor(server.url("/"));
        const RequestRenderer renderer(target.hostHeader, HttpMode::KeepAlive);
        auto plan = std::make_shared<WeightedMixPlan>(
            std::vector<MixEntry>{{3, "GET", "/a", ""}, {1, "POST", "/b", R"({"x":1})"}}, renderer);
        QCOMPARE(plan->kindNames(), (std::vector<std::string>{"GET /a", "POST /b"}));
        LoadEngine engine(target, countSettings(4, 2000), plan);
        const StageResult result = engine.run();
        QCOMPARE(result.responses(), uint64_t{2000});

        int gets = 0, posts = 0;
        for (const std::string &line : server.requestLines()) {
            gets += line == "GET /a HTTP/1.1";
            posts += line == "POST /b HTTP/1.1";
        }
        QCOMPARE(gets + posts, 2000);
        QVERIFY2(gets > 1400 && gets < 1600, qPrintable(QString::number(gets))); // 75 %

        // The per-request breakdown counts what the server saw.
        const auto &kinds = result.totals.kinds();
        QCOMPARE(kinds.size(), std::size_t{2});
        QCOMPARE(kinds[0].responses, static_cast<uint64_t>(gets));
        QCOMPARE(kinds[1].responses, static_cast<uint64_t>(posts));
        QCOMPARE(kinds[0].latency.count() + kinds[1].latency.count(), uint64_t{2000});
    }

    void singleRequestPlansKeepNoBreakdown()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        const StageResult result = runGet(server.url(), countSettings(2, 50));
        QVERIFY(result.kindNames.empty());
        QVERIFY(result.totals.kinds().empty());
    }

    void failuresAreChargedToTheirKind()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Status500);
        const Target target = targetFor(server.url("/"));
        const RequestRenderer renderer(target.hostHeader, HttpMode::KeepAlive);
        auto plan = std::make_shared<WeightedMixPlan>(std::vector<MixEntry>{{1, "GET", "/a", ""}, {1, "GET", "/b", ""}},
                                                      renderer);
        LoadEngine engine(target, countSettings(2, 100), plan);
        const StageResult result = engine.run();
        const auto &kinds = result.totals.kinds();
        QCOMPARE(kinds[0].errors + kinds[1].errors, uint64_t{100});
        QCOMPARE(kinds[0].errors, kinds[0].responses);
    }
};

QTEST_GUILESS_MAIN(RequestMixTest)
#include "bench_request_mix_test.moc"
