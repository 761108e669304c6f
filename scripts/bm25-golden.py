#!/usr/bin/env python3
"""Generate test/fixtures/bm25-golden.jsonl from fastembed's real `Qdrant/bm25` model.

The fixture pins src/retrieve/bm25.ts to the Python implementation that writes BM25 sparse vectors into
Qdrant collections (fastembed's `Bm25` class, `SparseTextEmbedding("Qdrant/bm25")`).

Run from the repository root (any Python >= 3.10):

    python3 -m venv /tmp/bm25-venv
    /tmp/bm25-venv/bin/pip install 'fastembed==0.9.1'
    /tmp/bm25-venv/bin/python scripts/bm25-golden.py

Options: --corpus PATH (scifact-style corpus.jsonl, default /work/shared/data/scifact/corpus.jsonl; scientific
sentences are sampled from it at generation time) and --out PATH.

How the real code runs offline: the `Qdrant/bm25` model on the Hugging Face hub holds no weights, only one
stopword file per language (`english.txt` is NLTK's English list) and an empty `config.json`. This script lays
out that directory itself and passes it as `specific_model_path`, which makes fastembed skip the download; every
step after that (tokenizer, stopwords, py_rust_stemmers Snowball stemmer, mmh3 hashing, BM25 weighting) is
fastembed's own code, called through its public `embed` / `query_embed`.

Each line: {"text", "tokens", "doc": {"indices", "values"}, "query": {"indices"}}. `tokens` are the processed
tokens in order (fastembed's own tokenizer and `_stem`, the same calls `embed` makes); indices are sorted
ascending (fastembed returns them in first-seen order); doc values are fastembed's float64 weights.
Query values are all 1.0 and are not stored.

If `qdrant_edge` (PyPI `qdrant-edge-py`, Qdrant's Rust BM25) is importable, the script also prints how many
texts it encodes differently from fastembed; that comparison is informational and not written to the fixture.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import unicodedata
from pathlib import Path

import fastembed
import mmh3
from fastembed.common.utils import remove_non_alphanumeric
from fastembed.sparse.bm25 import Bm25

# NLTK's English stopword list, in NLTK's order: the content of english.txt in the Qdrant/bm25 model repository
# (also Qdrant's own ENGLISH_STOPWORDS). Entries with an apostrophe can never match a token, since the
# tokenizer splits on apostrophes, but they are part of the file.
NLTK_ENGLISH_STOPWORDS = """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this
that that'll these those am is are was were be been being have has had having do does did doing a an the and but
if or because as until while of at by for with about against between into through during before after above
below to from up down in out on off over under again further then once here there when where why how all any
both each few more most other some such no nor not only own same so than too very s t can will just don don't
should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't
hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn
shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
""".split()

DEFAULT_CORPUS = "/work/shared/data/scifact/corpus.jsonl"
OUT = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "bm25-golden.jsonl"

HAND_WRITTEN = [
    # The known vector from the design doc.
    "Recipe for baking chocolate chip cookies",
    # Empty, whitespace-only, punctuation-only, stopwords-only.
    "",
    " ",
    "   \t\n  \r\n ",
    "\u00a0\u2003\u3000",
    "!!! ??? ... --- ,,, ;;; ::: ()[]{}<>",
    "'\"`´‘’“”«»",
    "The and of to a in is it that",
    " ".join(w for w in NLTK_ENGLISH_STOPWORDS if "'" not in w),
    " ".join(w for w in NLTK_ENGLISH_STOPWORDS if "'" in w),
    "I'm sure they'll say it's fine, but we'd rather you've checked what's wrong.",
    # Apostrophes and quotes.
    "Don't stop believing; it isn't over until it's over.",
    "O'Neill's dog's bone wasn’t the children’s toy",
    "rock 'n' roll y'all ma'am o'clock",
    # Hyphenation and dashes.
    "state-of-the-art well-known self-driving co-operate re-enter",
    "long\u2010term \u2013 short\u2011term \u2014 mid\u2212range e-mail E-Mail",
    "anti-inflammatory non-small-cell lung cancer T-cell B-cell",
    # Code identifiers.
    "snake_case_variable another_name __init__ _private __dunder__ trailing_",
    "_ __ ___ a_ _a a__b",
    "camelCaseVariable PascalCaseName getHTTPResponse XMLHttpRequest iOS",
    "my-kebab-case dotted.name.space path/to/file.ts C:\\Users\\name\\file.txt",
    "const x = arr.map((v) => v * 2); // double every value",
    "def encode_bm25(text: str) -> dict[int, float]: return {}",
    "SELECT user_id, COUNT(*) FROM events WHERE created_at > NOW() GROUP BY user_id;",
    "https://example.com/search?q=bm25&lang=en#results user@example.org",
    "#hashtag @mention $variable %percent ^caret &amp *star +plus =equals |pipe ~tilde",
    # Numbers and decimals.
    "3.14159 2.71828 1,000,000 1.000.000 10e-5 0x1F 0b1010 007 42",
    "version 1.2.3 build 2024-01-15 at 10:30:45 costs $19.99 or €18,50",
    "The 1990s and 2000s saw 3rd-party 4th-generation 21st-century tools",
    "ⅰ ⅱ Ⅻ ½ ¾ ² ³ ⁴ ₁₂ ① ⑩ ٣ ३ ๓ 〇 一二三 ¹²³",
    # Accents and other Latin scripts.
    "café naïve résumé façade coöperate Zoë fiancée déjà vu",
    unicodedata.normalize("NFD", "café naïve résumé façade Zoë"),
    "Straße STRASSE Größe Übermäßig Ölfläche",
    "İstanbul IŞIK ılık Çağdaş şehir",
    "Œuvre œuvre Æsir æther ﬁnally ﬂow ﬀ ﬃ",
    "ǅemal ǈubljana ǋ ǲ Dz",
    "Ångström ångström Ñandú niño señor",
    "ΟΔΥΣΣΕΥΣ Οδυσσεύς ΣΑΣ σας ΣΟΦΟΣ. Σ ΑΣ ἀρχὴ",
    # Final sigma depends on the neighbours, so punctuation must become spaces before lowercasing.
    "ΑΣ.Β ΑΣ'ΒΓ Α'Σ ΟΔΟΣ:ΚΑΙ ΛΟΓΟΣ­ΤΕΧΝΗ ΚΟΣΜΟΣ’Σ",
    "Москва Россия ПРИВЕТ мир Ёлка",
    "Ꭰ ꭰ Ꮳ Cherokee ᏣᎳᎩ",
    # Non-Latin scripts.
    "日本語のテキストです。東京は大きい都市です。",
    "中文测试文本，包括标点符号。北京欢迎你！",
    "한국어 텍스트 서울은 큰 도시입니다",
    "العربية نص تجريبي مع علامات الترقيم، وأرقام ١٢٣",
    "עברית טקסט לדוגמה",
    "हिन्दी पाठ का उदाहरण नमस्ते दुनिया",
    "ภาษาไทย ตัวอย่าง ข้อความ",
    "Ελληνικά και English mixed 混合 text",
    # Emoji and symbols.
    "I love pizza 🍕🍕 and coffee ☕ so much 😀😀😀",
    "👩‍💻 developer 👍🏽 thumbs 🇺🇸 flag 1️⃣ keycap ❤️ heart",
    "→ ← ↑ ↓ ∑ ∫ √ ∞ ≤ ≥ ≠ ± × ÷ © ® ™ ° µ",
    "Ⓐ Ⓑ ⓐⓑ ＡＢＣ ａｂｃ ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ １２３",
    "𝐁𝐨𝐥𝐝 𝐦𝐚𝐭𝐡 𝑖𝑡𝑎𝑙𝑖𝑐 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 𝕕𝕠𝕦𝕓𝕝𝕖",
    "𝐛y 𝐚𝐛y 𝐛ies 𝐱ing x𝐚ing 𝐛ly 𝐚𝐛ness 𝐚s 𝐚ed 𝐛eed",
    "𠀀𠀁 𪚥 CJK extension B 𠜎𠜱𠝹",
    # Token length: 40 code points pass, 41 are dropped (before stemming).
    "a" * 40 + " " + "b" * 41 + " kept",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "pneumonoultramicroscopicsilicovolcanoconiosis is a long word",
    "x" * 38 + "ing " + "y" * 37 + "ness " + "z" * 39 + "ed",
    "é" * 40 + " " + "é" * 41 + " " + "日" * 40 + " " + "日" * 41,
    "𝐚" * 40 + " " + "𝐚" * 41 + " " + "𝐚" * 21 + " " + "a" * 20 + "𝐚" * 20,
    unicodedata.normalize("NFD", "é" * 40) + " " + "a" * 20 + "_" * 20 + " " + "a" * 20 + "_" * 21,
    "İ" * 30 + " " + "İ" * 41,
    "http://" + "verylongdomainname" * 4 + ".com",
    # Repeated words and term frequency.
    "cat",
    "cat cat",
    "cat cat cat cat cat cat cat cat cat cat",
    "the cat sat on the mat with another cat and a third cat",
    "running runs ran runner running RUNNING Running",
    "connect connected connecting connection connections connective",
    "generous generously generosity general generally generalization",
    "studies studying studied student students study",
    " ".join(["retrieval"] * 300),
    " ".join(["alpha", "beta", "gamma", "delta"] * 100),
    "word " * 255 + "end",
    "word " * 256 + "end",
    # Stemmer edge cases (Snowball English exceptions and special forms).
    "skis skies dying lying tying idly gently ugly early only singly sky news howe atlas cosmos bias andes",
    "inning innings outing outings canning cannings herring herrings earring earrings proceed exceed succeed",
    "generate generation communism communication arsenal arsenals past pasts lucky yes yay bye say eyed",
    "caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized",
    "hopping tanned falling hissing fizzed failing filing happy geologist biologist ogist fluently hopefully",
    "yy yyy ayy aay ey aye eying Y YY Yes YES yoyo Kyoto",
    "consign consigned consigning consignment consist consisted consistency consistent consistently",
    "knack knackeries knacks knag knave knaves knavish kneaded kneading knee kneel kneeling kneels knees",
    # Mixed case and shouting.
    "HELLO World hello WORLD HeLLo wOrLd",
    "NASA's JWST telescope; the ESA, JAXA and CSA partners",
    # Control characters and unusual whitespace.
    "tab\tseparated\tvalues\nnew\nlines\r\nwindows\u000bvertical\u000cform\u001fcontrol\u0000null",
    "zero\u200bwidth\u200cjoiners\u200d and\u2060word\ufeffjoiner soft\u00adhyphen",
    "\u202eright-to-left override\u202c and \u2066isolates\u2069",
]


def collision_tokens() -> list[str]:
    """Deterministically find tokens whose abs(murmur3) ids collide (exactly, and only after abs)."""
    seen: dict[int, str] = {}
    exact: tuple[str, str] | None = None
    by_abs: tuple[str, str] | None = None
    for i in range(400_000):
        token = f"zq{i}"
        signed = mmh3.hash(token)
        key = abs(signed)
        other = seen.get(key)
        if other is not None:
            if mmh3.hash(other) == signed and exact is None:
                exact = (other, token)
            elif mmh3.hash(other) != signed and by_abs is None:
                by_abs = (other, token)
            if exact and by_abs:
                break
        seen[key] = token
    assert exact and by_abs, "no collision found"
    return [*exact, *by_abs]


def collision_texts() -> list[str]:
    a, b, c, d = collision_tokens()
    return [
        f"{a} {b}",
        f"{a} {a} {a} {b}",
        f"{b} {a} {a} {a}",
        f"{c} {d} {d}",
        f"{d} {d} {c} and {a} {b} {b} {a} {a}",
        f"collisions: {a} {b} {c} {d} stay deterministic",
    ]


PROSE = [
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
    "Call me Ishmael. Some years ago, never mind how long precisely, I thought I would sail about a little.",
    "All happy families are alike; each unhappy family is unhappy in its own way.",
    "The quick brown fox jumps over the lazy dog while the dogs sleep soundly.",
    "She sells seashells by the seashore, and the shells she sells are surely seashells.",
    "Preheat the oven to 180°C, then whisk the eggs with the sugar until pale and fluffy.",
    "Our quarterly revenue grew 12% year-over-year, driven by strong subscription renewals.",
    "Please reset your password using the link we emailed you; it expires in 24 hours.",
    "The committee postponed the vote because several members were travelling abroad.",
    "Rain is expected tomorrow afternoon, with clearing skies by the weekend.",
    "He carefully folded the map, tucked it into his jacket, and walked toward the station.",
    "Libraries lend books, but they also lend quiet, warmth and a sense of belonging.",
    "To install the package, run the installer and follow the on-screen instructions.",
    "The river flooded the lower fields twice this spring, ruining the early crops.",
    "Customers reported that the app crashes when uploading photos larger than 10 MB.",
    "A stitch in time saves nine, as my grandmother used to say while mending socks.",
    "The museum's new wing houses paintings, sculptures and a collection of rare manuscripts.",
    "Negotiations continued late into the night without any agreement being reached.",
    "Students must submit their essays by Friday; late submissions will not be graded.",
    "The orchestra tuned their instruments as the audience slowly settled into their seats.",
    "Why do cats knead blankets? Experts believe it is a behaviour left over from kittenhood.",
    "Hybrid retrieval combines dense embeddings with sparse lexical signals such as BM25.",
    "Lost in the middle: language models use information at the start and end of long contexts best.",
    "Citations let readers verify each claim against the retrieved passage it came from.",
    "Token budgets force the packer to choose which passages to keep and which to drop.",
    "The quick brown foxes were jumping over the lazy dogs' kennels repeatedly.",
    "Reading, writing and arithmetic were once called the three Rs of education.",
    "He said, \"I'll be there at noon,\" but didn't arrive until half past two.",
    "Section 4.2 (see Table 3) reports the results; Appendix B lists the hyper-parameters.",
    "Q: What is the capital of France? A: Paris, which is also its largest city.",
]

IDENT_PARTS = ["user", "id", "http", "request", "parse", "json", "value", "max", "len", "token", "count", "BM25",
               "encode", "query", "doc", "vector", "sparse", "index", "Node", "list", "HTML", "api", "v2", "x"]
WEIRD = ["café", "naïve", "日本", "😀", "𝐛y", "İ", "ß", "ǅ", "Σ", "ς", "_", "__", "-", "'", "’", "3.5", "1,000",
         "½", "²", "Ⅻ", "ﬁ", "é", "\u0301", "\u200d", "👩‍💻", "ＡＢＣ", "Ꭰ", "ı", "x" * 41, "y" * 40, "the", "and",
         "running", "generously", "skies", "studies", "kyoto", "ponies", "hopping", "data", "Data", "DATA"]


def generated_texts(rng: random.Random) -> list[str]:
    texts: list[str] = []
    for _ in range(40):
        parts = rng.sample(IDENT_PARTS, rng.randint(2, 4))
        style = rng.randrange(4)
        if style == 0:
            ident = "_".join(p.lower() for p in parts)
        elif style == 1:
            ident = parts[0].lower() + "".join(p.capitalize() for p in parts[1:])
        elif style == 2:
            ident = "-".join(p.lower() for p in parts)
        else:
            ident = ".".join(parts) + "()"
        texts.append(f"call {ident} with {rng.choice(IDENT_PARTS)}_{rng.randint(0, 99)} = {rng.random():.4f}")
    for _ in range(60):
        n = rng.randint(1, 14)
        seps = [" ", " ", " ", "-", "_", ".", ", ", "'", "\n", "/", ""]
        texts.append("".join(rng.choice(WEIRD) + rng.choice(seps) for _ in range(n)))
    return texts


def scifact_texts(corpus: Path, rng: random.Random) -> list[str]:
    docs = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng.shuffle(docs)
    texts: list[str] = []
    # Titles.
    texts += [d["title"] for d in docs[:60] if d["title"].strip()]
    # Single sentences and short runs of sentences, up to ~600 characters.
    for d in docs[60:330]:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", d["text"]) if s.strip()]
        if not sentences:
            continue
        start = rng.randrange(len(sentences))
        take = rng.choice([1, 1, 1, 2, 3])
        texts.append(" ".join(sentences[start:start + take])[:600])
    # A few whole abstracts (~1000 characters), so |d| varies well past avg_len.
    texts += [d["text"][:1200] for d in docs[330:345]]
    return texts


def sparse_sorted(indices, values) -> tuple[list[int], list[float]]:
    pairs = sorted(zip((int(i) for i in indices), (float(v) for v in values)))
    return [i for i, _ in pairs], [v for _, v in pairs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()

    rng = random.Random(20240615)
    texts = HAND_WRITTEN + collision_texts() + PROSE + generated_texts(rng) + scifact_texts(Path(args.corpus), rng)
    seen: set[str] = set()
    texts = [t for t in texts if not (t in seen or seen.add(t))]

    with tempfile.TemporaryDirectory() as model_dir:
        (Path(model_dir) / "config.json").write_text("{}\n", encoding="utf-8")
        (Path(model_dir) / "english.txt").write_text("\n".join(NLTK_ENGLISH_STOPWORDS) + "\n", encoding="utf-8")
        model = Bm25("Qdrant/bm25", specific_model_path=model_dir)
        assert model.k == 1.2 and model.b == 0.75 and model.avg_len == 256.0 and model.token_max_length == 40

        docs = list(model.embed(texts, batch_size=64))
        queries = list(model.query_embed(texts))
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8", newline="\n") as f:
            for text, doc, query in zip(texts, docs, queries, strict=True):
                tokens = model._stem(model.tokenizer.tokenize(remove_non_alphanumeric(text)))
                doc_indices, doc_values = sparse_sorted(doc.indices, doc.values)
                query_indices = sorted(int(i) for i in query.indices)
                assert all(float(v) == 1.0 for v in query.values)
                line = {
                    "text": text,
                    "tokens": tokens,
                    "doc": {"indices": doc_indices, "values": doc_values},
                    "query": {"indices": query_indices},
                }
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"wrote {len(texts)} lines to {args.out} (fastembed {fastembed.__version__}, "
          f"Python {sys.version.split()[0]}, Unicode {unicodedata.unidata_version})")

    try:
        import qdrant_edge  # type: ignore[import-not-found]
    except ImportError:
        return 0
    edge = qdrant_edge.Bm25()
    differ = 0
    for text, doc in zip(texts, docs):
        e = edge.embed_document(text)
        fe_idx, fe_val = sparse_sorted(doc.indices, doc.values)
        ed_idx, ed_val = sparse_sorted(e.indices, e.values)
        if fe_idx != ed_idx or any(abs(x - y) > 1e-6 * max(1.0, abs(x)) for x, y in zip(fe_val, ed_val)):
            differ += 1
    print(f"qdrant_edge.Bm25 (Qdrant's Rust BM25) differs from fastembed on {differ} of {len(texts)} texts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
