#pragma once
// Include once, in the one source file of a test binary whose own QWebSocket clients are destroyed.
//
// Under make test-asan: Qt WebSockets 6.4 leaks a QString inside ~QWebSocket (the test's client,
// never the server). lsan.supp names that frame, but LeakSanitizer's fast unwinder stops at Qt's
// frames (built without frame pointers) and never sees it; the slow unwinder does. Asked for here,
// in the test binary only (ASAN_OPTIONS still wins): through the environment the taxicore-server
// the test starts would inherit it too, and every allocation of its start-up paid for a full
// unwind (it then missed the 10 s `listening on` deadline on a loaded machine).
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char *__asan_default_options()
{
    return "fast_unwind_on_malloc=0";
}
#endif
