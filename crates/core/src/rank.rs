//! The built-in ranker behind `semantic_code_search`: BM25 over chunks of code, with
//! terms that understand identifiers and scripts written without spaces.
//!
//! Files are cut into chunks at definitions (`fn`, `class`, `def`, …, with the comments
//! just above them) and at blank lines once a chunk has grown; a chunk keeps only its term
//! counts and line range, never its text. One tokenizer serves code and queries:
//! identifiers are split at `snake_case`, `camelCase` and digit boundaries and also kept
//! whole without underscores, so `parse config`, `parse_config` and `parseConfig` meet.
//! Thai, Lao, Khmer, Myanmar, CJK and Hangul runs become bigrams of characters (a base
//! character with its combining marks), so `파일` in a query meets `파일을` in a comment.
//!
//! A chunk's score is BM25 (k1 = 1.2, b = 0.75, document frequencies over the chunks of
//! the offered files) times a few factors that are easy to explain: ×2.5 when the chunk
//! defines a queried symbol; ×1.3 when one term of the file's name is in the query, ×1.6
//! when two or more are; ×0.5 for tests; ×0.3 for generated, minified, vendored and lock
//! files; and ×0.8 for each hit already taken from the same file, so results spread out.
//!
//! A [`CodeIndex`] lives as long as its workspace: a file is read again only when its
//! size or mtime changed. It keeps term ids (one dictionary per index) and counts, not
//! text, within a byte budget, dropping the files used longest ago. The few files with
//! hits are read again to cut snippets; one whose content moved on since it was indexed
//! (checked by a content hash) is indexed again and the query rescored once.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use xxhash_rust::xxh3::xxh3_64;

use crate::cancel::Cancel;
use crate::confine::open_found;
use crate::error::{Error, Result};
use crate::live::{plan::Query as Wanted, LiveIndex, Want};
use crate::sniff::SNIFF_BYTES;
use crate::walk::{self, WalkConfig};
use crate::Roots;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const DEFINES_BOOST: f64 = 2.5;
const NAME_BOOST: f64 = 0.3;
const TEST_DAMP: f64 = 0.5;
const GENERATED_DAMP: f64 = 0.3;
const SAME_FILE_DAMP: f64 = 0.8;
const MAX_TOP_K: usize = 25;
/// The deepest a call may page into the ranking.
const MAX_OFFSET: usize = 1000;
const MAX_TERM_BYTES: usize = 64;
const LONG_LINE_CHARS: usize = 500;
const CHUNK_SPLIT_LINES: usize = 8;
const CHUNK_MAX_LINES: usize = 80;
const CHUNK_MIN_LINES: usize = 3;
const INDEX_BATCH: usize = 256;
/// The mtime of an entry indexed from a read the caller did not stat; never equal to one.
const MTIME_UNKNOWN: i128 = i128::MIN;
const STOPWORDS: &[&str] = &[
    "an", "and", "are", "as", "at", "be", "by", "const", "def", "do", "does", "else", "fn", "for", "from", "func",
    "function", "how", "if", "in", "is", "it", "let", "of", "on", "or", "return", "that", "the", "this", "to", "var",
    "what", "where", "which", "with",
];

/// One file offered to the ranker (the caller walked the tree with ignore rules applied).
#[derive(Clone, Debug)]
pub struct RankFile {
    /// The real path to read.
    pub path: PathBuf,
    /// The path shown to the model.
    pub shown: String,
    /// The size in bytes, as the caller saw it.
    pub size: u64,
    /// The modification time in nanoseconds since the epoch, as the caller saw it.
    pub mtime_ns: i128,
}

/// How to rank. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct RankConfig {
    top_k: usize,
    offset: usize,
    max_file_bytes: u64,
    snippet_lines: usize,
    live: Option<Arc<LiveIndex>>,
}

impl Default for RankConfig {
    fn default() -> RankConfig {
        RankConfig { top_k: 8, offset: 0, max_file_bytes: 1 << 20, snippet_lines: 40, live: None }
    }
}

impl RankConfig {
    /// How many hits to return, clamped to 1–25. By default, this is 8.
    pub fn top_k(&mut self, k: usize) -> &mut Self {
        self.top_k = k.clamp(1, MAX_TOP_K);
        self
    }

    /// Hits skipped before the first returned, in rank order, to page through the results.
    /// At most 1,000. By default, this is 0.
    pub fn offset(&mut self, offset: usize) -> &mut Self {
        self.offset = offset.min(MAX_OFFSET);
        self
    }

    /// The largest file searched; larger ones are skipped. By default, this is 1 MiB.
    pub fn max_file_bytes(&mut self, bytes: u64) -> &mut Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The most lines of a chunk shown in a snippet (at least 1); the rest is counted in
    /// [`RankHit::more_lines`]. By default, this is 40.
    pub fn snippet_lines(&mut self, lines: usize) -> &mut Self {
        self.snippet_lines = lines.max(1);
        self
    }

    /// The workspace's live index: [`rank_folder`] takes the files it offers from the
    /// index's snapshot instead of walking, when the index can answer. By default, none.
    pub fn live(&mut self, index: Option<Arc<LiveIndex>>) -> &mut Self {
        self.live = index;
        self
    }
}

/// One ranked chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct RankHit {
    /// The path shown to the model.
    pub shown: String,
    /// The first line of the chunk, 1-based.
    pub start_line: u64,
    /// The last line of the whole chunk, 1-based and inclusive, even when the snippet is cut.
    pub end_line: u64,
    /// The score; higher is better.
    pub score: f64,
    /// The symbol the chunk defines, if any.
    pub symbol: Option<String>,
    /// The chunk's text, lines as in the file (line ends removed), no line numbers, no
    /// trailing newline; lines over 500 characters are cut with "…".
    pub snippet: String,
    /// How many lines of the chunk follow the snippet (0 when it is whole); the caller
    /// renders them as "… N more lines".
    pub more_lines: u64,
}

/// What [`rank`] found.
#[derive(Clone, Debug, Default)]
pub struct RankOutcome {
    /// The best chunks: score descending, then path, then line.
    pub hits: Vec<RankHit>,
    /// Files read and chunked in this call (new or changed).
    pub files_indexed: usize,
    /// Files whose chunks were scored.
    pub files_considered: usize,
    /// Chunks scored.
    pub chunks: usize,
    /// Chunks the query matched (a score above zero): the hits there are in all pages.
    pub total: usize,
    /// Files offered but not searched: unreadable, binary, or over the size limit.
    pub skipped: usize,
    /// Folders and files the walk of [`rank_folder`] could not read, as messages.
    pub errors: Vec<String>,
    /// Whether [`rank_folder`] took the files from the live index's snapshot (else it walked).
    pub from_index: bool,
}

/// The per-workspace index: chunks and term counts of every file seen, reused across calls.
///
/// It is shared by reference between threads. A file is chunked again when its size or
/// mtime changed (a touch without a change is noticed by a content hash and costs only a
/// read). Files not offered in a call stay indexed; when the stored chunks outgrow the
/// budget, the files used longest ago are dropped.
#[derive(Debug)]
pub struct CodeIndex {
    state: Mutex<State>,
    budget: usize,
}

impl Default for CodeIndex {
    fn default() -> CodeIndex {
        CodeIndex::with_budget(64 << 20)
    }
}

impl CodeIndex {
    /// An empty index that keeps about `bytes` of chunk data (64 MiB by [`Default`]).
    pub fn with_budget(bytes: usize) -> CodeIndex {
        CodeIndex { state: Mutex::new(State::default()), budget: bytes }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[derive(Debug, Default)]
struct State {
    terms: FxHashMap<Box<str>, u32>,
    next_term: u32,
    term_bytes: usize,
    compact_at: usize,
    entries: FxHashMap<PathBuf, Entry>,
    used: usize,
    tick: u64,
}

#[derive(Debug)]
struct Entry {
    size: u64,
    mtime_ns: i128,
    hash: u64,
    binary: bool,
    minified: bool,
    chunks: Vec<Chunk>,
    bytes: usize,
    last_used: u64,
}

#[derive(Debug)]
struct Chunk {
    start: u32,
    end: u32,
    len: u32,
    symbol: Option<Box<str>>,
    /// `(term id, count)`, sorted by id.
    terms: Box<[(u32, u32)]>,
}

/// What one read of a file gave.
enum Loaded {
    Chunked {
        hash: u64,
        minified: bool,
        chunks: Vec<Draft>,
    },
    Binary(u64),
    /// The content hash equals the indexed one: only the size and mtime are new.
    Same,
    /// Unreadable, gone, or over the size limit.
    Unreadable,
}

struct Draft {
    start: u32,
    end: u32,
    len: u32,
    symbol: Option<String>,
    terms: Vec<(String, u32)>,
}

impl State {
    fn intern(&mut self, term: String) -> u32 {
        if let Some(&id) = self.terms.get(term.as_str()) {
            return id;
        }
        let id = self.next_term;
        self.next_term += 1;
        self.term_bytes += term.len() + 32;
        self.terms.insert(term.into_boxed_str(), id);
        id
    }

    fn remove(&mut self, path: &Path) {
        if let Some(old) = self.entries.remove(path) {
            self.used -= old.bytes;
        }
    }

    fn store(&mut self, path: &Path, size: u64, mtime_ns: i128, loaded: Loaded) {
        let (hash, binary, minified, drafts) = match loaded {
            Loaded::Same => {
                if let Some(entry) = self.entries.get_mut(path) {
                    (entry.size, entry.mtime_ns) = (size, mtime_ns);
                }
                return;
            }
            Loaded::Unreadable => return self.remove(path),
            Loaded::Binary(hash) => (hash, true, false, Vec::new()),
            Loaded::Chunked { hash, minified, chunks } => (hash, false, minified, chunks),
        };
        let mut bytes = 128 + path.as_os_str().len();
        let mut chunks = Vec::with_capacity(drafts.len());
        for d in drafts {
            let mut terms: Vec<(u32, u32)> = d.terms.into_iter().map(|(t, n)| (self.intern(t), n)).collect();
            terms.sort_unstable();
            bytes += std::mem::size_of::<Chunk>() + terms.len() * 8 + d.symbol.as_ref().map_or(0, String::len);
            let symbol = d.symbol.map(String::into_boxed_str);
            chunks.push(Chunk { start: d.start, end: d.end, len: d.len, symbol, terms: terms.into() });
        }
        self.remove(path);
        self.used += bytes;
        let entry = Entry { size, mtime_ns, hash, binary, minified, chunks, bytes, last_used: self.tick };
        self.entries.insert(path.to_path_buf(), entry);
    }

    /// Drops the files used longest ago until the chunks fit `budget`, then renumbers the
    /// terms when the dictionary has grown well past what the kept files use.
    fn trim(&mut self, budget: usize) {
        if self.used > budget {
            let mut by_age: Vec<(u64, PathBuf)> = self.entries.iter().map(|(p, e)| (e.last_used, p.clone())).collect();
            by_age.sort_unstable();
            for (_, path) in by_age {
                if self.used <= budget {
                    break;
                }
                self.remove(&path);
            }
        }
        if self.term_bytes > self.compact_at.max(budget / 4) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        let mut remap = vec![u32::MAX; self.next_term as usize];
        let mut next = 0;
        for chunk in self.entries.values().flat_map(|e| &e.chunks) {
            for &(t, _) in chunk.terms.iter() {
                if remap[t as usize] == u32::MAX {
                    remap[t as usize] = next;
                    next += 1;
                }
            }
        }
        self.terms.retain(|_, id| {
            *id = remap[*id as usize];
            *id != u32::MAX
        });
        for chunk in self.entries.values_mut().flat_map(|e| &mut e.chunks) {
            chunk.terms.iter_mut().for_each(|(t, _)| *t = remap[*t as usize]);
            chunk.terms.sort_unstable();
        }
        self.next_term = next;
        self.term_bytes = self.terms.keys().map(|t| t.len() + 32).sum();
        self.compact_at = 2 * self.term_bytes;
    }
}

/// Ranks the chunks of `files` for `query` and returns the best with their snippets.
///
/// New and changed files are read and chunked in parallel, and stored in `index` for the
/// next call. A query without searchable terms (only punctuation, or only stopwords) gives
/// no hits and reads nothing.
pub fn rank(
    index: &CodeIndex,
    files: &[RankFile],
    query: &str,
    config: &RankConfig,
    cancel: &Cancel,
) -> Result<RankOutcome> {
    let query = Query::new(query);
    let mut out = RankOutcome::default();
    if query.terms.is_empty() {
        return Ok(out);
    }
    cancel.check()?;
    let mut seen = FxHashSet::default();
    let mut offered = Vec::new();
    let mut too_large = 0;
    for (i, f) in files.iter().enumerate() {
        if !seen.insert(f.path.as_path()) {
            continue;
        }
        if f.size > config.max_file_bytes {
            too_large += 1;
        } else {
            offered.push(i);
        }
    }

    let stale: Vec<(usize, Option<u64>)> = {
        let mut state = index.lock();
        state.tick += 1;
        let fresh = |f: &RankFile, e: &Entry| e.size == f.size && e.mtime_ns == f.mtime_ns;
        offered
            .iter()
            .filter_map(|&i| match state.entries.get(&files[i].path) {
                Some(e) if fresh(&files[i], e) => None,
                entry => Some((i, entry.map(|e| e.hash))),
            })
            .collect()
    };
    // In batches, so that the term strings of only one batch wait to be interned.
    for batch in stale.chunks(INDEX_BATCH) {
        let loaded = batch
            .par_iter()
            .map(|&(i, old)| {
                cancel.check()?;
                Ok((i, load(&files[i].path, config.max_file_bytes, old)))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut state = index.lock();
        for (i, loaded) in loaded {
            out.files_indexed += matches!(loaded, Loaded::Chunked { .. }) as usize;
            state.store(&files[i].path, files[i].size, files[i].mtime_ns, loaded);
        }
    }

    let mut rescored = false;
    let (picks, texts) = loop {
        let scored = score(&mut index.lock(), files, &offered, &query, config.offset, config.top_k, cancel)?;
        out.total = scored.total;
        out.files_considered = scored.considered;
        out.chunks = scored.chunks;
        out.skipped = too_large + offered.len() - scored.considered;
        let mut texts: FxHashMap<usize, String> = FxHashMap::default();
        let mut changed: Vec<(usize, u64, Loaded)> = Vec::new();
        for pick in &scored.picks {
            if texts.contains_key(&pick.file) || changed.iter().any(|(i, ..)| *i == pick.file) {
                continue;
            }
            cancel.check()?;
            match read_capped(&files[pick.file].path, config.max_file_bytes) {
                Ok(Some(bytes)) => {
                    if xxh3_64(&bytes) != pick.hash {
                        changed.push((pick.file, bytes.len() as u64, from_bytes(&bytes, None)));
                    }
                    texts.insert(pick.file, decode(&bytes));
                }
                Ok(None) | Err(_) => changed.push((pick.file, 0, Loaded::Unreadable)),
            }
        }
        if changed.is_empty() || rescored {
            break (scored.picks, texts);
        }
        rescored = true;
        let mut state = index.lock();
        for (i, size, loaded) in changed {
            out.files_indexed += matches!(loaded, Loaded::Chunked { .. }) as usize;
            state.store(&files[i].path, size, MTIME_UNKNOWN, loaded);
        }
    };
    index.lock().trim(index.budget);

    for pick in picks {
        let Some(text) = texts.get(&pick.file) else { continue };
        let Some((snippet, more_lines)) = cut_snippet(text, pick.start, pick.end, config.snippet_lines) else {
            continue;
        };
        out.hits.push(RankHit {
            shown: files[pick.file].shown.clone(),
            start_line: pick.start.into(),
            end_line: pick.end.into(),
            score: pick.score,
            symbol: pick.symbol,
            snippet,
            more_lines,
        });
    }
    Ok(out)
}

struct Scored {
    picks: Vec<Pick>,
    /// Chunks with a score above zero: every hit the query has.
    total: usize,
    considered: usize,
    chunks: usize,
}

struct Pick {
    file: usize,
    start: u32,
    end: u32,
    symbol: Option<String>,
    score: f64,
    hash: u64,
}

fn score(
    state: &mut State,
    files: &[RankFile],
    offered: &[usize],
    query: &Query,
    offset: usize,
    top_k: usize,
    cancel: &Cancel,
) -> Result<Scored> {
    let tick = state.tick;
    for &i in offered {
        if let Some(entry) = state.entries.get_mut(&files[i].path) {
            entry.last_used = tick;
        }
    }
    let state = &*state;
    let live: Vec<(usize, &Entry)> = offered
        .iter()
        .filter_map(|&i| state.entries.get(&files[i].path).filter(|e| !e.binary).map(|e| (i, e)))
        .collect();
    // In query-term order, so that sums do not depend on term ids.
    let ids: Vec<Option<u32>> = query.terms.iter().map(|t| state.terms.get(t.as_str()).copied()).collect();
    let nq = ids.len();
    let (mut n, mut total_len) = (0usize, 0u64);
    let mut df = vec![0u32; nq];
    let mut matched: Vec<(usize, usize)> = Vec::new();
    let mut tfs: Vec<u32> = Vec::new();
    for (l, (_, entry)) in live.iter().enumerate() {
        cancel.check()?;
        for (c, chunk) in entry.chunks.iter().enumerate() {
            n += 1;
            total_len += u64::from(chunk.len);
            let at = tfs.len();
            for (j, id) in ids.iter().enumerate() {
                let found = id.and_then(|id| chunk.terms.binary_search_by_key(&id, |&(t, _)| t).ok());
                let tf = found.map_or(0, |k| chunk.terms[k].1);
                df[j] += (tf > 0) as u32;
                tfs.push(tf);
            }
            if tfs[at..].iter().any(|&tf| tf > 0) {
                matched.push((l, c));
            } else {
                tfs.truncate(at);
            }
        }
    }
    let avgdl = (total_len as f64 / n.max(1) as f64).max(1.0);
    let idf: Vec<f64> = df.iter().map(|&d| (1.0 + (n as f64 - d as f64 + 0.5) / (d as f64 + 0.5)).ln()).collect();
    let factors: Vec<f64> = live.iter().map(|&(i, e)| file_factor(&files[i].shown, e.minified, query)).collect();
    let mut cands: Vec<(f64, usize, usize)> = Vec::with_capacity(matched.len());
    for (k, &(l, c)) in matched.iter().enumerate() {
        let chunk = &live[l].1.chunks[c];
        let norm = K1 * (1.0 - B + B * f64::from(chunk.len) / avgdl);
        let bm25: f64 = tfs[k * nq..(k + 1) * nq]
            .iter()
            .zip(&idf)
            .map(|(&tf, idf)| idf * f64::from(tf) * (K1 + 1.0) / (f64::from(tf) + norm))
            .sum();
        let defines = chunk.symbol.as_deref().is_some_and(|s| query.names(s));
        let s = bm25 * factors[l] * if defines { DEFINES_BOOST } else { 1.0 };
        if s > 0.0 {
            cands.push((s, l, c));
        }
    }
    let key = |&(_, l, c): &(f64, usize, usize)| (&files[live[l].0].shown, live[l].1.chunks[c].start);
    cands.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| key(a).cmp(&key(b))));

    // Greedy picks: each hit taken from a file lowers that file's later hits by ×0.8.
    // Raw scores bound the lowered ones, so a scan stops at the first raw score ≤ the best.
    let mut taken = vec![false; cands.len()];
    let mut per_file: FxHashMap<usize, i32> = FxHashMap::default();
    let mut chosen: Vec<(f64, usize)> = Vec::new();
    while chosen.len() < offset + top_k {
        let mut best: Option<(f64, usize)> = None;
        for (j, &(raw, l, _)) in cands.iter().enumerate() {
            if best.is_some_and(|(b, _)| raw <= b) {
                break;
            }
            let eff = raw * SAME_FILE_DAMP.powi(per_file.get(&l).copied().unwrap_or(0));
            if !taken[j] && best.is_none_or(|(b, _)| eff > b) {
                best = Some((eff, j));
            }
        }
        let Some((eff, j)) = best else { break };
        taken[j] = true;
        *per_file.entry(cands[j].1).or_default() += 1;
        chosen.push((eff, j));
    }
    chosen.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| key(&cands[a.1]).cmp(&key(&cands[b.1]))));
    // A later page is the same ranking, past the hits of the pages before it.
    let picks = chosen
        .into_iter()
        .skip(offset)
        .map(|(score, j)| {
            let (_, l, c) = cands[j];
            let (file, entry) = live[l];
            let chunk = &entry.chunks[c];
            let symbol = chunk.symbol.as_deref().map(str::to_owned);
            Pick { file, start: chunk.start, end: chunk.end, symbol, score, hash: entry.hash }
        })
        .collect();
    Ok(Scored { picks, total: cands.len(), considered: live.len(), chunks: n })
}

/// The boost for a file whose name holds query terms, times the damping of tests and
/// generated files.
fn file_factor(shown: &str, minified: bool, query: &Query) -> f64 {
    let name = shown.rsplit(['/', '\\']).next().unwrap_or(shown);
    let stem = name.split('.').next().unwrap_or(name);
    let mut hits = 0;
    tokenize(stem, &mut |t| hits += query.has(t) as usize);
    (1.0 + NAME_BOOST * hits.min(2) as f64) * damping(&shown.replace('\\', "/").to_lowercase(), minified)
}

/// ×0.3 for generated, minified, vendored and lock files, ×0.5 for tests, else ×1.
fn damping(path: &str, minified: bool) -> f64 {
    const GENERATED_DIRS: &[&str] = &["dist", "build", "vendor", "node_modules", "target", "third_party"];
    const LOCKS: &[&str] = &["package-lock.json", "pnpm-lock.yaml", "go.sum", "npm-shrinkwrap.json"];
    const TEST_DIRS: &[&str] = &["test", "tests", "__tests__", "spec", "specs", "testdata"];
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut dirs = path.split('/').rev().skip(1);
    let generated = minified
        || name.contains(".min.")
        || name.ends_with(".map")
        || name.ends_with(".lock")
        || LOCKS.contains(&name)
        || path.contains("generated")
        || dirs.clone().any(|d| GENERATED_DIRS.contains(&d));
    let test = [".test.", "_test.", ".spec.", "_spec."].iter().any(|p| name.contains(p))
        || name.starts_with("test_")
        || dirs.any(|d| TEST_DIRS.contains(&d));
    if generated {
        GENERATED_DAMP
    } else if test {
        TEST_DAMP
    } else {
        1.0
    }
}

/// A query's terms, and its words as identifiers (lowercase, no underscores).
struct Query {
    terms: Vec<String>,
    idents: FxHashSet<String>,
}

impl Query {
    fn new(text: &str) -> Query {
        let mut terms = Vec::new();
        tokenize(text, &mut |t| terms.push(t.to_owned()));
        terms.sort_unstable();
        terms.dedup();
        let idents = text.split(|c: char| !is_word_char(c)).map(normalize).filter(|w| keep(w)).collect();
        Query { terms, idents }
    }

    fn has(&self, term: &str) -> bool {
        self.terms.binary_search_by(|t| t.as_str().cmp(term)).is_ok()
    }

    /// Whether the query names `symbol`: as one word in any case or separator style, or
    /// by all (at least two) of its parts.
    fn names(&self, symbol: &str) -> bool {
        if self.idents.contains(&normalize(symbol)) {
            return true;
        }
        let (mut parts, mut all) = (0, true);
        split_identifier(symbol, &mut |part| {
            if keep(part) {
                parts += 1;
                all &= self.has(part);
            }
        });
        parts >= 2 && all
    }
}

fn normalize(word: &str) -> String {
    word.chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect()
}

/// Calls `emit` with each search term of `text`, in order, repeats included.
fn tokenize(text: &str, emit: &mut dyn FnMut(&str)) {
    for run in text.split(|c: char| !is_word_char(c)).filter(|r| !r.is_empty()) {
        let mut from = 0;
        let mut class = None;
        for (i, c) in run.char_indices() {
            let unspaced = is_unspaced(c) || (is_mark(c) && class == Some(true));
            if class.is_some_and(|prev| prev != unspaced) {
                segment(&run[from..i], !unspaced, emit);
                from = i;
            }
            class = Some(unspaced);
        }
        segment(&run[from..], class == Some(true), emit);
    }
}

fn segment(seg: &str, unspaced: bool, emit: &mut dyn FnMut(&str)) {
    if unspaced {
        return bigrams(seg, emit);
    }
    if seg.bytes().all(|b| b.is_ascii_lowercase()) {
        if keep(seg) {
            emit(seg);
        }
        return;
    }
    let (mut whole, mut parts) = (String::new(), 0);
    split_identifier(seg, &mut |part| {
        if keep(part) {
            emit(part);
        }
        whole.push_str(part);
        parts += 1;
    });
    if parts > 1 && keep(&whole) {
        emit(&whole);
    }
}

/// Calls `each` with the lowercased parts of an identifier, split at underscores,
/// lower-to-upper humps, the end of an acronym (`HTTPResponse`) and digit boundaries.
fn split_identifier(word: &str, each: &mut dyn FnMut(&str)) {
    fn flush(part: &mut String, each: &mut dyn FnMut(&str)) {
        if !part.is_empty() {
            each(part);
            part.clear();
        }
    }
    let mut part = String::new();
    let mut prev: Option<char> = None;
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let acronym_end = |a: char| a.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase);
        let hump =
            |a: char| (a.is_lowercase() && c.is_uppercase()) || acronym_end(a) || a.is_numeric() != c.is_numeric();
        if c == '_' || prev.is_some_and(hump) {
            flush(&mut part, each);
        }
        prev = (c != '_').then_some(c);
        part.extend(prev.into_iter().flat_map(char::to_lowercase));
    }
    flush(&mut part, each);
}

/// Bigrams of a run in a script written without spaces, and the run itself; a Hangul run
/// also gives its first syllable, which is often a whole verb stem (읽다, 쓰다).
fn bigrams(run: &str, emit: &mut dyn FnMut(&str)) {
    let mut starts: Vec<usize> = run.char_indices().filter(|&(i, c)| i == 0 || !is_mark(c)).map(|(i, _)| i).collect();
    starts.push(run.len());
    if run.len() <= MAX_TERM_BYTES {
        emit(run);
    }
    if starts.len() > 3 {
        for w in starts.windows(3) {
            emit(&run[w[0]..w[2]]);
        }
    }
    if starts.len() > 2 && run.chars().next().is_some_and(|c| matches!(c as u32, 0xAC00..=0xD7AF)) {
        emit(&run[..starts[1]]);
    }
}

fn keep(term: &str) -> bool {
    !(term.len() == 1 || term.len() > MAX_TERM_BYTES || (term.len() <= 8 && STOPWORDS.binary_search(&term).is_ok()))
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || is_mark(c)
}

/// Combining marks of common scripts (not all of them count as alphabetic).
fn is_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x064B..=0x065F | 0x0900..=0x0903 | 0x093A..=0x094F
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x0EB1 | 0x0EB4..=0x0EBC | 0x0EC8..=0x0ECD
        | 0x102B..=0x103E | 0x17B4..=0x17D3 | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x200C..=0x200D
        | 0x20D0..=0x20FF | 0x3099..=0x309A | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F)
}

/// Scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, CJK), and
/// Hangul, whose words carry particles.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x2FFFF)
}

/// The bytes of a regular file (opened without blocking, and never through a link on its
/// path: see [`open_found`]), or `None` when it holds more than `max`.
fn read_capped(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let file = open_found(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(e).with_path(path))?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

fn load(path: &Path, max: u64, old_hash: Option<u64>) -> Loaded {
    match read_capped(path, max) {
        Ok(Some(bytes)) => from_bytes(&bytes, old_hash),
        Ok(None) | Err(_) => Loaded::Unreadable,
    }
}

fn from_bytes(bytes: &[u8], old_hash: Option<u64>) -> Loaded {
    let hash = xxh3_64(bytes);
    if old_hash == Some(hash) {
        return Loaded::Same;
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(SNIFF_BYTES)]).is_some() {
        return Loaded::Binary(hash);
    }
    let text = decode(bytes);
    let line_count = lines(&text).count();
    let minified = text.len() > 4096 && text.len() / line_count > 300;
    Loaded::Chunked { hash, minified, chunks: chunk_text(&text) }
}

fn decode(bytes: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    text
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// A range of lines, 0-based and end-exclusive, and the symbol its first definition names.
struct Span {
    start: usize,
    end: usize,
    symbol: Option<String>,
}

fn chunk_text(text: &str) -> Vec<Draft> {
    let lines: Vec<&str> = lines(text).collect();
    let mut drafts = Vec::new();
    for span in spans(&lines) {
        let mut counts: FxHashMap<String, u32> = FxHashMap::default();
        let mut len = 0;
        for line in &lines[span.start..span.end] {
            tokenize(line, &mut |t| {
                len += 1;
                match counts.get_mut(t) {
                    Some(n) => *n += 1,
                    None => drop(counts.insert(t.to_owned(), 1)),
                }
            });
        }
        if len > 0 {
            let (start, end) = (span.start as u32 + 1, span.end as u32);
            drafts.push(Draft { start, end, len, symbol: span.symbol, terms: counts.into_iter().collect() });
        }
    }
    drafts
}

/// Cuts lines into chunks: at definitions (taking the comments and attributes right above
/// them, and leaving a bare header such as `impl Foo {` with its first member), at a blank
/// line once a chunk has 8 lines, and after 80 lines. Blank lines are trimmed from both
/// ends, and a block of fewer than 3 lines that defines nothing joins the one before it.
fn spans(lines: &[&str]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut cur = Span { start: 0, end: 0, symbol: None };
    let (mut lead, mut defined_at): (Option<usize>, usize) = (None, 0);
    let mut close = |cur: &mut Span, at: usize| {
        let done = std::mem::replace(cur, Span { start: at, end: at, symbol: None });
        spans.push(Span { end: at, ..done });
    };
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if let Some(symbol) = definition(line) {
            let at = lead.map_or(i, |l| l.max(cur.start));
            // A header with nothing after it (`impl Foo {`, `class Bar:`) stays with its first member.
            let header = cur.symbol.is_some() && at <= defined_at + 1;
            if at > cur.start && !header {
                close(&mut cur, at);
            }
            if cur.symbol.is_none() {
                (cur.symbol, defined_at) = (Some(symbol.to_owned()), i);
            }
        } else if trimmed.is_empty() && i - cur.start >= CHUNK_SPLIT_LINES {
            close(&mut cur, i + 1);
        } else if i - cur.start >= CHUNK_MAX_LINES {
            close(&mut cur, i);
        }
        let is_lead = ["//", "#", "/*", "*", "@", "--"].iter().any(|p| trimmed.starts_with(p));
        lead = if is_lead { lead.or(Some(i)) } else { None };
    }
    close(&mut cur, lines.len());

    let blank = |i: usize| lines[i].trim().is_empty();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for mut span in spans {
        while span.start < span.end && blank(span.start) {
            span.start += 1;
        }
        while span.end > span.start && blank(span.end - 1) {
            span.end -= 1;
        }
        match out.last_mut() {
            _ if span.start == span.end => {}
            Some(prev) if span.symbol.is_none() && span.end - span.start < CHUNK_MIN_LINES => {
                prev.end = span.end;
            }
            _ => out.push(span),
        }
    }
    out
}

/// The symbol a line defines, by a classifier without regexes: after modifiers (`pub`,
/// `export`, `async`, …), a keyword such as `fn`, `class`, `def` or `impl` and a name, or
/// `const|let|var NAME = function…` / `… => …`.
fn definition(line: &str) -> Option<&str> {
    const MODIFIERS: &str = "pub export async static public private protected default abstract override unsafe \
                             extern final virtual inline declare internal open sealed data local";
    const KEYWORDS: &str = "fn function class def struct enum trait impl interface type func fun module object mod \
                            macro_rules!";
    let mut rest = line.trim_start();
    loop {
        let word = rest.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '!')).next()?;
        let after = &rest[word.len()..];
        if MODIFIERS.split_whitespace().any(|m| m == word) {
            rest = skip_group(after.trim_start(), '(', ')');
            rest = skip_group(rest.trim_start(), '"', '"').trim_start();
            continue;
        }
        if matches!(word, "const" | "let" | "var") {
            let after = after.trim_start();
            if after.strip_prefix("fn").is_some_and(|a| a.starts_with(char::is_whitespace)) {
                rest = after;
                continue;
            }
            let name = identifier(after)?;
            let value = after[name.len()..].split_once('=')?.1.trim_start();
            let arrow = |v: &str| v.trim_start().starts_with("=>");
            let function = value.starts_with("function")
                || value.starts_with("async")
                || (value.starts_with('(') && value.contains("=>"))
                || identifier(value).is_some_and(|p| arrow(&value[p.len()..]));
            return function.then_some(name);
        }
        let spaced = after.starts_with(char::is_whitespace)
            || (word == "impl" && after.starts_with('<'))
            || (word == "function" && after.starts_with('*'));
        if !spaced || !KEYWORDS.split_whitespace().any(|k| k == word) {
            return None;
        }
        let mut name = after.trim_start_matches(['*', ' ', '\t']);
        match word {
            "impl" => {
                name = skip_group(name, '<', '>').trim_start();
                if let Some((_, target)) = name.split_once(" for ") {
                    name = target.trim_start();
                }
            }
            "func" => name = skip_group(name, '(', ')').trim_start(),
            _ => {}
        }
        return identifier(name);
    }
}

fn identifier(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// `s` after a leading bracketed group (nesting counted), or `s` when it opens none.
fn skip_group(s: &str, open: char, close: char) -> &str {
    if !s.starts_with(open) {
        return s;
    }
    let mut depth = 0;
    for (i, c) in s.char_indices().skip(usize::from(open == close)) {
        if c == open && open != close {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth <= 0 {
                return &s[i + c.len_utf8()..];
            }
        }
    }
    ""
}

/// Lines `start..=end` (1-based) of `text`, at most `max` of them, and how many more the
/// range holds; `None` when the range is past the end.
fn cut_snippet(text: &str, start: u32, end: u32, max: usize) -> Option<(String, u64)> {
    let total = (end - start + 1) as usize;
    let mut out = String::new();
    let mut got = 0;
    for line in lines(text).skip(start as usize - 1).take(total.min(max)) {
        match line.char_indices().nth(LONG_LINE_CHARS) {
            Some((cut, _)) => {
                out.push_str(&line[..cut]);
                out.push('…');
            }
            None => out.push_str(line),
        }
        out.push('\n');
        got += 1;
    }
    out.pop();
    (got > 0).then(|| (out, (total - got) as u64))
}

/// Ranks the code under `base` (a folder inside the roots) for `query`: the files a walk
/// as ripgrep's (ignore files honoured, hidden files skipped, links not followed) yields,
/// taken from the live index's snapshot when it can answer and from a walk otherwise,
/// are offered to [`rank`]. Paths are shown relative to `display_root`.
pub fn rank_folder(
    roots: &Roots,
    base: &Path,
    display_root: &Path,
    query: &str,
    config: &RankConfig,
    index: &CodeIndex,
    cancel: &Cancel,
) -> Result<RankOutcome> {
    let dir = walk::search_folder(roots, base)?;
    let display_root = walk::real_or_self(display_root);
    if let Some(files) = from_snapshot(&dir, &display_root, config)? {
        let out = rank(index, &files, query, config, cancel)?;
        return Ok(RankOutcome { from_index: true, ..out });
    }
    let mut files = Vec::new();
    let mut moved = walk::Moved::default();
    let mut seen = Vec::new();
    let (mut errors, walked) = walk::walk(&dir, &WalkConfig::default(), cancel, |file| {
        // Names may come from a folder swapped for a link while the walk read it; such a
        // file is never read (see `read_capped`), so no hit can show it.
        match std::fs::symlink_metadata(&file) {
            Ok(meta) => {
                let shown = walk::shown(&display_root, &file);
                files.push(RankFile { path: file, shown, size: meta.len(), mtime_ns: walk::mtime_ns(&meta) });
            }
            Err(err) => seen.extend(moved.shown_at(&file, &err)),
        }
        true
    })?;
    let mut out = rank(index, &files, query, config, cancel)?;
    errors.append(&mut seen);
    moved.add(walked.count());
    errors.extend(moved.note());
    out.errors = errors;
    Ok(out)
}

/// The files the walk of `dir` would offer, from the live index's snapshot (fresh as of
/// this call, with their sizes and times); `None` when there is no index or it cannot
/// answer. A file gone since is read by nobody: [`rank`] reads it as unreadable.
fn from_snapshot(dir: &Path, display_root: &Path, config: &RankConfig) -> Result<Option<Vec<RankFile>>> {
    let Some(live) = &config.live else { return Ok(None) };
    let walk_config = WalkConfig::default();
    let filter = walk::Filter::new(&walk_config)?;
    let want = Want { walk: &walk_config, filter: &filter, query: Wanted::All, longest: None, multiline: false };
    Ok(live.select(dir, &want).map(|selection| {
        let file = |f: crate::live::Found| RankFile {
            shown: walk::shown(display_root, &f.path),
            path: f.path,
            size: f.size,
            mtime_ns: f.mtime_ns,
        };
        selection.files.into_iter().map(file).collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::testutil::tmp;

    /// Writes `text` to `dir/name`, making its folders.
    fn put(dir: &Path, name: &str, text: &str) {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// The files `names` under `dir` as a walker offers them.
    fn offer(dir: &Path, names: &[&str]) -> Vec<RankFile> {
        let file = |name: &&str| {
            let path = dir.join(name);
            let meta = std::fs::metadata(&path).map(|m| (m.len(), m.modified().unwrap()));
            let (size, mtime) = meta.unwrap_or((0, std::time::UNIX_EPOCH));
            let mtime_ns = mtime.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i128;
            RankFile { path, shown: name.to_string(), size, mtime_ns }
        };
        names.iter().map(file).collect()
    }

    fn search(index: &CodeIndex, files: &[RankFile], query: &str, config: &RankConfig) -> RankOutcome {
        rank(index, files, query, config, &Cancel::new()).unwrap()
    }

    fn shown(out: &RankOutcome) -> Vec<&str> {
        out.hits.iter().map(|h| h.shown.as_str()).collect()
    }

    #[test]
    fn rank_folder_walks_with_ignore_rules_and_shows_workspace_paths() {
        let dir = tmp();
        put(&dir, ".gitignore", "build/\n");
        put(&dir, "src/config.rs", "pub fn load_settings() -> Settings {\n    Settings::new()\n}\n");
        put(&dir, "build/config.rs", "pub fn load_settings() -> Settings {\n    Settings::new()\n}\n");
        put(&dir, ".hidden/config.rs", "pub fn load_settings() -> Settings {\n    Settings::new()\n}\n");
        let roots = Roots::new(&[&dir]).unwrap();
        let index = CodeIndex::default();
        let out = rank_folder(
            &roots,
            &dir.join("src"),
            &dir,
            "load settings",
            &RankConfig::default(),
            &index,
            &Cancel::new(),
        );
        let out = out.unwrap();
        assert_eq!(shown(&out), ["src/config.rs"]);
        assert_eq!((out.files_considered, out.files_indexed), (1, 1));
        let all =
            rank_folder(&roots, &dir, &dir, "load settings", &RankConfig::default(), &index, &Cancel::new()).unwrap();
        assert_eq!(shown(&all), ["src/config.rs"]);
        assert_eq!(all.files_indexed, 0, "src/config.rs was indexed by the first call");
        let outside = rank_folder(&roots, Path::new("/"), &dir, "x", &RankConfig::default(), &index, &Cancel::new());
        assert_eq!(outside.unwrap_err().kind(), ErrorKind::OutsideRoots);
    }

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize(text, &mut |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn terms_split_identifiers_and_unspaced_scripts() {
        assert_eq!(terms("parseHTTPResponse"), ["parse", "http", "response", "parsehttpresponse"]);
        assert_eq!(terms("read_file(x) utf8"), ["read", "file", "readfile", "utf", "utf8"]);
        assert_eq!(terms("How does the loader work?"), ["loader", "work"]);
        assert_eq!(terms("파일을"), ["파일을", "파일", "일을", "파"]);
        assert_eq!(terms("อ่านไฟล์"), ["อ่านไฟล์", "อ่า", "าน", "นไ", "ไฟ", "ฟล์"]);
        assert_eq!(terms("読むfile"), ["読む", "file"]);
        assert!(terms("?! -- ;").is_empty());
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "stopwords must stay sorted");
    }

    #[test]
    fn definitions_are_recognised_without_regexes() {
        for (line, symbol) in [
            ("pub(crate) async fn load_all<T>(x: T) {", Some("load_all")),
            ("pub const fn new() -> Self {", Some("new")),
            ("extern \"C\" fn callback() {}", Some("callback")),
            ("export default function* gen() {", Some("gen")),
            ("export const parseConfig = async (text) => {", Some("parseConfig")),
            ("const handler = req => req.body;", Some("handler")),
            ("impl<T: Clone> fmt::Display for Wrapper<T> {", Some("Wrapper")),
            ("func (s *Server) Start() error {", Some("Start")),
            ("    def __init__(self):", Some("__init__")),
            ("macro_rules! hashmap {", Some("hashmap")),
            ("const LIMIT = 10;", None),
            ("module.exports = parse;", None),
            ("// fn commented_out()", None),
            ("type: string", None),
        ] {
            assert_eq!(definition(line), symbol, "{line}");
        }
    }

    #[test]
    fn chunks_follow_definitions_blank_lines_and_a_cap() {
        let cut = |text: &str| -> Vec<(usize, usize, Option<String>)> {
            spans(&lines(text).collect::<Vec<_>>()).into_iter().map(|s| (s.start + 1, s.end, s.symbol)).collect()
        };
        let text = "use std::io;\n\n/// Reads.\n#[inline]\nfn read() {\n    body();\n}\n\nfn write() {\n    a();\n}\n";
        let read = Some("read".to_owned());
        assert_eq!(cut(text), [(1, 1, None), (3, 7, read), (9, 11, Some("write".to_owned()))]);
        let text =
            "impl Foo {\n    /// Makes one.\n    fn new() -> Foo {\n        Foo\n    }\n\n    fn old() {\n    }\n}\n";
        assert_eq!(cut(text), [(1, 5, Some("Foo".to_owned())), (7, 9, Some("old".to_owned()))]);
        let block = "a();\n".repeat(10);
        assert_eq!(cut(&format!("{block}\nb();\nb();\n")), [(1, 13, None)], "a tiny tail joins the block before");
        assert_eq!(cut(&format!("{block}\nb();\nb();\nb();\n")), [(1, 10, None), (12, 14, None)]);
        let sizes: Vec<usize> = cut(&"x += 1;\n".repeat(200)).iter().map(|s| s.1 + 1 - s.0).collect();
        assert_eq!(sizes, [80, 80, 40]);
    }

    #[test]
    fn the_definition_of_a_named_symbol_ranks_above_its_callers() {
        let dir = tmp();
        let define = "use std::fs;\n\n/// Reads the settings text.\npub fn parse_config(text: &str) -> Config {\n    \
                      let mut out = Config::default();\n    out.extend(text.lines());\n    out\n}\n";
        put(&dir, "src/loader.rs", define);
        let call = "fn start() {\n    let a = parse_config(&one());\n    let b = parse_config(&two());\n    \
                    let c = parse_config(&three());\n    merge(a, b, c);\n}\n";
        put(&dir, "src/app.rs", call);
        put(
            &dir,
            "web/settings.ts",
            "export function parseConfig(text: string): Config {\n  return decode(text);\n}\n",
        );
        put(&dir, "web/main.ts", "start(parseConfig(a), parseConfig(b));\nreload(parseConfig(c));\nstop();\n");
        let files = offer(&dir, &["src/app.rs", "src/loader.rs", "web/main.ts", "web/settings.ts"]);
        for query in ["parseConfig", "parse config", "parse_config", "where is parse_config defined?"] {
            let out = search(&CodeIndex::default(), &files, query, &RankConfig::default());
            let mut top: Vec<&str> = shown(&out)[..2].to_vec();
            top.sort();
            assert_eq!(top, ["src/loader.rs", "web/settings.ts"], "{query}: {:?}", out.hits);
            assert!(out.hits[0]
                .symbol
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("parseconfig") || s == "parse_config"));
        }
    }

    #[test]
    fn a_matching_file_name_is_boosted() {
        let dir = tmp();
        let body = "fn run() {\n    apply(load_settings());\n}\n";
        put(&dir, "src/other.rs", body);
        put(&dir, "src/settings.rs", body);
        let out = search(
            &CodeIndex::default(),
            &offer(&dir, &["src/other.rs", "src/settings.rs"]),
            "settings",
            &RankConfig::default(),
        );
        assert_eq!(shown(&out), ["src/settings.rs", "src/other.rs"]);
        assert!((out.hits[0].score / out.hits[1].score - 1.3).abs() < 1e-9);
    }

    #[test]
    fn tests_and_minified_files_are_damped() {
        let dir = tmp();
        put(&dir, "src/lexer.rs", "fn lex() {\n    tokenize(x);\n}\n");
        put(&dir, "src/__tests__/cases.rs", "fn case() {\n    tokenize(tokenize(tokenize(x)));\n}\n");
        put(&dir, "dist/lexer.min.js", "function a(){tokenize(tokenize(tokenize(x)))}\n");
        let files = offer(&dir, &["dist/lexer.min.js", "src/__tests__/cases.rs", "src/lexer.rs"]);
        let out = search(&CodeIndex::default(), &files, "tokenize", &RankConfig::default());
        assert_eq!(shown(&out), ["src/lexer.rs", "src/__tests__/cases.rs", "dist/lexer.min.js"]);
        assert_eq!(damping("yarn.lock", false), GENERATED_DAMP);
        assert_eq!(damping("vendor/lib/a.go", false), GENERATED_DAMP);
        assert_eq!(damping("src/app.spec.ts", false), TEST_DAMP);
        assert_eq!(damping("src/bundle.js", true), GENERATED_DAMP);
        assert_eq!(damping("src/contest.rs", false), 1.0);
    }

    #[test]
    fn korean_and_thai_queries_find_comments() {
        let dir = tmp();
        put(&dir, "src/io.rs", "/// 파일을 읽습니다\npub fn load(path: &Path) -> Vec<u8> {\n    fetch(path)\n}\n");
        put(&dir, "src/net.rs", "/// 네트워크로 보냅니다\npub fn send(data: &[u8]) {\n    push(data);\n}\n");
        put(&dir, "src/disk.rs", "// ฟังก์ชันนี้อ่านไฟล์จากดิสก์\nfn read_disk() {\n    read_all();\n}\n");
        put(&dir, "src/wire.rs", "// ส่งข้อมูลผ่านเครือข่าย\nfn send_wire() {\n    write_all();\n}\n");
        let files = offer(&dir, &["src/disk.rs", "src/io.rs", "src/net.rs", "src/wire.rs"]);
        let out = search(&CodeIndex::default(), &files, "파일 읽기", &RankConfig::default());
        assert_eq!(shown(&out), ["src/io.rs"]);
        assert!(out.hits[0].snippet.starts_with("/// 파일을 읽습니다\npub fn load"));
        let out = search(&CodeIndex::default(), &files, "อ่านไฟล์", &RankConfig::default());
        assert_eq!(shown(&out)[0], "src/disk.rs");
        assert_eq!(out.hits[0].symbol.as_deref(), Some("read_disk"));
    }

    #[test]
    fn the_index_is_reused_and_refreshed() {
        let dir = tmp();
        put(&dir, "a.rs", "fn alpha() {\n    first();\n}\n");
        put(&dir, "b.rs", "fn beta() {\n    second();\n}\n");
        let (index, config) = (CodeIndex::default(), RankConfig::default());
        let out = search(&index, &offer(&dir, &["a.rs", "b.rs"]), "alpha", &config);
        assert_eq!((out.files_indexed, out.files_considered, shown(&out)), (2, 2, vec!["a.rs"]));
        let out = search(&index, &offer(&dir, &["a.rs", "b.rs"]), "beta", &config);
        assert_eq!((out.files_indexed, shown(&out)), (0, vec!["b.rs"]));
        put(&dir, "b.rs", "fn beta() {\n    second();\n    gamma_ray();\n}\n");
        let files = offer(&dir, &["a.rs", "b.rs"]);
        let out = search(&index, &files, "gamma ray", &config);
        assert_eq!((out.files_indexed, shown(&out)), (1, vec!["b.rs"]));
        assert!(out.hits[0].snippet.contains("gamma_ray();"));

        // Changed behind the caller's back (its size and mtime as before): found stale
        // when the snippet is cut, indexed again, and rescored.
        put(&dir, "b.rs", "// moved\n\nfn beta() {\n    third();\n    gamma();\n}\n");
        let out = search(&index, &files, "beta", &config);
        assert_eq!(out.files_indexed, 1);
        assert_eq!((out.hits[0].start_line, out.hits[0].end_line), (3, 6));
        assert!(out.hits[0].snippet.starts_with("fn beta() {\n    third();"));
    }

    #[test]
    fn an_unchanged_size_and_mtime_are_trusted_without_a_read() {
        let dir = tmp();
        put(&dir, "a.rs", "fn alpha() {\n    gamma();\n}\n");
        let mut files = offer(&dir, &["a.rs"]);
        let index = CodeIndex::default();
        assert_eq!(search(&index, &files, "alpha", &RankConfig::default()).files_indexed, 1);
        put(&dir, "a.rs", "fn alpha() {\n    omega();\n}\n");
        let out = search(&index, &files, "omega", &RankConfig::default());
        assert_eq!((out.files_indexed, out.hits.len()), (0, 0));
        // A touch is read, found equal by its hash, and not chunked again.
        put(&dir, "a.rs", "fn alpha() {\n    gamma();\n}\n");
        files[0].mtime_ns += 1;
        assert_eq!(search(&index, &files, "gamma", &RankConfig::default()).files_indexed, 0);
        assert_eq!(index.lock().entries[&files[0].path].mtime_ns, files[0].mtime_ns);
    }

    #[test]
    fn the_budget_bounds_the_index() {
        let dir = tmp();
        put(&dir, "a.rs", "fn alpha() {\n    first();\n}\n");
        let files = offer(&dir, &["a.rs"]);
        let index = CodeIndex::with_budget(1);
        assert_eq!(search(&index, &files, "alpha", &RankConfig::default()).hits.len(), 1);
        assert!(index.lock().entries.is_empty() && index.lock().terms.is_empty());
        assert_eq!(search(&index, &files, "alpha", &RankConfig::default()).files_indexed, 1);

        // Renumbered terms find the same chunks with the same scores.
        let index = CodeIndex::default();
        let before = search(&index, &files, "first alpha", &RankConfig::default()).hits;
        index.lock().next_term += 1000;
        index.lock().compact();
        assert_eq!(search(&index, &files, "first alpha", &RankConfig::default()).hits, before);
    }

    #[test]
    fn binary_oversized_and_missing_files_are_skipped() {
        let dir = tmp();
        put(&dir, "ok.rs", "fn needle() {}\n");
        put(&dir, "bin.rs", "fn needle() {}\n\0\0");
        put(&dir, "big.rs", &format!("fn needle() {{}}\n{}", "// filler\n".repeat(200)));
        std::fs::write(dir.join("bad.rs"), b"fn needle() {}\n\xff\xfe caf\xe9\n").unwrap();
        let files = offer(&dir, &["big.rs", "bin.rs", "gone.rs", "ok.rs", "bad.rs", "ok.rs"]);
        let mut config = RankConfig::default();
        config.max_file_bytes(1000);
        let out = search(&CodeIndex::default(), &files, "needle", &config);
        let mut found = shown(&out);
        found.sort();
        assert_eq!(found, ["bad.rs", "ok.rs"], "invalid UTF-8 is decoded lossily");
        assert_eq!((out.skipped, out.files_considered), (3, 2));
    }

    #[test]
    fn pages_by_offset_are_the_ranking_in_order_with_its_total() {
        let dir = tmp();
        let names: Vec<String> = (0..40).map(|i| format!("f{i:02}.rs")).collect();
        for (i, name) in names.iter().enumerate() {
            put(&dir, name, &format!("fn handler{i}() {{\n    serve();\n{}}}\n", "    serve();\n".repeat(i % 5)));
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let files = offer(&dir, &names);
        let index = CodeIndex::default();
        let whole = search(&index, &files, "serve", RankConfig::default().top_k(25));
        assert_eq!(whole.total, 40);
        let mut config = RankConfig::default();
        for size in [1, 3, 8] {
            let mut pages: Vec<String> = Vec::new();
            let mut offset = 0;
            while offset < 40 {
                let out = search(&index, &files, "serve", config.top_k(size).offset(offset));
                assert_eq!(out.total, 40);
                pages.extend(out.hits.iter().map(|h| h.shown.clone()));
                offset += size;
            }
            assert_eq!(pages.len(), 40, "pages of {size}");
            assert_eq!(pages[..25], shown(&whole)[..], "pages of {size}");
        }
    }

    #[test]
    fn top_k_is_honoured_clamped_and_ordered() {
        let dir = tmp();
        let names: Vec<String> = (0..30).map(|i| format!("f{i:02}.rs")).collect();
        for name in &names {
            put(&dir, name, "fn handler() {\n    serve();\n}\n");
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let files = offer(&dir, &names);
        let mut config = RankConfig::default();
        let out = search(&CodeIndex::default(), &files, "serve", &config);
        assert_eq!(shown(&out), names[..8], "ties are ordered by path");
        assert_eq!(search(&CodeIndex::default(), &files, "serve", config.top_k(3)).hits.len(), 3);
        assert_eq!(search(&CodeIndex::default(), &files, "serve", config.top_k(100)).hits.len(), 25);
        assert_eq!(search(&CodeIndex::default(), &files, "serve", config.top_k(0)).hits.len(), 1);
        let reversed: Vec<RankFile> = files.iter().rev().cloned().collect();
        let again = search(&CodeIndex::default(), &reversed, "serve", &RankConfig::default());
        assert_eq!(again.hits, out.hits);
    }

    #[test]
    fn later_hits_of_one_file_are_damped() {
        let dir = tmp();
        put(
            &dir,
            "a.rs",
            "fn one() {\n    serve();\n}\n\nfn two() {\n    serve();\n}\n\nfn six() {\n    serve();\n}\n",
        );
        put(&dir, "b.rs", "fn ten() {\n    serve();\n}\n");
        let out = search(&CodeIndex::default(), &offer(&dir, &["a.rs", "b.rs"]), "serve", &RankConfig::default());
        assert_eq!(shown(&out), ["a.rs", "b.rs", "a.rs", "a.rs"]);
        let scores: Vec<f64> = out.hits.iter().map(|h| h.score / out.hits[0].score).collect();
        assert!((scores[2] - 0.8).abs() < 1e-9 && (scores[3] - 0.64).abs() < 1e-9, "{scores:?}");
    }

    #[test]
    fn long_chunks_and_lines_are_cut() {
        let dir = tmp();
        let long =
            format!("fn long_one() {{\n    let s = \"{}\";\n{}}}\n", "x".repeat(600), "    step();\n".repeat(60));
        put(&dir, "long.rs", &long);
        let mut config = RankConfig::default();
        config.snippet_lines(5);
        let hit = search(&CodeIndex::default(), &offer(&dir, &["long.rs"]), "step", &config).hits.remove(0);
        assert_eq!((hit.start_line, hit.end_line, hit.more_lines), (1, 63, 58));
        assert_eq!(hit.snippet.lines().count(), 5);
        assert!(hit.snippet.lines().nth(1).unwrap().ends_with("xxx…"));
        assert!(hit.snippet.lines().nth(1).unwrap().chars().count() == LONG_LINE_CHARS + 1);
    }

    #[test]
    fn cancel_and_empty_queries() {
        let dir = tmp();
        put(&dir, "a.rs", "fn alpha() {}\n");
        let files = offer(&dir, &["a.rs"]);
        let cancel = Cancel::new();
        cancel.cancel();
        let err = rank(&CodeIndex::default(), &files, "alpha", &RankConfig::default(), &cancel).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Cancelled);
        let out = search(&CodeIndex::default(), &files, " ?! the ", &RankConfig::default());
        assert!(out.hits.is_empty() && out.files_indexed == 0);
    }
}
