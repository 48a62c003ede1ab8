/**
 * Locating the package's own files from either the compiled layout
 * (`dist/src/...`) or the sources (`src/...`, under ts-jest).
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

/** The nearest directory at or above `from` that holds a package.json, or null. */
export function findPackageRoot(from: string = __dirname): string | null {
  let dir = path.resolve(from);
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The compiled script `<name>.js` of a worker thread that lives beside the
 * caller (`callerDir`, the caller's `__dirname`): the file itself when the
 * caller runs compiled, else its copy under `<package root>/dist/src/...`
 * when the caller runs as TypeScript (ts-jest; `npm test` builds dist
 * first). Null when neither exists: the caller then does the work on its
 * own thread.
 */
export function workerScript(callerDir: string, name: string): string | null {
  const beside = path.join(callerDir, `${name}.js`);
  if (existsSync(beside)) return beside;
  const root = findPackageRoot(callerDir);
  if (!root) return null;
  const rel = path.relative(path.join(root, 'src'), callerDir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const compiled = path.join(root, 'dist', 'src', rel, `${name}.js`);
  return existsSync(compiled) ? compiled : null;
}
