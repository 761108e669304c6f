/**
 * An agent host's view of `litm-pack mcp`: the MCP SDK's client starts the server on stdio (as Claude Desktop,
 * Cursor or any MCP host does from its configuration), lists the tools, asks for a cited bundle and routes on
 * its confidence, then asks for a plain RAG context, shows what a host that reads only text sees, and asks for
 * the served citations gone stale. Runs offline on examples/corpus.
 *
 *   npx tsx examples/mcp-client.ts ["your question"]
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryHybridStore, PackSchema } from '../src/index.js';
import { RagContextSchema } from '../src/server/index.js';

const question = process.argv[2] ?? 'Why should the best passage come first and the second best last?';

// 1. A store on disk, as `litm-pack ingest examples/corpus --store DIR` would write it.
const work = await mkdtemp(join(tmpdir(), 'litm-mcp-example-'));
const storeDir = join(work, 'store');
const corpus = join(import.meta.dirname, 'corpus');
const store = new MemoryHybridStore();
const files = (await readdir(corpus)).filter((file) => file.endsWith('.md') && file !== 'README.md').sort();
await store.addDocuments(await Promise.all(files.map(async (file) => ({ id: file, text: await readFile(join(corpus, file), 'utf8') }))));
await mkdir(storeDir);
await store.save(join(storeDir, 'store.json'));

// 2. The server, started the way a host's configuration starts it: { "command": "npx", "args": ["litm-pack", "mcp", "--store", DIR] }.
//    Here: the built CLI when there is one (npm run build), else the sources.
const built = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const args = existsSync(built) ? [built] : ['--import', 'tsx', fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))];
const client = new Client({ name: 'example-host', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [...args, 'mcp', '--store', storeDir] }));

try {
  const { tools } = await client.listTools();
  console.log(`Tools: ${tools.map((tool) => tool.name).join(', ')}\n`);

  // 3. A cited bundle; the structured content is the whole pack.
  const bundle = (await client.callTool({
    name: 'assemble_bundle',
    arguments: { query: question, budget: 500, mode: 'lexical' },
  })) as CallToolResult;
  if (bundle.isError) throw new Error(`assemble_bundle failed: ${JSON.stringify(bundle.content)}`);
  const pack = PackSchema.parse(bundle.structuredContent);
  console.log(`Question: ${question}\n`);
  console.log(pack.context);
  console.log(
    `\n${pack.items.length} items, ${pack.budget.usedTokens}/${pack.budget.maxTokens} tokens, confidence ${pack.coverage.confidence}`,
  );
  for (const citation of pack.citations) console.log(`  [${citation.ref}] ${citation.sourceId} sha256:${citation.textSha256.slice(0, 12)}`);

  // 4. Routing on confidence, as the tool description tells an agent to.
  const route = {
    strong: 'answer from the context, citing [n]',
    partial: 'widen the search or ask the user',
    weak: 'widen the search or ask the user',
    unknown: 'no dense similarity (lexical only): judge the passages before answering',
  }[pack.coverage.confidence];
  console.log(`Route: ${route}\n`);

  // 5. One call for a RAG prompt: exactly { context, hits, token_estimate, truncated }.
  const rag = (await client.callTool({
    name: 'get_rag_context',
    arguments: { query: 'BM25 term saturation', max_tokens: 200 },
  })) as CallToolResult;
  if (rag.isError) throw new Error(`get_rag_context failed: ${JSON.stringify(rag.content)}`);
  const context = RagContextSchema.parse(rag.structuredContent);
  console.log(`get_rag_context: ${context.hits.length} hits, ${context.token_estimate} tokens, truncated ${context.truncated}`);
  if (pack.items.length === 0 || context.hits.length === 0) throw new Error('expected items from the example corpus');

  // 6. A host that shows the model only text still gives it the decision: the text block ends with a
  //    "litm-pack:" line (confidence, top similarity, items, tokens, truncated) and the citation list.
  const text = bundle.content.find((block) => block.type === 'text');
  const trailer = text?.type === 'text' ? text.text.slice(text.text.lastIndexOf('\n---\n') + 5) : '';
  console.log(`\nWhat a text-only host shows after the context:\n${trailer}`);
  if (!trailer.startsWith('litm-pack: confidence ')) throw new Error('expected the decision trailer in the text content');

  // 7. The server keeps a ledger of what it served (beside the store): the citations gone stale since.
  const stale = (await client.callTool({ name: 'list_stale_citations', arguments: {} })) as CallToolResult;
  console.log(`\nlist_stale_citations: ${JSON.stringify(stale.structuredContent)}`);
} finally {
  await client.close();
  await rm(work, { recursive: true, force: true });
}
