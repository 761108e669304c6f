#!/usr/bin/env bash
# Installs the LangChain.js baseline packages into bench/baselines/ (its own package.json and lockfile).
# @langchain/community cannot be installed at the repository root: its peer range (stagehand with a zod 3 peer)
# conflicts with the root's zod 4. Here peers are not installed (--legacy-peer-deps), so @langchain/core
# resolves to the root's copy and the baselines share one @langchain/core with the rest of the benchmarks.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/baselines"
cd "$dir"
npm ci --legacy-peer-deps --no-audit --no-fund
node -e "import('@langchain/community/retrievers/bm25').then(() => console.log('ok: @langchain/community in bench/baselines'))"
