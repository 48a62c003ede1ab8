// Extract the text of a PDF with pdf-parse (Mozilla's pdf.js) in a plain Node
// process: pdf.js loads its worker by dynamic import, which Jest's module VM
// refuses. Usage: node test/helpers/pdf-text.cjs FILE -> {"text": ..., "pages": n, "page_texts": [...]}
const { readFileSync } = require('node:fs');
const { PDFParse } = require('pdf-parse');

(async () => {
  const parser = new PDFParse({ data: new Uint8Array(readFileSync(process.argv[2])) });
  try {
    const r = await parser.getText();
    process.stdout.write(JSON.stringify({ text: r.text, pages: r.total, page_texts: r.pages.map((p) => p.text) }));
  } finally {
    await parser.destroy();
  }
})().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e));
  process.exit(2);
});
