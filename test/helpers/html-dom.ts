// A parse5 document (the HTML parsing algorithm browsers use) with the few queries the inspector tests need.
import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Node = DefaultTreeAdapterTypes.Node;
export type Element = DefaultTreeAdapterTypes.Element;

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

function children(node: Node): Node[] {
  const own = 'childNodes' in node ? node.childNodes : [];
  // <template> keeps its children in a separate fragment
  return isElement(node) && node.tagName === 'template' ? [...own, ...(node as DefaultTreeAdapterTypes.Template).content.childNodes] : own;
}

export function elements(root: Node): Element[] {
  const out: Element[] = [];
  const walk = (node: Node) => {
    if (isElement(node)) out.push(node);
    children(node).forEach(walk);
  };
  walk(root);
  return out;
}

export function attr(element: Element, name: string): string | undefined {
  return element.attrs.find((a) => a.name === name)?.value;
}

export function hasClass(element: Element, name: string): boolean {
  return (attr(element, 'class') ?? '').split(/\s+/).includes(name);
}

export function textContent(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterTypes.TextNode).value;
  return children(node).map(textContent).join('');
}

export function parseHtml(html: string) {
  const document = parse(html);
  const all = elements(document);
  return {
    document,
    all,
    byClass: (name: string) => all.filter((e) => hasClass(e, name)),
    byTag: (tag: string) => all.filter((e) => e.tagName === tag),
    byAttr: (name: string, value?: string) =>
      all.filter((e) => (value === undefined ? attr(e, name) !== undefined : attr(e, name) === value)),
    text: () => textContent(document),
  };
}
