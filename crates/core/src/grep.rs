use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::confine::open_found;
use crate::error::{Error, ErrorKind, Result};
use crate::live::{plan, LiveIndex, Selection, Want};
use crate::tokens::count_tokens;
use crate::walk::{self, Start, WalkConfig};
use crate::Roots;

/// Files searched by one task of the caller's rayon pool.
const BATCH: usize = 16;
/// The most files of a folder searched with the walk on one thread (see [`grep`]); past
/// this, the parallel walker takes over.
const PROBE: usize = 256;
/// The most memory a search holds for one file's text: its longest line, or in
/// multiline mode the whole file.
const HEAP_LIMIT: usize = 64 << 20;
/// The most bytes of report a content search returns by default; past it, results are
/// truncated.
const OUTPUT_BUDGET: usize = 256 << 10;
/// Read errors kept for the report; the rest are counted.
/// The most bytes held for the results skipped before a page's offset: past this, a
/// deeper page of a search whose earlier results hold more text comes back empty, and
/// the report says the offset is too deep rather than past the end.
pub const HELD_FOR_OFFSET: usize = 32 * 1024 * 1024;
const MAX_ERRORS: usize = 100;

/// What [`grep`] reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GrepMode {
    /// The matching lines (`path:line:text`), with context lines (`path-line-text`).
    #[default]
    Content,
    /// The paths of files with a match.
    Files,
    /// The number of matches per file (`path:count`).
    Count,
}

/// Options of [`grep`]. The defaults are ripgrep's, with `--crlf` (so `$` matches
/// before a CRLF); ignore files count outside git repositories too (`--no-require-git`).
#[derive(Clone, Debug)]
pub struct GrepConfig {
    walk: WalkConfig,
    mode: GrepMode,
    case_insensitive: bool,
    multiline: bool,
    before: usize,
    after: usize,
    limit: usize,
    offset: usize,
    line_numbers: bool,
    max_columns: usize,
    heap_limit: usize,
    max_output: usize,
    only_matching: bool,
    exclude: Option<String>,
    max_per_file: Option<u64>,
    max_tokens: Option<usize>,
    live: Option<Arc<LiveIndex>>,
}

impl Default for GrepConfig {
    fn default() -> GrepConfig {
        GrepConfig {
            walk: WalkConfig::default(),
            mode: GrepMode::Content,
            case_insensitive: false,
            multiline: false,
            before: 0,
            after: 0,
            limit: 1000,
            offset: 0,
            line_numbers: true,
            max_columns: 500,
            heap_limit: HEAP_LIMIT,
            max_output: OUTPUT_BUDGET,
            only_matching: false,
            exclude: None,
            max_per_file: None,
            max_tokens: None,
            live: None,
        }
    }
}

impl GrepConfig {
    /// The walk: ignore rules, hidden files, include globs, file type.
    pub fn walk(&mut self) -> &mut WalkConfig {
        &mut self.walk
    }

    /// What to report. By default, this is [`GrepMode::Content`].
    pub fn mode(&mut self, mode: GrepMode) -> &mut Self {
        self.mode = mode;
        self
    }

    /// Matches letters regardless of case. By default, this is disabled.
    pub fn case_insensitive(&mut self, yes: bool) -> &mut Self {
        self.case_insensitive = yes;
        self
    }

    /// Lets a match span lines, with `.` matching a newline (ripgrep's `-U
    /// --multiline-dotall`). By default, this is disabled.
    pub fn multiline(&mut self, yes: bool) -> &mut Self {
        self.multiline = yes;
        self
    }

    /// Lines shown before each match. By default, this is 0.
    pub fn before(&mut self, lines: usize) -> &mut Self {
        self.before = lines;
        self
    }

    /// Lines shown after each match. By default, this is 0.
    pub fn after(&mut self, lines: usize) -> &mut Self {
        self.after = lines;
        self
    }

    /// The most results shown: matching lines (never context lines) in content mode,
    /// files or counts in the others. By default, this is 1000.
    pub fn limit(&mut self, limit: usize) -> &mut Self {
        self.limit = limit.max(1);
        self
    }

    /// Results skipped before the first shown, in the same units as the limit. By
    /// default, this is 0.
    pub fn offset(&mut self, offset: usize) -> &mut Self {
        self.offset = offset;
        self
    }

    /// Shows line numbers in content mode. By default, this is enabled.
    pub fn line_numbers(&mut self, yes: bool) -> &mut Self {
        self.line_numbers = yes;
        self
    }

    /// The most memory held for one file's text: its longest line, or in multiline mode
    /// the whole file. A file that needs more is reported as an error and skipped. By
    /// default, this is 64 MiB.
    pub fn heap_limit(&mut self, bytes: usize) -> &mut Self {
        self.heap_limit = bytes.max(1024);
        self
    }

    /// The most bytes of report in content mode: the report ends before the match that
    /// would take it past this, and says it was truncated. By default, this is 256 KiB.
    pub fn max_output(&mut self, bytes: usize) -> &mut Self {
        self.max_output = bytes.max(1024);
        self
    }

    /// Shows only the matched parts of each matching line, one per result line, in
    /// content mode (ripgrep's `-o`); empty matches are not shown and context lines are
    /// not either. By default, this is disabled.
    pub fn only_matching(&mut self, yes: bool) -> &mut Self {
        self.only_matching = yes;
        self
    }

    /// A second regular expression: a matching line that it also matches is left out, in
    /// every mode. By default, there is none.
    pub fn exclude(&mut self, pattern: Option<&str>) -> &mut Self {
        self.exclude = pattern.filter(|p| !p.is_empty()).map(str::to_string);
        self
    }

    /// The most matching lines taken from one file (ripgrep's `-m`). By default, there
    /// is no limit.
    pub fn max_per_file(&mut self, n: Option<u64>) -> &mut Self {
        self.max_per_file = n.map(|n| n.max(1));
        self
    }

    /// The most tokens (o200k) of report in content mode: like [`GrepConfig::max_output`],
    /// the report ends before the match that would take it past this. By default, there
    /// is no token limit.
    pub fn max_tokens(&mut self, tokens: Option<usize>) -> &mut Self {
        self.max_tokens = tokens;
        self
    }

    /// The live index of the workspace: when it can answer, only the files it names as
    /// possible matches are read (the results are the same). By default, there is none.
    pub fn live(&mut self, index: Option<Arc<LiveIndex>>) -> &mut Self {
        self.live = index;
        self
    }

    /// The most bytes of results held while searching: more than the report can show, so
    /// that the report, not the search, decides where it ends, plus room for the results
    /// skipped before `offset` (a line is held cut to `max_columns`), so that a deep page
    /// is not starved by the ones before it, up to [`HELD_FOR_OFFSET`].
    fn held_budget(&self) -> usize {
        let page = self.max_output.saturating_mul(2);
        let per_result =
            (1 + self.before + self.after).saturating_mul(self.max_columns.saturating_mul(4).saturating_add(16));
        page.saturating_add(self.offset.saturating_mul(per_result).min(HELD_FOR_OFFSET))
    }

    /// Characters of a line shown; a longer line is cut to a window around its first
    /// match. By default, this is 500.
    pub fn max_columns(&mut self, chars: usize) -> &mut Self {
        self.max_columns = chars.max(20);
        self
    }
}

/// What [`grep`] found.
#[derive(Debug, Default)]
pub struct GrepOutcome {
    /// The report for the model: one line per result, in path then line order.
    pub text: String,
    /// The files shown, in order (relative to the display root when inside it).
    pub files: Vec<String>,
    /// For each file shown: its matching lines (content and files modes: those found,
    /// at most the limit; count mode: all).
    pub counts: Vec<u64>,
    /// Results shown (lines, files or counts, by mode).
    pub shown: usize,
    /// Files with at least one match.
    pub matched_files: usize,
    /// Matching lines found (a lower bound when `truncated`).
    pub matches: u64,
    /// Whether results were left out (past the limit).
    pub truncated: bool,
    /// Lines shown cut to the column limit.
    pub cut_lines: usize,
    /// Files skipped because they hold binary data (a NUL byte).
    pub binary_files: usize,
    /// Files or folders that could not be read, as messages (at most 100, then a count).
    pub errors: Vec<String>,
    /// Whether the report stopped at its byte budget ([`GrepConfig::max_output`]) rather than the limit.
    pub budget_reached: bool,
    /// Lines of each record of the report, in order: a record is one result (a matching
    /// line with its context and separator, a file, a count). A page ends between records.
    pub records: Vec<u32>,
    /// For each record, the index in `files` of the file it shows.
    pub record_files: Vec<u32>,
    /// Whether the context of the first match was cut to fit the page.
    pub context_cut: bool,
    /// Whether the live index chose the files read (else the tree was walked).
    pub from_index: bool,
    /// Files read.
    pub files_read: usize,
}

/// Searches the files under `base` (a folder, or one file) for `pattern` (Rust regex
/// syntax, as ripgrep), honouring ignore files and skipping hidden and binary files.
///
/// Files are searched in parallel; results are sorted by path, then line, before the
/// offset and limit apply, so the output is deterministic. Memory follows the limit:
/// files that can no longer be shown are dropped as better-placed ones arrive.
pub fn grep(
    roots: &Roots,
    base: &Path,
    display_root: &Path,
    pattern: &str,
    config: &GrepConfig,
    cancel: &Cancel,
) -> Result<GrepOutcome> {
    let matcher = build_matcher(pattern, config)?;
    let exclude = match &config.exclude {
        Some(p) => Some(
            build_matcher(p, config)
                .map_err(|e| Error::new(ErrorKind::InvalidPattern, format!("exclude pattern: {}", e.message())))?,
        ),
        None => None,
    };
    let start = walk::start(roots, base)?;
    let display_root = walk::real_or_self(display_root);
    let need = config.offset.saturating_add(config.limit) as u64;
    let collector = Mutex::new(Collector { need, held_budget: config.held_budget(), ..Collector::default() });
    let read = AtomicUsize::new(0);
    let search = |paths: Vec<PathBuf>| {
        let mut searcher = searcher(config);
        read.fetch_add(paths.len(), Ordering::Relaxed);
        for path in paths {
            if cancel.is_cancelled() {
                return;
            }
            let hits = search_file(&mut searcher, &matcher, exclude.as_ref(), &path, config, need, cancel);
            collector.lock().unwrap().add(path, hits);
        }
    };
    let mut errors = Vec::new();
    let mut moved = walk::Moved::default();
    let listed = match &start {
        Start::Dir(dir) => indexed(dir, pattern, config)?,
        Start::File(_) => None,
    };
    let from_index = listed.is_some();
    let binary_unread = listed.as_ref().map_or(0, |l| l.binary_unread);
    match (start, listed.map(|l| l.files)) {
        (_, Some(files)) => {
            files.par_chunks(BATCH).for_each(|chunk| search(chunk.iter().map(|f| f.path.clone()).collect()))
        }
        (Start::File(path), None) => {
            // One file named directly: a failure to open it is the answer, not a note (and
            // a folder on its path swapped for a link since it was resolved opens nothing).
            open_found(&path)?;
            search(vec![path])
        }
        // A folder of at most PROBE files is walked here and its files searched in batches
        // on the caller's rayon pool (the last batch here); a larger tree is walked again,
        // by the parallel walker, each file searched on the thread that found it.
        (Start::Dir(dir), None) => {
            let mut found = Vec::new();
            let walked = walk::walk(&dir, &config.walk, cancel, |file| {
                found.push(file);
                found.len() <= PROBE
            })?;
            if found.len() <= PROBE {
                (errors, moved) = walked;
                rayon::scope(|scope| {
                    let search = &search;
                    let mut batches = found.chunks(BATCH).map(<[PathBuf]>::to_vec).collect::<Vec<_>>();
                    let last = batches.pop().unwrap_or_default();
                    for batch in batches {
                        scope.spawn(move |_| search(batch));
                    }
                    search(last);
                });
            } else {
                (errors, moved) = walk::walk_parallel(&dir, &config.walk, cancel, || {
                    let mut searcher = searcher(config);
                    let (collector, matcher, exclude, read) = (&collector, &matcher, exclude.as_ref(), &read);
                    move |path: PathBuf| {
                        if cancel.is_cancelled() {
                            return false;
                        }
                        read.fetch_add(1, Ordering::Relaxed);
                        let hits = search_file(&mut searcher, matcher, exclude, &path, config, need, cancel);
                        collector.lock().unwrap().add(path, hits);
                        true
                    }
                })?;
            }
        }
    }
    cancel.check()?;
    let mut collector = collector.into_inner().unwrap();
    collector.binary_files += binary_unread;
    errors.truncate(MAX_ERRORS);
    errors.extend(collector.errors.iter().take(MAX_ERRORS - errors.len()).cloned());
    if collector.more_errors > 0 {
        errors.push(format!("… and {} more", collector.more_errors));
    }
    moved.add(collector.moved);
    errors.extend(moved.note());
    let mut out = render(&collector, config, &display_root);
    out.errors = errors;
    out.from_index = from_index;
    out.files_read = read.into_inner();
    Ok(out)
}

/// The files under `dir` the live index says may match, in path order, when it can
/// answer for this search.
fn indexed(dir: &Path, pattern: &str, config: &GrepConfig) -> Result<Option<Selection>> {
    let Some(live) = &config.live else { return Ok(None) };
    let filter = walk::Filter::new(&config.walk)?;
    let (query, longest) = plan::plan_and_span(pattern, config.case_insensitive, config.multiline);
    let want = Want { walk: &config.walk, filter: &filter, query, longest, multiline: config.multiline };
    Ok(live.select(dir, &want))
}

fn build_matcher(pattern: &str, config: &GrepConfig) -> Result<RegexMatcher> {
    let mut builder = RegexMatcherBuilder::new();
    builder.multi_line(true).unicode(true).octal(false).case_insensitive(config.case_insensitive);
    if config.multiline {
        builder.dot_matches_new_line(true).crlf(true).line_terminator(None);
    } else {
        builder.line_terminator(Some(b'\n')).dot_matches_new_line(false).crlf(true);
    }
    builder.build(pattern).map_err(|e| {
        // grep-regex reports errors on the pattern as it wrapped it (`(?:foo()`); the
        // pattern's own parser points at the column the caller wrote.
        let own = regex_syntax::ParserBuilder::new().build().parse(pattern).err();
        Error::new(ErrorKind::InvalidPattern, own.map_or_else(|| e.to_string(), |own| own.to_string()))
    })
}

fn searcher(config: &GrepConfig) -> Searcher {
    let context = config.mode == GrepMode::Content && !config.only_matching;
    SearcherBuilder::new()
        .line_terminator(LineTerminator::crlf())
        .line_number(true)
        .multi_line(config.multiline)
        .before_context(if context { config.before } else { 0 })
        .after_context(if context { config.after } else { 0 })
        .binary_detection(BinaryDetection::quit(b'\x00'))
        // A line longer than this, or in multiline mode a file larger, is an error for that
        // file, not an allocation that could take the host down.
        .heap_limit(Some(config.heap_limit))
        .build()
}

/// One line of a file's results.
struct Line {
    number: u64,
    is_match: bool,
    text: String,
    cut: bool,
}

/// What one file gave.
#[derive(Default)]
struct FileHits {
    lines: Vec<Line>,
    /// Matching lines (count mode: matches, as `rg --count` counts them).
    matches: u64,
    /// The search stopped before the end of the file.
    stopped: bool,
    /// Bytes of text held in `lines` (with a little for each line's path and number).
    bytes: usize,
    binary: bool,
    error: Option<String>,
    /// The file was gone, or reached through a link, when opened (see [`walk::Moved`]).
    moved: bool,
}

fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    exclude: Option<&RegexMatcher>,
    path: &Path,
    config: &GrepConfig,
    need: u64,
    cancel: &Cancel,
) -> FileHits {
    let mut sink = FileSink { matcher, exclude, config, need, cancel, hits: FileHits::default(), trail_until: None };
    // Opened without blocking and refused unless still a regular file: a file swapped for
    // a FIFO after the walk must not hang a worker.
    // A file gone, or now behind a link, is counted and not named: its name may come from
    // a folder that was swapped for a link while the walk read it.
    let file = match open_found(path) {
        Ok(file) => file,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::OutsideRoots) => {
            sink.hits.moved = true;
            return sink.hits;
        }
        Err(e) => {
            sink.hits.error = Some(e.to_string());
            return sink.hits;
        }
    };
    if let Err(e) = searcher.search_file(matcher, &file, &mut sink) {
        sink.hits.error = Some(format!("{}: {e}", path.display()));
    }
    sink.hits
}

struct FileSink<'a> {
    matcher: &'a RegexMatcher,
    exclude: Option<&'a RegexMatcher>,
    config: &'a GrepConfig,
    need: u64,
    cancel: &'a Cancel,
    hits: FileHits,
    /// Once a file gave its most matches (`max_per_file`): the last line of the context
    /// after the last one, shown as ripgrep's `-m` shows it; later lines end the file.
    trail_until: Option<u64>,
}

impl FileSink<'_> {
    fn push(&mut self, number: u64, is_match: bool, bytes: &[u8]) {
        let (text, cut) = shown_line(self.matcher, bytes, is_match, self.config.max_columns);
        self.hits.bytes += text.len() + 16;
        self.hits.lines.push(Line { number, is_match, text, cut });
    }

    /// Whether a matching line is left out by the exclude pattern.
    fn excluded(&self, line: &[u8]) -> bool {
        self.exclude.is_some_and(|m| m.is_match(line).unwrap_or(false))
    }

    /// Whether this file holds all it may: the page's results, or more text than a report
    /// shows. Later matching lines are counted, not kept.
    fn saturated(&self) -> bool {
        self.hits.matches > self.need || self.hits.bytes > self.config.held_budget()
    }

    /// Counts the matching lines of a match without keeping them (past the page).
    fn count_only(&mut self, mat: &SinkMatch<'_>) -> bool {
        self.hits.stopped = true;
        if self.config.only_matching {
            let mut parts = 0;
            let _ = self.matcher.find_iter(mat.bytes(), |m| {
                parts += !m.is_empty() as u64;
                true
            });
            let room = self.config.max_per_file.map_or(u64::MAX, |max| max.saturating_sub(self.hits.matches));
            self.hits.matches += parts.min(room);
            return !self.file_full();
        }
        for line in mat.lines() {
            if self.file_full() {
                break;
            }
            if !self.excluded(line) {
                self.hits.matches += 1;
            }
        }
        !self.file_full()
    }

    /// Whether this file has given all the matching lines it may (`max_per_file`).
    fn file_full(&self) -> bool {
        self.config.max_per_file.is_some_and(|max| self.hits.matches >= max)
    }

    /// The matched parts of a match's bytes, one result each (`-o`).
    fn push_matches(&mut self, first: u64, bytes: &[u8]) {
        let mut parts = Vec::new();
        let _ = self.matcher.find_iter(bytes, |m| {
            if !m.is_empty() {
                parts.push(m);
            }
            true
        });
        for m in parts {
            if self.file_full() {
                return;
            }
            // Past the page the parts are counted, not kept: the total stays exact.
            if self.saturated() {
                self.hits.stopped = true;
                self.hits.matches += 1;
                continue;
            }
            let number = first + memchr::memchr_iter(b'\n', &bytes[..m.start()]).count() as u64;
            let text = String::from_utf8_lossy(&bytes[m]);
            let text = text.trim_end_matches(['\n', '\r']);
            let (shown, cut) = shown_line(self.matcher, text.as_bytes(), true, self.config.max_columns);
            self.hits.bytes += shown.len() + 16;
            self.hits.lines.push(Line { number, is_match: true, text: shown, cut });
            self.hits.matches += 1;
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> std::result::Result<bool, std::io::Error> {
        if self.cancel.is_cancelled() {
            return Ok(false);
        }
        if self.exclude.is_some() && mat.lines().all(|line| self.excluded(line)) {
            return Ok(true);
        }
        match self.config.mode {
            GrepMode::Files => {
                self.hits.matches = 1;
                self.hits.stopped = true;
                return Ok(false);
            }
            GrepMode::Count => {
                self.hits.matches += if searcher.multi_line_with_matcher(self.matcher) {
                    let mut n = 0;
                    let _ = self.matcher.find_iter(mat.bytes(), |_| {
                        n += 1;
                        true
                    });
                    n.max(1)
                } else {
                    1
                };
                return Ok(!self.file_full());
            }
            GrepMode::Content => {}
        }
        let first = mat.line_number().unwrap_or(0);
        if let Some(until) = self.trail_until {
            // Past the most matches: a matching line inside the trailing context is context.
            for (i, line) in mat.lines().enumerate() {
                if first + i as u64 > until {
                    return Ok(false);
                }
                self.push(first + i as u64, false, line);
            }
            return Ok(true);
        }
        // Past the page (or past what a report can show) matching lines are counted and
        // not kept, so that the totals do not depend on the page asked for.
        if self.hits.stopped || self.saturated() {
            return Ok(self.count_only(mat));
        }
        if self.config.only_matching {
            self.push_matches(first, mat.bytes());
        } else {
            for (i, line) in mat.lines().enumerate() {
                // One multiline match may span millions of lines: keep none past the page.
                if self.saturated() {
                    self.hits.stopped = true;
                }
                if self.excluded(line) || self.file_full() {
                    continue;
                }
                if !self.hits.stopped {
                    self.push(first + i as u64, true, line);
                }
                self.hits.matches += 1;
            }
        }
        // A file that gave its most matching lines ends after the context that follows
        // the last, with nothing left out of what was asked for.
        if self.file_full() && self.config.mode == GrepMode::Content {
            let last = self.hits.lines.last().map_or(first, |l| l.number);
            self.trail_until = Some(last + self.config.after as u64);
            return Ok(self.config.after > 0 && !self.config.only_matching);
        }
        Ok(!self.file_full())
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> std::result::Result<bool, std::io::Error> {
        if self.hits.stopped || self.hits.bytes > self.config.held_budget() {
            self.hits.stopped = true;
            return Ok(!self.cancel.is_cancelled());
        }
        let number = context.line_number().unwrap_or(0);
        if self.trail_until.is_some_and(|until| number > until) {
            return Ok(false);
        }
        self.push(number, false, context.bytes());
        Ok(!self.cancel.is_cancelled())
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> std::result::Result<bool, std::io::Error> {
        self.hits.binary = true;
        Ok(false)
    }
}

/// A line as shown: without its terminator, invalid UTF-8 replaced, and cut to
/// `max` characters around its first match when longer.
fn shown_line(matcher: &RegexMatcher, bytes: &[u8], is_match: bool, max: usize) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    // A line of at most `max` bytes has at most `max` characters.
    if bytes.len() <= max {
        return (String::from_utf8_lossy(bytes).into_owned(), false);
    }
    let text = String::from_utf8_lossy(bytes);
    let chars = text.chars().count();
    if chars <= max {
        return (text.into_owned(), false);
    }
    let at = if is_match { matcher.find(text.as_bytes()).ok().flatten().map_or(0, |m| m.start()) } else { 0 };
    let at_char = text[..floor_boundary(&text, at)].chars().count();
    let from = at_char.saturating_sub(max / 5).min(chars - max);
    let mut out = String::with_capacity(max * 2);
    if from > 0 {
        out.push('…');
    }
    out.extend(text.chars().skip(from).take(max));
    if from + max < chars {
        out.push('…');
    }
    let _ = write!(out, " [line of {chars} chars cut]");
    (out, true)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Every file's results, kept in path order, trimmed to what can still be shown.
#[derive(Default)]
struct Collector {
    /// By [`walk::sort_key`]: path order, component by component.
    files: BTreeMap<Vec<u8>, (PathBuf, FileHits)>,
    /// Results (by mode) held in `files`.
    held: u64,
    /// Bytes of text held in `files`.
    held_bytes: usize,
    /// Read errors beyond the ones kept.
    more_errors: usize,
    /// Files gone, or reached through a link, when opened.
    moved: usize,
    /// The most bytes of text held (see [`GrepConfig::max_output`]).
    held_budget: usize,
    need: u64,
    matched_files: usize,
    matches: u64,
    binary_files: usize,
    /// A file was dropped or stopped early: results exist beyond those held.
    dropped: bool,
    errors: Vec<String>,
}

impl Collector {
    fn add(&mut self, path: PathBuf, hits: FileHits) {
        if hits.moved {
            self.moved += 1;
            return;
        }
        if let Some(err) = hits.error {
            if self.errors.len() < MAX_ERRORS {
                self.errors.push(err);
            } else {
                self.more_errors += 1;
            }
            return;
        }
        if hits.binary {
            self.binary_files += 1;
            return;
        }
        if hits.matches == 0 {
            return;
        }
        self.matched_files += 1;
        self.matches += hits.matches;
        self.held += units(&hits);
        self.held_bytes += hits.bytes;
        self.files.insert(walk::sort_key(&path), (path, hits));
        // Drop the last files while the ones before them already fill the page, or
        // already hold more text than a report shows.
        while self.files.len() > 1 {
            let (_, (_, last)) = self.files.last_key_value().unwrap();
            let (rest, rest_bytes) = (self.held - units(last), self.held_bytes - last.bytes);
            if rest < self.need && rest_bytes <= self.held_budget {
                break;
            }
            (self.held, self.held_bytes) = (rest, rest_bytes);
            self.files.pop_last();
            self.dropped = true;
        }
    }
}

/// Results a file contributes: its matching lines in content mode, else one.
fn units(hits: &FileHits) -> u64 {
    if hits.lines.is_empty() {
        1
    } else {
        hits.lines.iter().filter(|l| l.is_match).count() as u64
    }
}

/// What a page of the report may still take: bytes and, when set, tokens (o200k).
///
/// Tokens are counted only near the limit. A token holds at least one byte, so while the
/// bytes of the records not yet counted and of a new one are fewer than the tokens left,
/// the new one fits without counting anything: a page far below its token limit (a broad
/// search with a large budget) is never tokenized. Each record is counted on its own, so
/// the page is the one counting every record as it came would give.
struct Room {
    bytes: usize,
    /// Tokens left, before the records in `unpriced` are counted.
    tokens: Option<usize>,
    /// Records taken and not yet counted, as ranges of the report's text.
    unpriced: Vec<Range<usize>>,
    unpriced_bytes: usize,
}

impl Room {
    fn new(bytes: usize, tokens: Option<usize>) -> Room {
        Room { bytes, tokens, unpriced: Vec::new(), unpriced_bytes: 0 }
    }

    /// The cost of `text` in the units that are limited.
    fn cost(&self, text: &str) -> usize {
        if self.tokens.is_some() {
            count_tokens(text)
        } else {
            0
        }
    }

    /// Whether `text` fits what is left of the page; `report` is the text taken so far.
    fn fits(&mut self, text: &str, report: &str) -> bool {
        if text.len() > self.bytes {
            return false;
        }
        let Some(left) = self.tokens else { return true };
        if self.unpriced_bytes + text.len() <= left {
            return true;
        }
        for range in self.unpriced.drain(..) {
            self.tokens = self.tokens.map(|t| t.saturating_sub(count_tokens(&report[range])));
        }
        self.unpriced_bytes = 0;
        self.tokens.is_some_and(|t| self.cost(text) <= t)
    }

    /// Takes `text` if it fits, to be appended to `report` next; the first record of a
    /// page always fits.
    fn take(&mut self, text: &str, report: &str, first: bool) -> bool {
        if !self.fits(text, report) && !first {
            return false;
        }
        self.bytes = self.bytes.saturating_sub(text.len());
        if self.tokens.is_some() {
            self.unpriced.push(report.len()..report.len() + text.len());
            self.unpriced_bytes += text.len();
        }
        true
    }
}

/// Ends a record of the report: its lines and the file it belongs to.
fn end_record(out: &mut GrepOutcome, lines: usize) {
    out.records.push(lines as u32);
    out.record_files.push(out.files.len() as u32);
}

fn render(c: &Collector, config: &GrepConfig, display_root: &Path) -> GrepOutcome {
    let mut out = GrepOutcome {
        matched_files: c.matched_files,
        matches: c.matches,
        binary_files: c.binary_files,
        truncated: c.dropped,
        ..GrepOutcome::default()
    };
    let mut room = Room::new(config.max_output, config.max_tokens);
    let (offset, limit) = (config.offset as u64, config.limit as u64);
    if config.mode != GrepMode::Content {
        for (i, (path, hits)) in c.files.values().enumerate() {
            let i = i as u64;
            if i < offset {
                continue;
            }
            if i >= offset + limit {
                out.truncated = true;
                break;
            }
            let shown = walk::shown(display_root, path);
            let row = match config.mode {
                GrepMode::Count => format!("{shown}:{}\n", hits.matches),
                _ => format!("{shown}\n"),
            };
            if !room.take(&row, &out.text, out.shown == 0) {
                out.truncated = true;
                out.budget_reached = true;
                break;
            }
            end_record(&mut out, 1);
            out.text.push_str(&row);
            out.files.push(shown);
            out.counts.push(hits.matches);
            out.shown += 1;
        }
        return out;
    }
    let context = (config.before > 0 || config.after > 0) && !config.only_matching;
    let mut seen = 0u64;
    let mut printed_any = false;
    for (path, hits) in c.files.values() {
        if hits.stopped {
            out.truncated = true;
        }
        let show = shown_lines(hits, config, offset, limit, &mut seen, &mut out.truncated);
        let records = records_of(hits, &show, config.after as u64);
        if records.is_empty() {
            continue;
        }
        let shown = walk::shown(display_root, path);
        let mut last: Option<u64> = None;
        let mut rendered = 0u64;
        let mut full = false;
        for record in records {
            let rows: Vec<String> = record
                .iter()
                .map(|&i| {
                    let line = &hits.lines[i];
                    let gap = last.is_none_or(|n| line.number != n + 1);
                    last = Some(line.number);
                    let sep = if line.is_match { ':' } else { '-' };
                    let mut row = String::new();
                    if context && (printed_any || rendered > 0) && gap {
                        row.push_str("--\n");
                    }
                    if config.line_numbers {
                        let _ = writeln!(row, "{shown}{sep}{}{sep}{}", line.number, line.text);
                    } else {
                        let _ = writeln!(row, "{shown}{sep}{}", line.text);
                    }
                    row
                })
                .collect();
            let text: String = rows.concat();
            let first = out.shown == 0 && rendered == 0;
            let fits = room.fits(&text, &out.text);
            let (rows, kept) = if fits || !first {
                (rows, record.clone())
            } else {
                // A match whose context alone passes the page: the context nearest it.
                out.context_cut = true;
                nearest_rows(hits, &record, rows, &room)
            };
            let text: String = rows.concat();
            if !room.take(&text, &out.text, first) {
                full = true;
                break;
            }
            // After a record cut short, the next one starts after its last line kept.
            last = kept.last().map(|&i| hits.lines[i].number);
            let separators = text.lines().count() - kept.len();
            end_record(&mut out, kept.len() + separators);
            out.text.push_str(&text);
            out.cut_lines += kept.iter().filter(|&&i| hits.lines[i].cut).count();
            rendered += 1;
        }
        if rendered > 0 {
            printed_any = true;
            out.files.push(shown);
            out.counts.push(rendered);
            out.shown += rendered as usize;
        }
        if full {
            out.truncated = true;
            out.budget_reached = true;
            break;
        }
    }
    out
}

/// Which lines of a file are shown: the matching lines of the page, with their context
/// up to a matching line that is not shown.
fn shown_lines(
    hits: &FileHits,
    config: &GrepConfig,
    offset: u64,
    limit: u64,
    seen: &mut u64,
    truncated: &mut bool,
) -> Vec<bool> {
    let mut show = vec![false; hits.lines.len()];
    for (i, line) in hits.lines.iter().enumerate() {
        if line.is_match {
            if *seen >= offset && *seen < offset + limit {
                show[i] = true;
            } else if *seen >= offset + limit {
                *truncated = true;
            }
            *seen += 1;
        }
    }
    let is_shown_match = show.clone();
    for (i, line) in hits.lines.iter().enumerate() {
        if !is_shown_match[i] {
            continue;
        }
        for j in (0..i).rev() {
            let other = &hits.lines[j];
            if line.number.abs_diff(other.number) > config.before as u64 || (other.is_match && !is_shown_match[j]) {
                break;
            }
            show[j] = true;
        }
        for (j, other) in hits.lines.iter().enumerate().skip(i + 1) {
            if other.number.abs_diff(line.number) > config.after as u64 || (other.is_match && !is_shown_match[j]) {
                break;
            }
            show[j] = true;
        }
    }
    show
}

/// The shown lines grouped in records, one per matching line: the context before it
/// (since the record before), the line, and the context after it. A page ends between
/// records, never inside one.
fn records_of(hits: &FileHits, show: &[bool], after: u64) -> Vec<Vec<usize>> {
    let mut records: Vec<Vec<usize>> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    let mut last_match: Option<u64> = None;
    for (i, line) in hits.lines.iter().enumerate() {
        if !show[i] {
            continue;
        }
        if line.is_match {
            pending.push(i);
            records.push(std::mem::take(&mut pending));
            last_match = Some(line.number);
        } else if pending.is_empty() && last_match.is_some_and(|m| line.number <= m + after) {
            records.last_mut().expect("a match came before").push(i);
        } else {
            pending.push(i);
        }
    }
    if let Some(last) = records.last_mut() {
        last.append(&mut pending);
    }
    records
}

/// The rows of a record nearest its matching line that fit the room (the line itself
/// always): for a match whose context alone would pass a page.
fn nearest_rows(hits: &FileHits, record: &[usize], rows: Vec<String>, room: &Room) -> (Vec<String>, Vec<usize>) {
    let at = record.iter().position(|&i| hits.lines[i].is_match).unwrap_or(0);
    let costs: Vec<usize> = rows.iter().map(|r| room.cost(r)).collect();
    let fits = |used: (usize, usize), i: usize| {
        used.0 + rows[i].len() <= room.bytes && room.tokens.is_none_or(|t| used.1 + costs[i] <= t)
    };
    let (mut lo, mut hi) = (at, at);
    let mut used = (rows[at].len(), costs[at]);
    loop {
        let mut grew = false;
        if hi + 1 < rows.len() && fits(used, hi + 1) {
            hi += 1;
            used = (used.0 + rows[hi].len(), used.1 + costs[hi]);
            grew = true;
        }
        if lo > 0 && fits(used, lo - 1) {
            lo -= 1;
            used = (used.0 + rows[lo].len(), used.1 + costs[lo]);
            grew = true;
        }
        if !grew {
            break;
        }
    }
    // The first row kept never starts with a separator: it opens the page.
    let mut kept: Vec<String> = rows[lo..=hi].to_vec();
    if let Some(first) = kept.first_mut() {
        if let Some(rest) = first.strip_prefix("--\n") {
            *first = rest.to_string();
        }
    }
    (kept, record[lo..=hi].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tree;

    fn run(dir: &Path, pattern: &str, setup: impl FnOnce(&mut GrepConfig)) -> Result<GrepOutcome> {
        let roots = Roots::new(&[dir]).unwrap();
        let mut config = GrepConfig::default();
        setup(&mut config);
        grep(&roots, dir, dir, pattern, &config, &Cancel::new())
    }

    /// A page cut at a token limit holds as many records as counting each record's tokens
    /// as it comes allows (the counting is put off while the bytes are below the limit).
    #[test]
    fn a_token_limited_page_holds_the_records_whose_counted_tokens_fit() {
        let line = |i: usize| format!("match {} {}\n", "word ".repeat(i % 17), "ü".repeat(i % 5));
        let files: Vec<(String, String)> =
            (0..30).map(|f| (format!("f{f:02}.txt"), (0..20).map(|i| line(f * 20 + i)).collect())).collect();
        let named: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        let dir = tree(&named);
        let whole = run(&dir, "match", |c| {
            c.limit(100_000).before(1);
        })
        .unwrap();
        let lines: Vec<&str> = whole.text.split_inclusive('\n').collect();
        let mut records = Vec::new();
        let mut at = 0;
        for &n in &whole.records {
            records.push(lines[at..at + n as usize].concat());
            at += n as usize;
        }
        for limit in [1, 40, 300, 2_000, 9_000, 1_000_000] {
            let page = run(&dir, "match", |c| {
                c.limit(100_000).before(1).max_tokens(Some(limit));
            })
            .unwrap();
            let (mut used, mut fit) = (0, 0);
            for record in &records {
                let cost = count_tokens(record);
                if fit > 0 && used + cost > limit {
                    break;
                }
                (used, fit) = (used + cost, fit + 1);
            }
            assert_eq!(page.records.len(), fit, "limit {limit}");
            assert_eq!(page.text, records[..fit].concat(), "limit {limit}");
        }
    }

    #[test]
    fn only_matching_shows_each_match_on_its_own_line() {
        let dir = tree(&[("a.txt", "id=1 id=22\nnone\nx id=333\n")]);
        let out = run(&dir, r"id=\d+", |c| {
            c.only_matching(true).before(2);
        })
        .unwrap();
        assert_eq!(out.text, "a.txt:1:id=1\na.txt:1:id=22\na.txt:3:id=333\n");
        assert_eq!(out.shown, 3);
        let page = run(&dir, r"id=\d+", |c| {
            c.only_matching(true).offset(1).limit(1);
        })
        .unwrap();
        assert_eq!((page.text.as_str(), page.truncated), ("a.txt:1:id=22\n", true));
    }

    #[test]
    fn exclude_leaves_out_lines_in_every_mode() {
        let dir = tree(&[("a.txt", "err one\nerr skip\nerr two\n"), ("b.txt", "err skip\n")]);
        let exclude = |c: &mut GrepConfig| {
            c.exclude(Some("skip"));
        };
        assert_eq!(run(&dir, "err", exclude).unwrap().text, "a.txt:1:err one\na.txt:3:err two\n");
        let files = run(&dir, "err", |c| {
            c.exclude(Some("skip")).mode(GrepMode::Files);
        })
        .unwrap();
        assert_eq!(files.text, "a.txt\n");
        let counts = run(&dir, "err", |c| {
            c.exclude(Some("skip")).mode(GrepMode::Count);
        })
        .unwrap();
        assert_eq!(counts.text, "a.txt:2\n");
        let bad = run(&dir, "err", |c| {
            c.exclude(Some("("));
        })
        .unwrap_err();
        assert_eq!(bad.kind(), ErrorKind::InvalidPattern);
        assert!(bad.message().starts_with("exclude pattern:"), "{bad}");
    }

    #[test]
    fn the_token_budget_ends_the_report_before_a_match() {
        let body: String = (0..200).map(|i| format!("match line number {i} with some words\n")).collect();
        let dir = tree(&[("a.txt", &body)]);
        let out = run(&dir, "match", |c| {
            c.max_tokens(Some(300));
        })
        .unwrap();
        assert!(out.truncated && out.budget_reached);
        assert!(out.shown > 5 && out.shown < 200, "{}", out.shown);
        assert!(count_tokens(&out.text) <= 300, "{}", count_tokens(&out.text));
    }

    #[test]
    fn max_per_file_stops_each_file_without_truncating() {
        let dir = tree(&[("a.txt", "x\nx\nx\n"), ("b.txt", "x\nx\n")]);
        let out = run(&dir, "x", |c| {
            c.max_per_file(Some(1));
        })
        .unwrap();
        assert_eq!((out.text.as_str(), out.truncated), ("a.txt:1:x\nb.txt:1:x\n", false));
        let counts = run(&dir, "x", |c| {
            c.max_per_file(Some(2)).mode(GrepMode::Count);
        })
        .unwrap();
        assert_eq!(counts.text, "a.txt:2\nb.txt:2\n");
        // As `rg -m 1 -A 1`: the context after the last match taken, a match in it as context.
        let trail = run(&dir, "x", |c| {
            c.max_per_file(Some(1)).after(1);
        })
        .unwrap();
        assert_eq!(trail.text, "a.txt:1:x\na.txt-2-x\n--\nb.txt:1:x\nb.txt-2-x\n");
    }

    #[test]
    fn content_lines_are_sorted_by_path_then_line() {
        let dir = tree(&[("b.txt", "foo\nbar\nfoo again\n"), ("a/z.txt", "x foo\n"), ("a-c.txt", "foo\n")]);
        let out = run(&dir, "foo", |_| {}).unwrap();
        assert_eq!(out.text, "a/z.txt:1:x foo\na-c.txt:1:foo\nb.txt:1:foo\nb.txt:3:foo again\n");
        assert_eq!((out.matched_files, out.matches, out.shown, out.truncated), (3, 4, 4, false));
    }

    #[test]
    fn context_lines_and_group_separators_follow_ripgrep() {
        let dir = tree(&[("a.txt", "1\nhit\n3\n4\n5\n6\nhit\n8\n"), ("b.txt", "hit\n")]);
        let out = run(&dir, "hit", |c| {
            c.before(1).after(1);
        })
        .unwrap();
        assert_eq!(
            out.text,
            "a.txt-1-1\na.txt:2:hit\na.txt-3-3\n--\na.txt-6-6\na.txt:7:hit\na.txt-8-8\n--\nb.txt:1:hit\n"
        );
    }

    #[test]
    fn the_limit_counts_matching_lines_not_context() {
        let dir = tree(&[("a.txt", "hit\nctx\nhit\nctx\nhit\n")]);
        let out = run(&dir, "hit", |c| {
            c.after(1).limit(2);
        })
        .unwrap();
        assert_eq!(out.text, "a.txt:1:hit\na.txt-2-ctx\na.txt:3:hit\na.txt-4-ctx\n");
        assert!(out.truncated);
        let page2 = run(&dir, "hit", |c| {
            c.limit(2).offset(2);
        })
        .unwrap();
        assert_eq!(page2.text, "a.txt:5:hit\n");
    }

    #[test]
    fn files_and_count_modes() {
        let dir = tree(&[("a.txt", "x\nx\n"), ("b.txt", "y\n"), ("c.txt", "x\n")]);
        let files = run(&dir, "x", |c| {
            c.mode(GrepMode::Files);
        })
        .unwrap();
        assert_eq!(files.text, "a.txt\nc.txt\n");
        let count = run(&dir, "x", |c| {
            c.mode(GrepMode::Count);
        })
        .unwrap();
        assert_eq!(count.text, "a.txt:2\nc.txt:1\n");
        assert_eq!(count.counts, [2, 1]);
    }

    #[test]
    fn many_files_keep_only_the_first_page_in_memory() {
        let names: Vec<String> = (0..200).map(|i| format!("f{i:03}.txt")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "hit\nhit\n")).collect();
        let dir = tree(&files);
        let out = run(&dir, "hit", |c| {
            c.limit(5);
        })
        .unwrap();
        assert_eq!(out.text, "f000.txt:1:hit\nf000.txt:2:hit\nf001.txt:1:hit\nf001.txt:2:hit\nf002.txt:1:hit\n");
        assert_eq!(out.matched_files, 200);
        assert!(out.truncated);
    }

    #[test]
    fn case_multiline_and_crlf() {
        let dir = tree(&[("a.txt", "Foo end\r\nbar\r\n")]);
        assert_eq!(run(&dir, "foo", |_| {}).unwrap().text, "");
        assert_eq!(
            run(&dir, "foo", |c| {
                c.case_insensitive(true);
            })
            .unwrap()
            .text,
            "a.txt:1:Foo end\n"
        );
        assert_eq!(run(&dir, "end$", |_| {}).unwrap().text, "a.txt:1:Foo end\n");
        let multi = run(&dir, "end.*bar", |c| {
            c.multiline(true);
        })
        .unwrap();
        assert_eq!(multi.text, "a.txt:1:Foo end\na.txt:2:bar\n");
        assert_eq!(run(&dir, "end.*bar", |_| {}).unwrap().text, "");
    }

    #[test]
    fn binary_files_are_skipped_and_counted() {
        let dir = tree(&[("bin.dat", "hit\0hit\n"), ("a.txt", "hit\n")]);
        let out = run(&dir, "hit", |_| {}).unwrap();
        assert_eq!((out.text.as_str(), out.binary_files), ("a.txt:1:hit\n", 1));
    }

    #[test]
    fn long_lines_are_cut_around_the_match_at_a_character_boundary() {
        let line = format!("{}needle{}\n", "é".repeat(3000), "x".repeat(3000));
        let dir = tree(&[("a.txt", &line)]);
        let out = run(&dir, "needle", |c| {
            c.max_columns(100);
        })
        .unwrap();
        assert_eq!(out.cut_lines, 1);
        let shown = out.text.trim_end();
        assert!(shown.contains("needle"), "{shown}");
        assert!(shown.contains("[line of 6006 chars cut]"), "{shown}");
        assert!(shown.starts_with("a.txt:1:…é"), "{shown}");
    }

    #[test]
    fn include_globs_and_types_filter_files() {
        let dir = tree(&[("a.rs", "hit\n"), ("b.ts", "hit\n"), ("sub/c.rs", "hit\n")]);
        let rs = run(&dir, "hit", |c| {
            c.mode(GrepMode::Files).walk().globs(&["*.rs"]);
        })
        .unwrap();
        assert_eq!(rs.text, "a.rs\nsub/c.rs\n");
        let ts = run(&dir, "hit", |c| {
            c.mode(GrepMode::Files).walk().file_type(Some("ts"));
        })
        .unwrap();
        assert_eq!(ts.text, "b.ts\n");
        let bad = run(&dir, "hit", |c| {
            c.walk().file_type(Some("nosuchtype"));
        })
        .unwrap_err();
        assert_eq!(bad.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn a_negated_glob_leaves_out_a_whole_folder_as_rg_does() {
        let dir = tree(&[("sub/secret.txt", "hit\n"), ("a.txt", "hit\n"), ("sub.txt", "hit\n")]);
        let out = run(&dir, "hit", |c| {
            c.mode(GrepMode::Files).walk().globs(&["!sub"]);
        })
        .unwrap();
        assert_eq!(out.text, "a.txt\nsub.txt\n");
    }

    #[test]
    fn a_type_includes_hidden_files_of_that_type_as_rg_t_does() {
        let dir = tree(&[(".hidden.rs", "fn x() {}\n"), ("b.rs", "fn y() {}\n"), (".other.txt", "fn\n")]);
        let out = run(&dir, "fn", |c| {
            c.mode(GrepMode::Files).walk().file_type(Some("rust"));
        })
        .unwrap();
        assert_eq!(out.text, ".hidden.rs\nb.rs\n");
    }

    #[test]
    fn a_git_file_of_a_worktree_is_never_searched() {
        let dir = tree(&[(".git", "gitdir: /elsewhere/hit\n"), (".env", "hit\n")]);
        let out = run(&dir, "hit", |c| {
            c.mode(GrepMode::Files).walk().include_hidden(true);
        })
        .unwrap();
        assert_eq!(out.text, ".env\n");
    }

    #[test]
    fn a_multiline_match_over_many_lines_is_counted_whole_and_kept_to_the_page() {
        let text = "x\n".repeat(100_000);
        let dir = tree(&[("a.txt", &text)]);
        let out = run(&dir, "(?s)x.*", |c| {
            c.multiline(true).limit(5);
        })
        .unwrap();
        assert_eq!((out.shown, out.truncated), (5, true));
        assert_eq!(out.matches, 100_000, "every line is counted, none kept past the page");
    }

    #[test]
    fn totals_do_not_depend_on_the_page() {
        let text: String = (0..50).map(|i| format!("hit {i}\nmiss\n")).collect();
        let dir = tree(&[("a.txt", &text), ("b.txt", &text), ("c/d.txt", "hit\n")]);
        for mode in [GrepMode::Content, GrepMode::Count] {
            for (limit, offset) in [(1, 0), (3, 7), (40, 60), (1000, 0), (5, 500)] {
                let out = run(&dir, "hit", |c| {
                    c.mode(mode).limit(limit).offset(offset).after(1);
                })
                .unwrap();
                assert_eq!((out.matches, out.matched_files), (101, 3), "{mode:?} limit {limit} offset {offset}");
            }
        }
    }

    #[test]
    fn a_page_ends_between_records_of_a_match_and_its_context() {
        let text: String = (0..200).map(|i| format!("hit {i} {}\nctx {i}\nctx\n", "w ".repeat(20))).collect();
        let dir = tree(&[("a.txt", &text)]);
        let out = run(&dir, "hit", |c| {
            c.before(1).after(2).max_tokens(Some(500));
        })
        .unwrap();
        assert!(out.truncated && out.budget_reached);
        assert!(count_tokens(&out.text) <= 500, "{}", count_tokens(&out.text));
        assert_eq!(out.records.len(), out.shown);
        assert_eq!(out.records.iter().sum::<u32>() as usize, out.text.lines().count());
        // The page ends with the whole context of its last match.
        let last = out.text.lines().last().unwrap();
        assert!(last.starts_with("a.txt-") && last.ends_with("-ctx"), "{}", out.text);
        assert!(out.text.lines().filter(|l| l.starts_with("a.txt:")).count() == out.shown);
        assert!(!out.context_cut);
    }

    #[test]
    fn a_first_record_past_the_page_keeps_its_match_and_the_nearest_context() {
        let text: String = (0..400).map(|i| format!("line {i} {}\n", "w ".repeat(30))).collect::<String>() + "hit\n";
        let dir = tree(&[("a.txt", &text)]);
        let out = run(&dir, "^hit", |c| {
            c.before(400).max_tokens(Some(300));
        })
        .unwrap();
        assert!(out.context_cut);
        assert_eq!(out.shown, 1);
        assert!(count_tokens(&out.text) <= 300);
        assert_eq!(out.text.lines().last(), Some("a.txt:401:hit"));
        assert!(out.text.lines().count() > 2);
    }

    #[test]
    fn count_and_files_pages_stop_at_the_token_budget() {
        let files: Vec<(String, String)> =
            (0..300).map(|i| (format!("{}{i:03}.txt", "long-name-".repeat(5)), "hit\n".to_string())).collect();
        let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let dir = tree(&refs);
        for mode in [GrepMode::Files, GrepMode::Count] {
            let out = run(&dir, "hit", |c| {
                c.mode(mode).max_tokens(Some(1000));
            })
            .unwrap();
            assert!(out.budget_reached && out.shown < 300 && out.shown > 10, "{mode:?} {}", out.shown);
            assert!(count_tokens(&out.text) <= 1000);
            assert_eq!(out.records.len(), out.shown);
        }
    }

    #[test]
    fn a_file_over_the_heap_limit_is_an_error_and_the_rest_is_searched() {
        let long = format!("{}hit\n", "y".repeat(8000));
        let dir = tree(&[("big.txt", &long), ("small.txt", "hit\n")]);
        let out = run(&dir, "hit", |c| {
            c.heap_limit(2048);
        })
        .unwrap();
        assert_eq!(out.text, "small.txt:1:hit\n");
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        assert!(out.errors[0].contains("big.txt"), "{:?}", out.errors);
    }

    #[test]
    fn the_report_stops_at_its_byte_budget_before_a_match() {
        let line = format!("hit {}\n", "z".repeat(480));
        let text = line.repeat(1000);
        let dir = tree(&[("a.txt", &text), ("b.txt", &text)]);
        let out = run(&dir, "hit", |_| {}).unwrap();
        assert!(out.budget_reached && out.truncated);
        assert!(out.text.len() <= OUTPUT_BUDGET + 600, "{}", out.text.len());
        assert!(out.shown > 400 && out.shown < 1000, "{}", out.shown);
        assert_eq!(out.text.lines().count(), out.shown);
    }

    #[test]
    fn an_invalid_regex_is_an_invalid_pattern_with_the_regex_error() {
        let dir = tree(&[("a.txt", "x\n")]);
        let err = run(&dir, "foo(", |_| {}).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPattern);
        assert!(err.message().contains("unclosed group"), "{}", err.message());
        assert!(
            err.message().contains("    foo(\n       ^"),
            "the caret points into the pattern as given: {}",
            err.message()
        );
    }

    /// A tree of more than [`PROBE`] files (searched by the parallel walker) gives what
    /// its folders give one by one (each searched by the walk on one thread): the same
    /// ignore rules, hidden files, order, limit and totals.
    #[test]
    fn a_large_tree_gives_what_its_folders_give_one_by_one() {
        let mut files = vec![
            (".gitignore".to_string(), "*.log\nbuild/\n".to_string()),
            ("d3/.gitignore".to_string(), "!keep.log\n".to_string()),
        ];
        for i in 0..400 {
            let text = if i % 3 == 0 { format!("x\nhit {i}\n") } else { "miss\n".to_string() };
            files.push((format!("d{}/s{}/f{i}.txt", i % 5, i % 4), text));
        }
        for extra in ["d1/a.log", "d3/keep.log", "d2/build/b.txt", "d4/.hidden.txt"] {
            files.push((extra.to_string(), "hit\n".to_string()));
        }
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let dir = std::fs::canonicalize(tree(&refs)).unwrap();
        let roots = Roots::new(&[&dir]).unwrap();
        let search = |base: &Path, limit: usize| {
            let mut config = GrepConfig::default();
            config.limit(limit);
            grep(&roots, base, &dir, "hit", &config, &Cancel::new()).unwrap()
        };
        let whole = search(&dir, 1000);
        let parts: Vec<GrepOutcome> = (0..5).map(|d| search(&dir.join(format!("d{d}")), 1000)).collect();
        assert_eq!(whole.text, parts.iter().map(|p| p.text.as_str()).collect::<String>());
        assert_eq!(whole.files, parts.iter().flat_map(|p| p.files.clone()).collect::<Vec<_>>());
        assert_eq!(whole.matches, 135);
        assert!(whole.files.contains(&"d3/keep.log".to_string()));
        assert!(!whole.text.contains("a.log") && !whole.text.contains("build") && !whole.text.contains(".hidden"));
        // A limit keeps the first results in path order, and the totals stay whole.
        let page = search(&dir, 7);
        assert!(page.truncated);
        assert_eq!(page.text, whole.text.lines().take(7).map(|l| format!("{l}\n")).collect::<String>());
        assert_eq!((page.matches, page.matched_files), (whole.matches, whole.matched_files));
    }

    #[test]
    fn one_file_can_be_searched_directly() {
        let dir = tree(&[(".gitignore", "a.txt\n"), ("a.txt", "hit\n")]);
        let roots = Roots::new(&[&dir]).unwrap();
        let out = grep(&roots, &dir.join("a.txt"), &dir, "hit", &GrepConfig::default(), &Cancel::new()).unwrap();
        assert_eq!(out.text, "a.txt:1:hit\n");
    }

    #[test]
    fn a_cancelled_search_stops_with_cancelled() {
        let dir = tree(&[("a.txt", "hit\n")]);
        let roots = Roots::new(&[&dir]).unwrap();
        let cancel = Cancel::new();
        cancel.cancel();
        let err = grep(&roots, &dir, &dir, "hit", &GrepConfig::default(), &cancel).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Cancelled);
    }
}
