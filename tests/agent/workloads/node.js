// An agent's Node.js: fs, child_process, worker_threads, http over loopback.
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const { execFileSync } = require('child_process');
const { Worker } = require('worker_threads');

const d = fs.mkdtempSync(path.join(os.tmpdir(), 'node-'));
fs.writeFileSync(path.join(d, 'f'), 'data');
if (fs.readFileSync(path.join(d, 'f'), 'utf8') !== 'data') throw new Error('fs');
fs.rmSync(d, { recursive: true });
if (execFileSync('sh', ['-c', 'echo child']).toString() !== 'child\n') throw new Error('child');
const w = new Worker('require("worker_threads").parentPort.postMessage(6*7)', { eval: true });
w.on('message', (m) => {
  if (m !== 42) throw new Error('worker');
  const srv = http.createServer((req, res) => res.end('pong'));
  srv.listen(0, '127.0.0.1', () => {
    http.get({ host: '127.0.0.1', port: srv.address().port }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (body !== 'pong') throw new Error('http');
        srv.close();
        console.log('node ok');
      });
    });
  });
});
