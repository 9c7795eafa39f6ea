/**
 * Serves a folder from 127.0.0.1, cross-origin isolated (COOP/COEP: SharedArrayBuffer for the
 * cpu backend's workers; 127.0.0.1 is a secure context, so navigator.gpu exists). Plain Node,
 * no Trident imports: the H100 browser run (bench/h100/browser-run.ts) bundles it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.mjs': 'text/javascript',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.map': 'application/json',
};

/** Serves `dir` from 127.0.0.1 on a free port, cross-origin isolated, with any `extraHeaders`. */
export function serve(dir: string, extraHeaders: Readonly<Record<string, string>> = {}): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(join(dir, decodeURIComponent((req.url ?? '/').split('?')[0] as string)));
    const file = path.endsWith(sep) || path === dir ? join(path, 'index.html') : path;
    if (!file.startsWith(dir)) {
      res.writeHead(403).end();
      return;
    }
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      ...extraHeaders,
    });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/` });
    });
  });
}
