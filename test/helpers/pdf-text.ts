/** The text of a PDF, extracted by pdf-parse in a child process (see pdf-text.cjs): it must open. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * `text` has every run of white space (line breaks included) as one space, so
 * assertions do not depend on where lines wrap; `raw` is as extracted;
 * `page_lines` the non-empty lines of each page, in the order drawn (the
 * coverage PDF's footer, drawn last, is a page's last line).
 */
export async function pdfTextOf(bytes: Buffer): Promise<{ text: string; raw: string; pages: number; page_lines: string[][] }> {
  const file = join(mkdtempSync(join(tmpdir(), 'aer1-pdf-')), 'doc.pdf');
  writeFileSync(file, bytes);
  const { stdout } = await promisify(execFile)(process.execPath, [join(__dirname, 'pdf-text.cjs'), file], { maxBuffer: 64 * 1024 * 1024 });
  const r = JSON.parse(stdout) as { text: string; pages: number; page_texts: string[] };
  const page_lines = r.page_texts.map((t) => t.split('\n').map((l) => l.trim()).filter((l) => l !== ''));
  return { text: r.text.replace(/\s+/g, ' '), raw: r.text, pages: r.pages, page_lines };
}
