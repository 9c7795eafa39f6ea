/**
 * A static file server for built test pages (test/consumer.node.test.ts,
 * test/examples-page.node.test.ts): cross-origin isolated, as the CPU backend's
 * SharedArrayBuffers need, with optional extra headers per path.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };

export interface StaticServer {
  readonly origin: string;
  close(): Promise<void>;
}

export async function serveStatic(
  root: string,
  extraHeaders: (path: string) => Record<string, string> = () => ({}),
): Promise<StaticServer> {
  const server: Server = createServer((req, res) => {
    const path = join(root, normalize(new URL(req.url ?? '/', 'http://localhost').pathname));
    let body: Buffer;
    try {
      body = readFileSync(path);
    } catch {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, {
        'content-type': CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
        ...extraHeaders(path),
      })
      .end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
