// The image's HEALTHCHECK: GET /healthz on the server in this container. It runs inside the
// container, so it asks the loopback address on the port serve uses when none is configured
// in a file (LMGATE_PORT, then PORT, then 8080), over TLS when LMGATE_TLS_CERT is set (the
// certificate names the public host, not 127.0.0.1, so it is not verified here).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

const port = Number(process.env.LMGATE_PORT || process.env.PORT || 8080);
const request = process.env.LMGATE_TLS_CERT ? httpsRequest : httpRequest;
const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 2_000, rejectUnauthorized: false }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
req.on('error', (err) => {
  console.error(`healthcheck: ${err.message}`);
  process.exit(1);
});
req.end();
