#pragma once

// The worker protocol: what the primary and its worker processes (`taxicore-server --worker`)
// agree on, in one place (the model is nginx's ngx_channel.h). A value here is read by both
// sides, or by a reader of the shared region (/admin/v1/workers, the console), so a copy kept
// anywhere else would drift. It lives in the bottom layer because the region's WorkerSlot holds
// a WorkerSlotState and every layer above may include it.
//
// Users: runtime/WorkerSupervisor (spawns, watches, drains), runtime/WorkerMain (the worker),
// runtime/WorkerChannel (the wire), runtime/ConnectionDispatcher (who gets a connection),
// runtime/PrimaryIoThread (slot 0, the in-process server), runtime/RuntimeController,
// runtime/ServerHost and http/AdminApi (runtime changes), app/console/server/WorkerListModel
// (the Workers panel).

#include <atomic>
#include <cstdint>

namespace taxicore {

// ---- Descriptors a worker inherits -------------------------------------------------------
// Between fork and exec the supervisor dup2()s the shared region and the worker's end of its
// channel onto these numbers; the worker attaches to them without any flag naming them. They
// are the first two after stdin/stdout/stderr, which the worker keeps (stderr is forwarded).
inline constexpr int kWorkerRegionFd = 3;
inline constexpr int kWorkerChannelFd = 4;
static_assert(kWorkerRegionFd > 2 && kWorkerChannelFd > 2 && kWorkerRegionFd != kWorkerChannelFd,
              "a worker keeps stdin, stdout and stderr");
// A child that cannot put them there (e.g. an open-file limit too low for the copies made on the
// way) writes why on stderr and exits with this code before exec (EX_OSERR), so the supervisor
// names the cause rather than whatever a worker without its region would say.
inline constexpr int kWorkerExitNoDescriptors = 71;

// ---- Timing ------------------------------------------------------------------------------
// Every serving process stamps WorkerSlot::heartbeatMs from its own event loop this often, so a
// stalled loop stops the stamp; loopLagUs is how much later than this a beat came.
inline constexpr int kWorkerHeartbeatMs = 100;
// The primary offers a connection only to a worker whose last beat is younger than this (five
// beats): an older one may be stopped, and what it holds would be lost when it is replaced.
inline constexpr int kWorkerStaleHeartbeatMs = 500;
// A serving worker silent this long is killed and respawned: the default of
// --heartbeat-timeout (ms), long enough for a busy loop or a swapped-out process to recover.
inline constexpr int kWorkerHeartbeatTimeoutMs = 10'000;
// A starting worker loads the city and opens the ledger before it says Serving; one that has
// not within this is killed (and counts as a crash).
inline constexpr int kWorkerStartTimeoutMs = 30'000;
// A draining worker finishes its open connections; after this it answers what it still owes
// (503 shutting_down) and quits on its own. The Drain message carries the time the primary gives
// (its `id`, in ms: this when it switches away from processes mode, its shutdown grace when it
// stops), so both sides count the same deadline.
inline constexpr int kWorkerDrainTimeoutMs = 10'000;
// The supervisor kills a draining worker only this long after that deadline: the worker writes
// its last answers first (ConnectionGuard::kLastAnswersMs) and exits. Killed at the deadline
// itself, a rider still owed an answer would have his connection closed without one.
inline constexpr int kWorkerExitAfterDrainMs = 1000;
// A switch to processes mode waits this long for every worker to say Serving, then goes on
// with those that do (runtime/RuntimeController).
inline constexpr int kAllWorkersReadyWaitMs = 3000;
// How long the asker of a runtime change (POST /admin/v1/runtime, the console) waits for the
// runtime controller's answer through the region's mailbox before it gives up.
inline constexpr int kRuntimeApplyTimeoutMs = 5000;

// ---- Load ----------------------------------------------------------------------------------
// The most connections one worker serves at once: the default of --worker-connections. A worker
// at it takes no new connection; the primary keeps the connection in its waiting queue (below)
// until a worker is under the bound again. A worker also declines (WorkerMessageType::Declined)
// past this absolute cap whatever the flag says.
inline constexpr int kMaxConnectionsPerWorker = 15'000;
// Connections the primary keeps waiting, oldest first, while every worker is at its bound. One
// more than this, or one that waited kMaxConnectionWaitMs, is served by the primary's own
// in-process server instead (it answers and closes): a client is never left hanging.
inline constexpr int kMaxWaitingConnections = 4096;
inline constexpr int kMaxConnectionWaitMs = 5000;
// While connections wait, how often the primary looks at the workers' open-connection counts in
// the region for room (a worker closing a connection sends no message).
inline constexpr int kWaitingPollMs = 2;

static_assert(kWorkerHeartbeatMs < kWorkerStaleHeartbeatMs,
              "a worker beating on time must never look stale to the dispatcher");
static_assert(kWorkerStaleHeartbeatMs < kWorkerHeartbeatTimeoutMs,
              "the dispatcher stops offering connections before the supervisor kills");
static_assert(kAllWorkersReadyWaitMs < kRuntimeApplyTimeoutMs,
              "a switch to processes mode is answered before its asker gives up");

// ---- Slot states (WorkerSlot::state in region/RegionLayout.h) ------------------------------
// Stored in shared memory and read by other processes, so the numbers are fixed: never
// renumber, only append (and give the new state a name below).
enum class WorkerSlotState : uint32_t {
    Unused = 0,   // never used in this run (the region starts zeroed)
    Starting = 1, // the supervisor spawned the process; it has not said Serving yet
    Serving = 2,  // its event loop runs and takes connections
    Draining = 3, // told to drain: finishes its connections, takes no new ones
    Exited = 4,   // gone (drained, crashed or killed); the slot may be reused by a respawn
};
inline constexpr uint32_t kWorkerSlotStateCount = 5;
static_assert(std::atomic<WorkerSlotState>::is_always_lock_free, "shared memory needs lock-free atomics");

// The name /admin/v1/workers and the console's Workers panel show (part of the HTTP API). A
// value no version writes reads as "exited", as /admin/v1/workers always did.
constexpr const char *workerSlotStateName(WorkerSlotState state)
{
    switch (state) { // no default: a new state without a name is a -Wswitch error
    case WorkerSlotState::Unused:
        return "unused";
    case WorkerSlotState::Starting:
        return "starting";
    case WorkerSlotState::Serving:
        return "serving";
    case WorkerSlotState::Draining:
        return "draining";
    case WorkerSlotState::Exited:
        return "exited";
    }
    return "exited";
}

// A process that may still hold a pid worth listing or killing.
constexpr bool isLiveWorkerSlotState(WorkerSlotState state)
{
    return state != WorkerSlotState::Unused && state != WorkerSlotState::Exited;
}

// ---- Channel messages (runtime/WorkerChannel) ----------------------------------------------
// One message per SEQPACKET datagram on the primary–worker channel (a socketpair), with at
// most one descriptor attached by SCM_RIGHTS. The numbers are on the wire between two copies of
// the same binary; they are fixed anyway so a trace stays readable: never renumber.
enum class WorkerMessageType : uint32_t {
    Connection = 1,    // primary → worker: serve this accepted connection (fd), answer with `id`
    Declined = 2,      // worker → primary: give connection `id` to someone else (no fd)
    Listen = 3,        // primary → worker: accept on this listening socket yourself (fd)
    StopListening = 4, // primary → worker: stop accepting on your listening socket
    Drain = 5,         // primary → worker: finish what you have within `id` ms, then exit
    Adopted = 6,       // worker → primary: connection `id` is mine now, drop your copy (no fd)
};

// The bytes of one message: three native-endian words (both ends are one machine). A datagram
// of any other size is not a message.
struct WorkerMessageWire {
    uint32_t type;  // WorkerMessageType
    uint32_t hasFd; // 1 when an SCM_RIGHTS descriptor rides along
    uint32_t id;    // which passed connection a Connection / Adopted / Declined is about
};
static_assert(sizeof(WorkerMessageWire) == 12, "the channel's datagram size is part of the protocol");

} // namespace taxicore
