import { PDFDocument, StandardFonts } from 'pdf-lib';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { writeFileSync, mkdirSync } from 'node:fs';
const dir = '/tmp/mix/corpus'; mkdirSync(dir, { recursive: true });
const doc = await PDFDocument.create(); doc.setTitle('Operations manual');
const font = await doc.embedFont(StandardFonts.Helvetica);
for (let i = 1; i <= 3; i++) { const p = doc.addPage(); p.drawText(`Chapter ${i}`, { x: 50, y: 700, size: 18, font }); p.drawText(`Refunds on page ${i} take ${i*5} days.`, { x: 50, y: 650, size: 12, font }); p.drawText('A second line.', { x: 50, y: 635, size: 12, font }); }
writeFileSync(`${dir}/manual.pdf`, await doc.save());
const mail = new MailComposer({ from: 'Alice <alice@acme.com>', to: 'you@example.com', subject: 'Contract renewal', date: new Date('2024-03-15T10:00:00Z'), messageId: '<abc123@acme.com>', text: 'Hi,\n\nthe renewal terms are attached.\n\nAlice', attachments: [{ filename: 'terms.txt', content: 'Renewal is for 24 months.\nPrice rises 3%.' }] });
writeFileSync(`${dir}/renewal.eml`, await new Promise<Buffer>((res, rej) => mail.compile().build((e, m) => e ? rej(e) : res(m))));
writeFileSync(`${dir}/talk.vtt`, 'WEBVTT - Episode 12\n\n00:01:00.000 --> 00:01:03.000\n<v Ann>Welcome back.\n\n00:01:03.000 --> 00:01:05.000\nToday: retries.\n');
writeFileSync(`${dir}/retry.ts`, `import { sleep } from './sleep';\n\nconst BASE = 100;\n\n/** Backoff for attempt n. */\nexport function computeBackoff(n: number): number {\n  return BASE * 2 ** n;\n}\n\nexport class CircuitBreaker {\n  private failures = 0;\n  /** Records an outcome. */\n  record(ok: boolean) {\n    this.failures = ok ? 0 : this.failures + 1;\n  }\n  reset() { this.failures = 0; }\n}\n`);
writeFileSync(`${dir}/page.html`, '<html><head><title>Runbook</title><script>x()</script></head><body><nav>Home | About</nav><main><h1>Deploys</h1><p>Deploy on Tuesdays &amp; never Fridays.</p><h2>Rollback</h2><p>Run <code>make rollback</code>.</p></main><footer>© 2024</footer></body></html>');
writeFileSync(`${dir}/tickets.jsonl`, '{"id":"T-1","text":"Printer on fire","title":"Printer"}\n{"id":"T-2","body":"no text"}\nnot json\n');
