// A reverse proxy in front of a taxicore-server that sends the server its own host:port as Host,
// as nginx does unless told otherwise (proxy_set_header Host $proxy_host). The page keeps the
// proxy's origin, so the live feed sees an Origin that is not its host and refuses the client
// right after the handshake (close 1008): a real refused feed. It counts what passes.
import http from 'node:http';
import net from 'node:net';

export function startHostRewritingProxy(upstream) {
  const target = new URL(upstream);
  const seen = { handshakes: [], requests: [] }; // {at: ms, url} each
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    seen.requests.push({ at: Date.now(), method: req.method, url: req.url });
    const forward = http.request({
      host: target.hostname, port: target.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: target.host },
    }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // A WebSocket upgrade: the request head as it came, but for Host; then bytes both ways.
  server.on('upgrade', (req, client, head) => {
    seen.handshakes.push({ at: Date.now(), url: req.url });
    const up = net.connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i];
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]}`);
      }
      up.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}`,
      seen,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    }));
  });
}
