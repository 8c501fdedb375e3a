// The floor for any Node gateway: node:http in, node:http out over keep-alive, bytes piped
// both ways, nothing parsed. lmgate's added latency and CPU are read against this one.
import { createServer, request, Agent } from 'node:http';

const upstream = new URL(process.argv[2] ?? 'http://127.0.0.1:9000');
const port = Number(process.argv[3] ?? 0);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

createServer((req, res) => {
  const forward = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => {
    res.statusCode = 502;
    res.end();
  });
  req.pipe(forward);
}).listen(port, '127.0.0.1', function (this: import('node:net').Server) {
  const address = this.address() as import('node:net').AddressInfo;
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
