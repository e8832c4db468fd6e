// The seed Express server: /hello, the naive /fib?n= and the CPU loop /cpu, as the write-ups
// measured them. Single process by default; --cluster N forks N workers (Node.js cluster).
// Usage: node express-app.js [--port N] [--cluster N]
'use strict';
const express = require('express');
const { startServer } = require('./start-server');

const MAX_FIB = 45;
const CPU_LOOP_ITERATIONS = 2097152; // 8^7, as in the cluster write-up and TaxiCore's /cpu

function fibonacci(n) {
  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

function cpuLoop() {
  let total = 0;
  for (let i = 0; i < CPU_LOOP_ITERATIONS; i++) total += Math.pow(i, 7);
  return total;
}

startServer((port, onListening) => {
  const app = express();
  app.get('/hello', (request, response) => response.type('text/plain').send('Hello World\n'));
  app.get('/fib', (request, response) => {
    const n = Number(request.query.n ?? request.query.num ?? 0);
    if (!Number.isInteger(n) || n < 0 || n > MAX_FIB) {
      response.status(400).json({ error: 'bad_n' });
      return;
    }
    response.json({ n, fib: fibonacci(n) });
  });
  app.get('/cpu', (request, response) => response.json({ iterations: CPU_LOOP_ITERATIONS, result: cpuLoop() }));
  const server = app.listen(port, '127.0.0.1', () => onListening(server.address().port));
});
