/**
 * The source-code loader: chunks at definition boundaries, found by tree-sitter (`web-tree-sitter` with the
 * WASM grammars of `tree-sitter-wasms`, optional dependencies loaded on the first code file: no native
 * build). TypeScript/TSX, JavaScript, Python, Go, Rust and Java are parsed; each top-level definition
 * (function, class, interface, type, enum, impl, module) with its doc comment is one region, with its symbol
 * path as the section (`CircuitBreaker`, a method `CircuitBreaker.record`, a Go method `Breaker.Record`) and
 * exact line numbers. A definition too long for one chunk is split by member; tiny neighbouring definitions (one-line
 * functions) share a region until it is `MIN_DEFINITION_CHARS` long, named after all of them. Code that defines nothing
 * (imports, constants, statements) joins the definition after it (or, at the end of a file, the one before).
 * Other languages, files without definitions and files of a parsed language when the grammars are not
 * installed are chunked by lines (blank-line-separated blocks merged up to the bound), with line numbers too.
 * The document's text is the file's text, so spans and lines are the file's own.
 */
import { createRequire } from 'node:module';
import { lineOf, lineStarts } from '../store/regions.js';
import type { IngestDocument, Region } from '../store/schemas.js';
import { fileTitle, isMissingModule, reasonOf } from './common.js';
import type { Loader, LoaderResult } from './loader.js';
import { decodeText, notText } from './text.js';
import { sha256Hex } from '../base/canonical.js';

// The few web-tree-sitter shapes used here (its types are not needed to build without the optional package).
interface SyntaxNode {
  type: string;
  startIndex: number;
  endIndex: number;
  text: string;
  namedChildren: SyntaxNode[];
  childForFieldName(name: string): SyntaxNode | null;
}
interface Tree {
  rootNode: SyntaxNode;
  delete(): void;
}
interface ParserLike {
  setLanguage(language: unknown): void;
  parse(text: string): Tree | null;
  delete(): void;
}
interface TreeSitter {
  Parser: { init(): Promise<void>; new (): ParserLike };
  Language: { load(path: string): Promise<unknown> };
}

/** The grammar of each parsed extension (file names in tree-sitter-wasms/out/). */
const GRAMMARS: Readonly<Record<string, string>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
};

/** Read by lines only (no grammar wired in): source files of other languages, scripts and build files. */
const LINE_BASED = [
  '.c',
  '.h',
  '.cc',
  '.cpp',
  '.cxx',
  '.hpp',
  '.hh',
  '.cs',
  '.rb',
  '.php',
  '.kt',
  '.kts',
  '.swift',
  '.scala',
  '.sh',
  '.bash',
  '.zsh',
  '.lua',
  '.sql',
  '.r',
  '.pl',
  '.ex',
  '.exs',
  '.erl',
  '.dart',
  '.clj',
  '.hs',
  '.ml',
  '.fs',
  '.groovy',
  '.gradle',
  '.ps1',
  '.vue',
  '.svelte',
];

/** The language a grammar is for, as its definitions are found. */
type Family = 'ecmascript' | 'python' | 'go' | 'rust' | 'java';
const FAMILY: Readonly<Record<string, Family>> = {
  typescript: 'ecmascript',
  tsx: 'ecmascript',
  javascript: 'ecmascript',
  python: 'python',
  go: 'go',
  rust: 'rust',
  java: 'java',
};

let treeSitter: Promise<TreeSitter> | undefined;
const languages = new Map<string, Promise<unknown>>();
const requireHere = createRequire(import.meta.url);

/** web-tree-sitter, initialised on the first code file (its runtime is a WASM module of its own). */
function loadTreeSitter(): Promise<TreeSitter> {
  treeSitter ??= (async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- a non-literal specifier: the optional dependency is found at run time, not resolved by tsc or a bundler
    const lib = (await import(/* @vite-ignore */ 'web-tree-sitter' as string)) as TreeSitter;
    await lib.Parser.init();
    return lib;
  })().catch((error: unknown) => {
    treeSitter = undefined;
    throw error;
  });
  return treeSitter;
}

/** A grammar, loaded once per process from the installed tree-sitter-wasms package. */
function loadLanguage(lib: TreeSitter, grammar: string): Promise<unknown> {
  let language = languages.get(grammar);
  if (language === undefined) {
    language = (async () => lib.Language.load(requireHere.resolve(`tree-sitter-wasms/out/tree-sitter-${grammar}.wasm`)))();
    language.catch(() => languages.delete(grammar));
    languages.set(grammar, language);
  }
  return language;
}

const isComment = (node: SyntaxNode) => node.type.includes('comment');
/** Lines that, like comments, belong to the definition below them (Rust attributes, Java annotations at top level). */
const isPrefix = (node: SyntaxNode) => isComment(node) || node.type === 'attribute_item' || node.type === 'inner_attribute_item';

interface Definition {
  /** The symbol's name (a method's without its owner). */
  name: string;
  /** Members a long definition is split at (methods, constructors, nested types), in order. */
  members: { node: SyntaxNode; name: string; siblings: SyntaxNode[] }[];
}

function nameOf(node: SyntaxNode | null): string | undefined {
  if (node === null) return undefined;
  const name = node.childForFieldName('name');
  return name === null ? undefined : name.text;
}

/** A type's name without generics or pointers (`*Breaker` → `Breaker`, `Cache<K, V>` → `Cache`). */
function typeName(node: SyntaxNode | null): string | undefined {
  if (node === null) return undefined;
  const text = node.text.replace(/^[*&\s]+|mut\s+/gu, '');
  return /[A-Za-z_$][\w$]*/u.exec(text.replace(/<[\s\S]*$/u, ''))?.[0];
}

const ECMA_FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function', 'class']);
const ECMA_DEFINITIONS = new Set([
  'function_declaration',
  'generator_function_declaration',
  'function_signature',
  'class_declaration',
  'abstract_class_declaration',
  'interface_declaration',
  'type_alias_declaration',
  'enum_declaration',
  'internal_module',
  'module',
]);
const ECMA_MEMBERS = new Set(['method_definition', 'method_signature', 'abstract_method_signature', 'class_declaration']);

function membersOf(body: SyntaxNode | null, callable: (node: SyntaxNode) => boolean, name: (node: SyntaxNode) => string | undefined) {
  if (body === null) return [];
  const siblings = body.namedChildren;
  return siblings.filter(callable).map((node) => ({ node, name: name(node) ?? node.type, siblings }));
}

/** The definition a top-level node makes, or undefined for code that defines nothing. */
function definitionOf(node: SyntaxNode, family: Family): Definition | undefined {
  switch (family) {
    case 'ecmascript': {
      if (node.type === 'export_statement') {
        const inner =
          node.childForFieldName('declaration') ??
          node.namedChildren.find((child) => ECMA_DEFINITIONS.has(child.type) || ECMA_FUNCTION_VALUES.has(child.type));
        if (inner === undefined || inner === null) return undefined;
        if (ECMA_FUNCTION_VALUES.has(inner.type)) return { name: nameOf(inner) ?? 'default', members: [] };
        return definitionOf(inner, family);
      }
      if (node.type === 'lexical_declaration' || node.type === 'variable_declaration') {
        const declarators = node.namedChildren.filter((child) => child.type === 'variable_declarator');
        const declarator = declarators.length === 1 ? declarators[0]! : undefined;
        const value = declarator?.childForFieldName('value');
        if (declarator === undefined || value === null || value === undefined || !ECMA_FUNCTION_VALUES.has(value.type)) return undefined;
        const name = nameOf(declarator) ?? 'anonymous';
        return {
          name,
          members: value.type === 'class' ? membersOf(value.childForFieldName('body'), (m) => ECMA_MEMBERS.has(m.type), nameOf) : [],
        };
      }
      if (!ECMA_DEFINITIONS.has(node.type)) return undefined;
      const name = nameOf(node) ?? node.type;
      const isClass = node.type === 'class_declaration' || node.type === 'abstract_class_declaration';
      return { name, members: isClass ? membersOf(node.childForFieldName('body'), (m) => ECMA_MEMBERS.has(m.type), nameOf) : [] };
    }
    case 'python': {
      const inner = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
      if (inner === null) return undefined;
      if (inner.type === 'function_definition') return { name: nameOf(inner) ?? 'function', members: [] };
      if (inner.type !== 'class_definition') return undefined;
      const callable = (m: SyntaxNode) =>
        m.type === 'function_definition' || m.type === 'decorated_definition' || m.type === 'class_definition';
      const memberName = (m: SyntaxNode) => nameOf(m.type === 'decorated_definition' ? m.childForFieldName('definition') : m);
      return { name: nameOf(inner) ?? 'class', members: membersOf(inner.childForFieldName('body'), callable, memberName) };
    }
    case 'go': {
      if (node.type === 'function_declaration') return { name: nameOf(node) ?? 'func', members: [] };
      if (node.type === 'method_declaration') {
        const receiver = node.childForFieldName('receiver')?.namedChildren[0]?.childForFieldName('type') ?? null;
        const owner = typeName(receiver);
        const name = nameOf(node) ?? 'method';
        return { name: owner === undefined ? name : `${owner}.${name}`, members: [] };
      }
      if (node.type === 'type_declaration') {
        const specs = node.namedChildren.filter((child) => child.type === 'type_spec' || child.type === 'type_alias');
        const names = specs.map((spec) => nameOf(spec)).filter((name): name is string => name !== undefined);
        return names.length > 0 ? { name: names.join(', '), members: [] } : undefined;
      }
      return undefined;
    }
    case 'rust': {
      const named = [
        'function_item',
        'function_signature_item',
        'struct_item',
        'enum_item',
        'union_item',
        'trait_item',
        'type_item',
        'mod_item',
        'macro_definition',
      ];
      const callable = (m: SyntaxNode) => m.type === 'function_item' || m.type === 'function_signature_item';
      if (node.type === 'impl_item') {
        const owner = typeName(node.childForFieldName('type')) ?? 'impl';
        return { name: owner, members: membersOf(node.childForFieldName('body'), callable, nameOf) };
      }
      if (!named.includes(node.type)) return undefined;
      const members = node.type === 'trait_item' ? membersOf(node.childForFieldName('body'), callable, nameOf) : [];
      return { name: nameOf(node) ?? node.type, members };
    }
    case 'java': {
      const types = ['class_declaration', 'interface_declaration', 'enum_declaration', 'record_declaration', 'annotation_type_declaration'];
      if (!types.includes(node.type)) return undefined;
      const callable = (m: SyntaxNode) =>
        m.type === 'method_declaration' ||
        m.type === 'constructor_declaration' ||
        m.type === 'compact_constructor_declaration' ||
        types.includes(m.type);
      return { name: nameOf(node) ?? node.type, members: membersOf(node.childForFieldName('body'), callable, nameOf) };
    }
  }
}

/** 1-based line numbers of offsets in `text`. */
function lineCounter(text: string): (offset: number) => number {
  const starts = lineStarts(text);
  return (offset) => lineOf(starts, offset) + 1;
}

/** Where a node's region starts: at the comments (and attributes) right above it, with no blank line between. */
function leadingStart(text: string, siblings: readonly SyntaxNode[], index: number): number {
  let start = siblings[index]!.startIndex;
  for (let k = index - 1; k >= 0; k -= 1) {
    const previous = siblings[k]!;
    if (!isPrefix(previous)) break;
    if (/\n[ \t\r]*\n/u.test(text.slice(previous.endIndex, start))) break;
    start = previous.startIndex;
  }
  return start;
}

/** The regions of a parsed file: one per top-level definition, with member parts for long ones. */
function definitionRegions(text: string, root: SyntaxNode, family: Family): Region[] {
  const line = lineCounter(text);
  const top = root.namedChildren;
  const found: { start: number; definition: Definition }[] = [];
  top.forEach((node, index) => {
    const definition = definitionOf(node, family);
    if (definition !== undefined) found.push({ start: leadingStart(text, top, index), definition });
  });
  if (found.length === 0) return [];
  const regions: Region[] = [];
  found.forEach(({ start, definition }, k) => {
    // The first definition also takes what comes before it (imports, constants, a licence header); each one
    // takes what follows it up to the next, so the regions cover the file.
    const from = k === 0 ? 0 : start;
    const to = k + 1 < found.length ? found[k + 1]!.start : text.length;
    const region: Region = { start: from, end: to, section: [definition.name], line: line(from), unit: 'whole' };
    if (definition.members.length > 0) {
      const memberStarts = definition.members.map(({ node, siblings }) => {
        const index = siblings.findIndex((sibling) => sibling.startIndex === node.startIndex && sibling.endIndex === node.endIndex);
        return index === -1 ? node.startIndex : leadingStart(text, siblings, index);
      });
      const parts: Region[] = [];
      if (memberStarts[0]! > from)
        parts.push({ start: from, end: memberStarts[0]!, section: [definition.name], line: line(from), unit: 'whole' });
      definition.members.forEach((member, m) => {
        const partStart = memberStarts[m]!;
        const partEnd = m + 1 < memberStarts.length ? memberStarts[m + 1]! : to;
        parts.push({
          start: partStart,
          end: partEnd,
          section: [`${definition.name}.${member.name}`],
          line: line(partStart),
          unit: 'whole',
        });
      });
      region.parts = parts;
    }
    regions.push(region);
  });
  return mergeTiny(regions);
}

/**
 * A definition shorter than this (a one-line function, a type alias) joins the tiny definitions next to it until
 * their region reaches it: a chunk of its own each would make a file of a hundred thousand one-liners as many
 * chunks, each too short to be found by its words.
 */
const MIN_DEFINITION_CHARS = 256;
/** Names a merged region's section lists before counting the rest. */
const NAMES_SHOWN = 5;

/** Runs of neighbouring tiny definitions as one region each, named after the definitions it holds. */
function mergeTiny(regions: readonly Region[]): Region[] {
  const tiny = (region: Region) => region.parts === undefined && region.end - region.start < MIN_DEFINITION_CHARS;
  const out: Region[] = [];
  let group: Region[] = [];
  const close = () => {
    if (group.length === 1) out.push(group[0]!);
    else if (group.length > 1) {
      const names = group.map((region) => region.section?.[0] ?? '');
      const shown =
        names.length > NAMES_SHOWN ? `${names.slice(0, NAMES_SHOWN).join(', ')} +${names.length - NAMES_SHOWN}` : names.join(', ');
      out.push({ start: group[0]!.start, end: group[group.length - 1]!.end, section: [shown], line: group[0]!.line, unit: 'whole' });
    }
    group = [];
  };
  for (const region of regions) {
    if (!tiny(region)) {
      close();
      out.push(region);
      continue;
    }
    group.push(region);
    if (group[group.length - 1]!.end - group[0]!.start >= MIN_DEFINITION_CHARS) close();
  }
  close();
  return out;
}

/** Line-based regions: the whole file as blank-line-separated blocks, with line numbers. */
function lineRegions(text: string): Region[] {
  // Paragraph units: blank lines separate blocks, which merge up to the bound; one region, so line numbers hold.
  return [{ start: 0, end: text.length, line: 1 }];
}

export const codeLoader: Loader = {
  name: 'code',
  extensions: [...Object.keys(GRAMMARS), ...LINE_BASED],
  async load(input, context): Promise<LoaderResult> {
    const decoded = decodeText(input.bytes);
    if ('problem' in decoded) return notText(decoded.problem);
    const text = decoded.text;
    const doc: IngestDocument = { id: input.sourceId, text, title: fileTitle(input.path), version: sha256Hex(text).slice(0, 12) };
    const grammar = GRAMMARS[input.extension];
    const warnings: string[] = [];
    let regions: Region[] = [];
    if (grammar !== undefined) {
      try {
        const lib = await loadTreeSitter();
        const language = await loadLanguage(lib, grammar);
        const parser = new lib.Parser();
        try {
          parser.setLanguage(language);
          const tree = parser.parse(text);
          if (tree !== null) {
            try {
              regions = definitionRegions(text, tree.rootNode, FAMILY[grammar]!);
            } finally {
              tree.delete();
            }
          }
        } finally {
          parser.delete();
        }
      } catch (error) {
        if (
          isMissingModule(error, 'web-tree-sitter') ||
          isMissingModule(error, 'tree-sitter-wasms') ||
          String((error as Error).message).includes('tree-sitter-wasms')
        ) {
          // Said once per load: every code file of the load is chunked by lines for the same reason.
          if (context.state?.get('code:missing') === undefined) {
            context.state?.set('code:missing', true);
            warnings.push(
              'chunked by lines, as every code file of this load: chunking by definitions needs web-tree-sitter and tree-sitter-wasms (optional dependencies): npm install web-tree-sitter tree-sitter-wasms',
            );
          }
        } else {
          warnings.push(`chunked by lines: the ${grammar} parser failed (${reasonOf(error)})`);
        }
      }
    }
    doc.regions = regions.length > 0 ? regions : lineRegions(text);
    return { documents: [doc], ...(warnings.length > 0 ? { warnings } : {}) };
  },
};
