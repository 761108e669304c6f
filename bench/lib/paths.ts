import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (bench/lib/../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The evaluation data is read in place from ../shared/data; it is never copied into the repository. */
export const DATA_DIR = process.env.LITM_BENCH_DATA ?? resolve(REPO_ROOT, '..', 'shared', 'data');

/** Cached embeddings live outside the repository (written by bench/python/embed.py). */
export const EMBED_CACHE_DIR = process.env.LITM_BENCH_EMBED_CACHE ?? join(homedir(), '.cache', 'litm-pack', 'embeddings');

export const EMBED_MODEL = 'all-MiniLM-L6-v2';

export const EMBED_SETUP_COMMAND = 'bash bench/setup-python.sh && .venv-bench/bin/python bench/python/embed.py';
