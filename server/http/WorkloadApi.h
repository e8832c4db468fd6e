#pragma once

namespace taxicore {

class RouteTable;

// The seed experiments' workloads: /hello (Node's hello world), /fib?n= (the loadtest and
// autocannon write-ups' recursive Fibonacci) and /cpu (the cluster article's 8^7 loop).
void registerWorkloadRoutes(RouteTable &router);

// Exposed for tests and benchmarks.
unsigned long long fibonacci(int n);
double cpuLoop();

} // namespace taxicore
