// Shared start-up of the peers: parses --port and --cluster, forks workers when asked, and
// prints one "listening on http://127.0.0.1:PORT" line when the server (or every worker) is up.
'use strict';
const cluster = require('node:cluster');

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 && at + 1 < process.argv.length ? Number(process.argv[at + 1]) : fallback;
}

function startServer(listen) {
  const port = option('--port', 0);
  const workers = option('--cluster', 0);
  if (workers > 0 && cluster.isPrimary) {
    // Workers must share one port: pick it first when asked for "any free port".
    const probe = require('node:net').createServer();
    probe.listen(port, '127.0.0.1', () => {
      const chosen = probe.address().port;
      probe.close(() => {
        let ready = 0;
        for (let i = 0; i < workers; i++) cluster.fork({ PEER_PORT: String(chosen) });
        cluster.on('message', (worker, message) => {
          if (message === 'listening' && ++ready === workers) console.log(`listening on http://127.0.0.1:${chosen}`);
        });
      });
    });
    return;
  }
  const workerPort = process.env.PEER_PORT ? Number(process.env.PEER_PORT) : port;
  listen(workerPort, (actualPort) => {
    if (cluster.isWorker) process.send('listening');
    else console.log(`listening on http://127.0.0.1:${actualPort}`);
  });
}

module.exports = { startServer };
