#!/usr/bin/env bash
# The test command (`npm test`): the default suite, the Qdrant suite against the real Qdrant engine
# (QDRANT_URL when set, else the in-process engine, whose Python environment this sets up: about 170 MB in
# .venv-qdrant), the consumer suite (the packed tarball installed into a temporary project), the promptfoo
# example (examples/promptfoo through promptfoo, installed into .promptfoo/), the official MCP
# conformance suite against both MCP transports, then the examples. Ends with one line "N passed, N failed"
# counting tests and examples together, after the time each step took. The model suite (real all-MiniLM-L6-v2
# vectors through PyTorch, 1.5 GB in .venv-model) has a command of its own: `npm run test:model`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
results=test-results
rm -rf "$results" && mkdir -p "$results"
status=0

# How long each step took, printed at the end.
timings=()
step_started=$SECONDS
step_done() {
  timings+=("$1: $((SECONDS - step_started)) s")
  step_started=$SECONDS
}

if [ -z "${QDRANT_URL:-}" ]; then
  bash scripts/setup-qdrant-engine.sh || { echo "the Qdrant test engine could not be set up" >&2; exit 1; }
fi
step_done "Qdrant test engine set up"
# The MCP stdio tests and examples/mcp-client.ts spawn the built CLI.
npm run build > "$results/build.log" 2>&1 || { echo "npm run build failed (see $results/build.log)" >&2; tail -n 20 "$results/build.log" >&2; exit 1; }
step_done "build"

npx vitest run --reporter=default --reporter=json --outputFile.json="$results/default.json" || status=1
step_done "default suite"
npx vitest run --config vitest.qdrant.config.ts --reporter=default --reporter=json --outputFile.json="$results/qdrant.json" || status=1
step_done "Qdrant suite"
npx vitest run --config vitest.consumer.config.ts --reporter=default --reporter=json --outputFile.json="$results/consumer.json" || status=1
step_done "consumer suite"
# examples/promptfoo through promptfoo (installs its pinned promptfoo and Node 22 into .promptfoo/ the first time).
npx vitest run --config vitest.promptfoo.config.ts --reporter=default --reporter=json --outputFile.json="$results/promptfoo.json" || status=1
step_done "promptfoo example"
# The official MCP conformance suite against both MCP transports (installs its pinned Node 22 into .conformance/).
node scripts/mcp-conformance.mjs --report "$results/conformance.json" > "$results/conformance.log" 2>&1 || { echo "MCP conformance: FAILED (see $results/conformance.log)"; grep -v 'skip (' "$results/conformance.log" | tail -n 20; status=1; }
step_done "MCP conformance"

# examples/qdrant-hybrid.ts needs a Qdrant: QDRANT_URL, else a test engine started for it here.
qdrant_example() {
  if [ -n "${QDRANT_URL:-}" ]; then npx tsx examples/qdrant-hybrid.ts; return; fi
  .venv-qdrant/bin/python test/qdrant/engine/server.py --port 0 > "$results/example-engine.out" 2>&1 &
  local pid=$! port="" rc
  for _ in $(seq 1 240); do
    port=$(grep -m1 -o 'LISTENING [0-9]*' "$results/example-engine.out" | cut -d' ' -f2)
    [ -n "$port" ] && break
    sleep 0.5
  done
  if [ -z "$port" ]; then kill "$pid" 2>/dev/null; echo "the Qdrant test engine did not start"; return 1; fi
  QDRANT_URL="http://127.0.0.1:$port" npx tsx examples/qdrant-hybrid.ts
  rc=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return $rc
}

examples_passed=0
examples_failed=0
for example in eval-harness langchain-rag langchain-compressor llamaindex-query-engine sentence-selection verify-golden-packs briefing mixed-corpus qdrant-hybrid mcp-client; do
  if { if [ "$example" = qdrant-hybrid ]; then qdrant_example; else npx tsx "examples/$example.ts"; fi; } > "$results/example-$example.log" 2>&1; then
    echo "example $example: ok"
    examples_passed=$((examples_passed + 1))
  else
    echo "example $example: FAILED (see $results/example-$example.log)"
    tail -n 20 "$results/example-$example.log"
    examples_failed=$((examples_failed + 1))
    status=1
  fi
done

step_done "examples"

printf '%s\n' "${timings[@]}"
node scripts/test-summary.mjs "$examples_passed" "$examples_failed" "$results/default.json" "$results/qdrant.json" "$results/consumer.json" "$results/promptfoo.json" "$results/conformance.json" || status=1
exit $status
