// Declarations of api-report.mjs, for the test that imports it (test/api.test.ts).

/** Each package entry's exported names, `value NAME` or `type NAME`, sorted by name; keyed by the entry's name. */
export function apiReport(): Map<string, string[]>;
