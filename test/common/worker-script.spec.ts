import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPackageRoot, workerScript } from '../../src/common/package-root';

describe('workerScript', () => {
  const root = mkdtempSync(join(tmpdir(), 'worker-script-'));
  writeFileSync(join(root, 'package.json'), '{}');
  mkdirSync(join(root, 'src', 'log'), { recursive: true });
  mkdirSync(join(root, 'dist', 'src', 'log'), { recursive: true });
  writeFileSync(join(root, 'dist', 'src', 'log', 'w.js'), '');

  it('finds the package root above a folder', () => {
    expect(findPackageRoot(join(root, 'src', 'log'))).toBe(root);
  });

  it('takes the compiled script beside a compiled caller', () => {
    expect(workerScript(join(root, 'dist', 'src', 'log'), 'w')).toBe(join(root, 'dist', 'src', 'log', 'w.js'));
  });

  it('takes the compiled copy under dist/src for a caller running from src', () => {
    expect(workerScript(join(root, 'src', 'log'), 'w')).toBe(join(root, 'dist', 'src', 'log', 'w.js'));
  });

  it('answers null when no compiled script exists', () => {
    expect(workerScript(join(root, 'src', 'log'), 'absent')).toBeNull();
    expect(workerScript(join(root, 'elsewhere'), 'w')).toBeNull();
  });
});
