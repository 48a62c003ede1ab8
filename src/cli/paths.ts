/**
 * Locating files shipped with the package (the default conformance corpus),
 * from either the compiled layout (`dist/src/cli/`) or the sources
 * (`src/cli/`, under ts-jest).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { findPackageRoot } from '../common/package-root';

export { findPackageRoot };

/** The project's byte-identical copy of the shared corpus: `<package root>/test/vectors/aer1-public/aer1-vectors.json`. */
export function defaultCorpusPath(): string {
  const root = findPackageRoot();
  return root ? path.join(root, 'test', 'vectors', 'aer1-public', 'aer1-vectors.json') : path.resolve(__dirname, '../../../test/vectors/aer1-public/aer1-vectors.json');
}

/** The package version, or `0.0.0` when package.json cannot be read. */
export function packageVersion(): string {
  const root = findPackageRoot();
  if (!root) return '0.0.0';
  try {
    const pkg: unknown = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    const v = typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
    return typeof v === 'string' ? v : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
