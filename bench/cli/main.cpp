// taxicore-bench: the command-line front of the load-generator library. Parses flags, checks the
// server answers, runs the stages and prints/writes the results.
#include "../engine/BenchmarkRun.h"
#include "../engine/FileDescriptorLimit.h"
#include "../engine/Version.h"
#include "../report/MachineInfo.h"
#include "../report/ResultJson.h"
#include "../report/SeriesCsv.h"
#include "../report/SummaryText.h"
#include "../scenarios/ScenarioCatalog.h"
#include "CommandLine.h"
#include "RunRecorder.h"

#include <QFile>
#include <QJsonDocument>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <thread>

using namespace taxicore::bench;

namespace {

constexpr int kExitCouldNotRun = 2;
constexpr int kExitOutputFailed = 1;
// How long the pre-flight connection may take before we call the server unreachable.
constexpr std::chrono::milliseconds kProbeTimeout{3000};
// Recording waits for the server's ledger commit (milliseconds normally; generous when loaded).
constexpr std::chrono::milliseconds kRecordTimeout{10000};

int fail(const std::string &message, int status = kExitCouldNotRun)
{
    std::cerr << "taxicore-bench: " << message << std::endl;
    return status;
}

bool writeFile(const std::string &path, const QByteArray &content)
{
    QFile file(QString::fromStdString(path));
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(content) == content.size();
}

bool canWrite(const std::string &path)
{
    QFile file(QString::fromStdString(path));
    return path.empty() || file.open(QIODevice::WriteOnly | QIODevice::Append);
}

void printLine(const QJsonObject &json)
{
    const QByteArray line = QJsonDocument(json).toJson(QJsonDocument::Compact);
    std::fwrite(line.constData(), 1, static_cast<std::size_t>(line.size()), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

// SIGINT/SIGTERM end the run early but still print what was measured. Signals are blocked in
// every thread and taken by this one with sigwait, so the stop runs outside a signal handler.
class InterruptWatcher {
public:
    explicit InterruptWatcher(BenchmarkRun &run)
    {
        sigemptyset(&m_signals);
        sigaddset(&m_signals, SIGINT);
        sigaddset(&m_signals, SIGTERM);
        sigaddset(&m_signals, SIGUSR1); // our own "stop watching"
        pthread_sigmask(SIG_BLOCK, &m_signals, nullptr);
        m_thread = std::thread([this, &run] {
            int signal = 0;
            while (sigwait(&m_signals, &signal) == 0 && signal != SIGUSR1)
                run.requestStop();
        });
    }
    ~InterruptWatcher()
    {
        pthread_kill(m_thread.native_handle(), SIGUSR1);
        m_thread.join();
    }
    InterruptWatcher(const InterruptWatcher &) = delete;
    InterruptWatcher &operator=(const InterruptWatcher &) = delete;

private:
    sigset_t m_signals{};
    std::thread m_thread;
};

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string error;
    const auto options = parseCommandLine(args, error);
    if (!options)
        return fail(error);
    if (options->help) {
        std::cout << usageText();
        return 0;
    }
    if (options->version) {
        std::cout << "taxicore-bench " << kBenchVersion << " (result schema " << kResultSchemaVersion << ")\n";
        return 0;
    }
    if (options->listScenarios) {
        std::cout << scenarioListText();
        return 0;
    }
    const auto target = Target::fromUrl(options->url, error);
    if (!target)
        return fail(error);
    const auto stages = makeStagePlans(*options, *target, error);
    if (!stages)
        return fail(error);
    std::optional<Target> recorder;
    if (!options->recordTo.empty() && !(recorder = Target::fromUrl(options->recordTo, error)))
        return fail("--record-to: " + error);
    for (const std::string &path : {options->jsonFile, options->csvFile}) {
        if (!canWrite(path))
            return fail("cannot write " + path);
    }
    int mostConnections = 0;
    for (const StagePlan &stage : *stages)
        mostConnections = std::max(mostConnections, stage.settings.connections);
    if (const std::string missing = ensureFileDescriptorsFor(mostConnections); !missing.empty())
        return fail(missing);
    if (const std::string unreachable = target->probe(kProbeTimeout); !unreachable.empty())
        return fail(unreachable);

    BenchmarkRun run(*target, *stages);
    RunResult result;
    {
        InterruptWatcher watcher(run);
        std::ostream &human = options->progress ? std::cerr : std::cout;
        result = run.run(
            [&](int index, const StagePlan &stage) {
                if (options->progress)
                    printLine(stageStartToJson(index, stage));
            },
            [&](int index, const SecondSample &sample) {
                if (options->progress)
                    printLine(progressToJson(index, run.stages()[static_cast<std::size_t>(index)].label, sample));
            });
        if (const auto scenario = findScenario(options->scenario)) {
            result.scenarioName = scenario->name;
            result.scenarioSource = scenario->source;
            result.scenarioDescription = scenario->description;
        }
        human << runHeaderText(result);
        for (const StageResult &stage : result.stages)
            human << stageSummaryText(stage);
        human.flush();
    }

    const QJsonObject json = runResultToJson(result, MachineInfo::current());
    int status = 0;
    if (!options->jsonFile.empty()
        && !writeFile(options->jsonFile, QJsonDocument(json).toJson(QJsonDocument::Indented)))
        status = fail("cannot write " + options->jsonFile, kExitOutputFailed);
    if (!options->csvFile.empty() && !writeFile(options->csvFile, QByteArray::fromStdString(seriesCsv(result))))
        status = fail("cannot write " + options->csvFile, kExitOutputFailed);
    if (recorder) {
        if (const std::string failed = recordRun(*recorder, json, options->recordToken, kRecordTimeout);
            !failed.empty())
            status = fail(failed, kExitOutputFailed);
    }
    if (options->progress)
        printLine(json);
    return status;
}
