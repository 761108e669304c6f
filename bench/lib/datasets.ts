import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR } from './paths.js';

// Text rules here and in bench/python/embed.py must agree byte for byte: vectors are looked up by text.
const stripWs = (s: string): string => s.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

export interface SciFactDoc {
  id: string;
  title: string;
  /** title + " " + abstract (BEIR's sentence-transformers convention): what is indexed and embedded. */
  text: string;
}
export interface SciFactQuery {
  id: string;
  text: string;
}
export interface SciFact {
  corpus: SciFactDoc[];
  queries: SciFactQuery[];
  /** query id → relevant corpus ids (all judgements are relevance 1). */
  qrels: Map<string, Map<string, number>>;
}

/** BEIR SciFact corpus and train split, read from ../shared/data/scifact. */
export function loadSciFact(dataDir = DATA_DIR): SciFact {
  const dir = join(dataDir, 'scifact');
  const corpus = readJsonl<{ _id: string; title: string; text: string }>(join(dir, 'corpus.jsonl')).map((d) => ({
    id: d._id,
    title: d.title,
    text: stripWs(`${d.title} ${d.text}`),
  }));
  const qrels = new Map<string, Map<string, number>>();
  const lines = readFileSync(join(dir, 'qrels.train.tsv'), 'utf8').split('\n').slice(1);
  for (const line of lines) {
    if (!line.trim()) continue;
    const [qid, docId, score] = line.split('\t');
    if (!qid || !docId) continue;
    const grades = qrels.get(qid) ?? new Map<string, number>();
    grades.set(docId, Number(score));
    qrels.set(qid, grades);
  }
  // BEIR evaluates only queries that have judgements.
  const queries = readJsonl<{ _id: string; text: string }>(join(dir, 'queries.train.jsonl'))
    .filter((q) => qrels.has(q._id))
    .map((q) => ({ id: q._id, text: q.text }));
  return { corpus, queries, qrels };
}

export interface HotpotParagraph {
  /** Unique within the question: `p<i>` for context paragraphs, `c<i>` for supporting-fact chunks. */
  id: string;
  title: string;
  text: string;
  /** True for a gold (supporting) paragraph or its retrieval chunk. */
  gold: boolean;
  /** The gold title this item stands for (both a gold paragraph and its chunk carry it); null for distractors. */
  goldTitle: string | null;
  kind: 'paragraph' | 'chunk';
}
export interface HotpotQuestion {
  id: string;
  question: string;
  answer: string;
  type: string;
  goldTitles: string[];
  items: HotpotParagraph[];
  /** The supporting facts' sentences, as the context paragraphs hold them (stripped). */
  supportingSentences: string[];
}

/** HotpotQA distractor dev sample: per question 10 context paragraphs plus the gold paragraphs' near-duplicate chunks. */
export function loadHotpot(dataDir = DATA_DIR): HotpotQuestion[] {
  type Row = {
    _id: string;
    question: string;
    answer: string;
    type: string;
    context: [string, string[]][];
    supporting_facts: [string, number[], string[], { id: string; title: string; text: string } | null][];
  };
  return readJsonl<Row>(join(dataDir, 'hotpotqa_amor_dev', 'dev.jsonl')).map((row) => {
    const goldTitles = [...new Set(row.supporting_facts.map((f) => f[0]))];
    const items: HotpotParagraph[] = row.context.map(([title, sentences], i) => ({
      id: `p${i}`,
      title,
      text: sentences
        .map(stripWs)
        .filter((s) => s.length > 0)
        .join(' '),
      gold: goldTitles.includes(title),
      goldTitle: goldTitles.includes(title) ? title : null,
      kind: 'paragraph' as const,
    }));
    row.supporting_facts.forEach(([title, , , chunk], i) => {
      // 21 of the 200 gold paragraphs have no retrieval chunk (179 near-duplicate pairs).
      if (chunk === null) return;
      items.push({ id: `c${i}`, title: chunk.title, text: chunk.text, gold: true, goldTitle: title, kind: 'chunk' });
    });
    const supportingSentences: string[] = [];
    for (const [title, ids] of row.supporting_facts) {
      const paragraph = row.context.find(([t]) => t === title)?.[1] ?? [];
      for (const id of ids) {
        const sentence = stripWs(paragraph[id] ?? '');
        if (sentence.length > 0) supportingSentences.push(sentence);
      }
    }
    return { id: row._id, question: row.question, answer: row.answer, type: row.type, goldTitles, items, supportingSentences };
  });
}
