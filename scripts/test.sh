#!/usr/bin/env bash
# The test command (`npm test`): the default suite, the Qdrant suite against the real Qdrant engine
# (QDRANT_URL when set, else the in-process engine, whose Python environment this sets up), then the
# examples. Ends with one line "N passed, N failed" counting tests and examples together.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
results=test-results
rm -rf "$results" && mkdir -p "$results"
status=0

if [ -z "${QDRANT_URL:-}" ]; then
  bash scripts/setup-qdrant-engine.sh || { echo "the Qdrant test engine could not be set up" >&2; exit 1; }
fi

npx vitest run --reporter=default --reporter=json --outputFile.json="$results/default.json" || status=1
npx vitest run --config vitest.qdrant.config.ts --reporter=default --reporter=json --outputFile.json="$results/qdrant.json" || status=1

examples_passed=0
examples_failed=0
for example in eval-harness langchain-rag langchain-compressor llamaindex-query-engine; do
  if npx tsx "examples/$example.ts" > "$results/example-$example.log" 2>&1; then
    echo "example $example: ok"
    examples_passed=$((examples_passed + 1))
  else
    echo "example $example: FAILED (see $results/example-$example.log)"
    tail -n 20 "$results/example-$example.log"
    examples_failed=$((examples_failed + 1))
    status=1
  fi
done

node scripts/test-summary.mjs "$results/default.json" "$results/qdrant.json" "$examples_passed" "$examples_failed" || status=1
exit $status
