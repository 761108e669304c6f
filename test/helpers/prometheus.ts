// Reads Prometheus text exposition as a scraper does: one sample per line, `name{label="value",...} number`.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/u;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/gu;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1] as string] = (label[2] as string).replace(/\\(.)/gu, '$1');
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The metric families a text declares (`# TYPE name kind`). */
export function metricTypes(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gmu)].map((m) => [m[1] as string, m[2] as string]));
}

/** Every sample of `name`, its labels sorted, as `{labels} value` strings: the exact label sets a scrape holds. */
export function seriesOf(samples: readonly Sample[], name: string): string[] {
  return samples
    .filter((s) => s.name === name)
    .map((s) => `${JSON.stringify(Object.fromEntries(Object.entries(s.labels).sort(([a], [b]) => a.localeCompare(b))))} ${s.value}`)
    .sort();
}

/** The value of the one sample of `name` with exactly `labels`, or undefined. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).sort();
  const found = samples.filter((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === JSON.stringify(wanted));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} appears ${found.length} times`);
  return found[0]?.value;
}
