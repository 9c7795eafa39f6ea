// @ts-check
/**
 * Copies the `// #region name` … `// #endregion name` blocks of docs/snippets/*.ts into
 * the ```ts fences that follow `<!-- snippet: file.ts#name -->` markers in docs/*.md.
 * The snippet files are type-checked (npm run check) and run (test/docs-snippets.test.ts);
 * test/docs-snippets.node.test.ts fails when a doc is out of step with them.
 *
 *   node scripts/sync-doc-snippets.mjs          rewrite the docs
 *   node scripts/sync-doc-snippets.mjs --check  exit 1 and name the stale snippets instead
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const MARKER = /<!-- snippet: ([\w.-]+)#([\w-]+) -->\n```ts\n[\s\S]*?\n```/g;

/**
 * The text of region `name` of docs/snippets/`file`, without the region lines.
 * @param {string} file
 * @param {string} name
 * @returns {string}
 */
export function region(file, name) {
  const source = readFileSync(`${DOCS}snippets/${file}`, 'utf8');
  const start = source.indexOf(`// #region ${name}\n`);
  const end = source.indexOf(`// #endregion ${name}\n`);
  if (start < 0 || end < start) throw new Error(`docs/snippets/${file} has no region '${name}'`);
  return source.slice(start + `// #region ${name}\n`.length, end).trimEnd();
}

/**
 * Each doc with its snippet fences refreshed, and the snippets that were stale.
 * @returns {Array<{ path: string, old: string, text: string, stale: string[] }>}
 */
export function syncedDocs() {
  return readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => {
      const path = `${DOCS}${f}`;
      const old = readFileSync(path, 'utf8');
      /** @type {string[]} */
      const stale = [];
      const text = old.replace(MARKER, (/** @type {string} */ block, /** @type {string} */ file, /** @type {string} */ name) => {
        const fresh = `<!-- snippet: ${file}#${name} -->\n\`\`\`ts\n${region(file, name)}\n\`\`\``;
        if (fresh !== block) stale.push(`${f}: ${file}#${name}`);
        return fresh;
      });
      return { path, old, text, stale };
    });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  /** @type {string[]} */
  const stale = [];
  for (const doc of syncedDocs()) {
    stale.push(...doc.stale);
    if (!check && doc.text !== doc.old) writeFileSync(doc.path, doc.text);
  }
  if (check && stale.length > 0) {
    console.error(`stale doc snippets (run node scripts/sync-doc-snippets.mjs):\n  ${stale.join('\n  ')}`);
    process.exitCode = 1;
  } else if (!check) console.log(stale.length > 0 ? `updated: ${stale.join(', ')}` : 'doc snippets up to date');
}
