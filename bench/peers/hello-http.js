// The seed "hello world" server: Node.js core http, one event loop, no framework.
// Usage: node hello-http.js [--port N] [--cluster N]   (port 0 picks a free one)
// Prints "listening on http://127.0.0.1:PORT" as its first line, like taxicore-server.
'use strict';
const http = require('node:http');
const { startServer } = require('./start-server');

startServer((port, onListening) => {
  const server = http.createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/plain' });
    response.end('Hello World\n');
  });
  server.listen(port, '127.0.0.1', () => onListening(server.address().port));
});
