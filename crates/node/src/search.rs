//! The bindings of the searches: glob listing and content search on ripgrep's crates.
//! Lists of paths cross as one NUL-separated string, not as thousands of JS strings.

use std::path::PathBuf;

use fsgate_core as core;
use napi_derive::napi;

use crate::{cancel_of, run_on_pool, run_on_search_pool, AnyReply, CancelToken, Completer, Workspace};

/// Which files a search walks.
#[napi(object)]
pub struct WalkOptions {
    /// Include hidden files and folders (never `.git` and the like). @default false
    pub include_hidden: Option<bool>,
    /// Include files that ignore files leave out. @default false
    pub include_ignored: Option<bool>,
    /// Globs a file's path (relative to the folder searched) must match; `!glob` excludes.
    pub globs: Option<Vec<String>>,
    /// One of ripgrep's file types (`rust`, `ts`, `py`, …).
    pub file_type: Option<String>,
    /// Names of more ignore files read like `.gitignore` (gemini-cli's `.geminiignore`). @default []
    pub ignore_files: Option<Vec<String>>,
}

impl From<&WalkOptions> for core::WalkConfig {
    fn from(o: &WalkOptions) -> core::WalkConfig {
        let mut cfg = core::WalkConfig::default();
        cfg.include_hidden(o.include_hidden.unwrap_or(false))
            .include_ignored(o.include_ignored.unwrap_or(false))
            .file_type(o.file_type.as_deref());
        if let Some(globs) = &o.globs {
            cfg.globs(globs);
        }
        if let Some(names) = &o.ignore_files {
            cfg.ignore_files(names);
        }
        cfg
    }
}

/// Options of [`Workspace::glob`].
#[napi(object)]
pub struct GlobOptions {
    /// Absolute path of the folder to list.
    pub path: String,
    /// Paths under this folder (the workspace) are shown relative to it.
    pub display_root: String,
    /// The glob, relative to `path`.
    pub pattern: String,
    /// Which files the walk yields.
    pub walk: WalkOptions,
    /// Most recently modified first instead of by path. @default false
    pub newest_first: Option<bool>,
    /// Most paths returned. @default 1000
    pub limit: Option<u32>,
    /// Paths skipped before the first returned. @default 0
    pub offset: Option<u32>,
}

/// Files a glob matched.
#[napi(object)]
pub struct GlobResult {
    /// The paths, in order, separated by NUL characters.
    pub paths: String,
    /// Every file that matched (more than the paths when over the limit).
    pub total: u32,
    /// Folders that could not be read.
    pub errors: Vec<String>,
    /// Whether the live index's snapshot was listed (else the tree was walked).
    pub from_index: bool,
}

/// Options of [`Workspace::grep`].
#[napi(object)]
pub struct GrepOptions {
    /// Absolute path of the folder or file to search.
    pub path: String,
    /// Paths under this folder (the workspace) are shown relative to it.
    pub display_root: String,
    /// The regular expression (Rust syntax).
    pub pattern: String,
    /// Which files the walk yields.
    pub walk: WalkOptions,
    /// "content", "files_with_matches" or "count". @default "content"
    pub mode: Option<String>,
    /// @default false
    pub case_insensitive: Option<bool>,
    /// Matches may span lines; `.` matches a newline. @default false
    pub multiline: Option<bool>,
    /// Context lines before each match. @default 0
    pub before: Option<u32>,
    /// Context lines after each match. @default 0
    pub after: Option<u32>,
    /// Most results (matching lines, files or counts). @default 1000
    pub limit: Option<u32>,
    /// Results skipped first. @default 0
    pub offset: Option<u32>,
    /// Line numbers in content mode. @default true
    pub line_numbers: Option<bool>,
    /// Characters of a line shown. @default 500
    pub max_columns: Option<u32>,
    /// Bytes of report in content mode. @default 262144
    pub max_output: Option<f64>,
    /// Only the matched parts of lines, one per result (content mode). @default false
    pub only_matching: Option<bool>,
    /// A regular expression: matching lines it also matches are left out.
    pub exclude: Option<String>,
    /// Most matching lines taken from one file. @default no limit
    pub max_per_file: Option<u32>,
    /// Tokens (o200k) of report in content mode. @default no limit
    pub max_tokens: Option<u32>,
}

/// What a content search found.
#[napi(object)]
pub struct GrepResult {
    /// The report: one line per result, by path then line.
    pub text: String,
    /// The files shown, in order, separated by NUL characters.
    pub files: String,
    /// Matching lines (count mode: matches) of each file shown.
    pub counts: Vec<u32>,
    /// Results shown.
    pub shown: u32,
    /// Files with a match.
    pub matched_files: u32,
    /// Matching lines found (a lower bound when truncated).
    pub matches: f64,
    /// Whether results were left out.
    pub truncated: bool,
    /// Whether the report stopped at its byte limit (`maxOutput`) rather than the result limit.
    pub budget_reached: bool,
    /// Lines cut to the column limit.
    pub cut_lines: u32,
    /// Binary files skipped.
    pub binary_files: u32,
    /// Files or folders that could not be read.
    pub errors: Vec<String>,
    /// Lines of each record of the report (a result with its context): pages end between records.
    pub records: Vec<u32>,
    /// For each record, the index of its file among the files shown.
    pub record_files: Vec<u32>,
    /// Whether the first match's context was cut to fit the page.
    pub context_cut: bool,
    /// Whether the live index chose the files read (else the tree was walked).
    pub from_index: bool,
    /// Files read.
    pub files_read: u32,
}

impl From<core::GrepOutcome> for GrepResult {
    fn from(o: core::GrepOutcome) -> GrepResult {
        GrepResult {
            text: o.text,
            files: o.files.join("\0"),
            counts: o.counts.iter().map(|&c| c.min(u32::MAX as u64) as u32).collect(),
            shown: o.shown as u32,
            matched_files: o.matched_files as u32,
            matches: o.matches as f64,
            truncated: o.truncated,
            budget_reached: o.budget_reached,
            cut_lines: o.cut_lines as u32,
            binary_files: o.binary_files as u32,
            errors: o.errors,
            records: o.records,
            record_files: o.record_files,
            context_cut: o.context_cut,
            from_index: o.from_index,
            files_read: o.files_read.min(u32::MAX as usize) as u32,
        }
    }
}

#[napi]
impl Workspace {
    /// Lists the files matching a glob on the search pool; the reply goes to `completer` as `id`.
    #[napi]
    pub fn glob(&self, completer: &Completer, id: u32, options: GlobOptions, cancel: Option<&CancelToken>) {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let mut config = core::GlobConfig::default();
        *config.walk() = core::WalkConfig::from(&options.walk);
        config.order(if options.newest_first.unwrap_or(false) {
            core::GlobOrder::Newest
        } else {
            core::GlobOrder::Path
        });
        config
            .limit(options.limit.unwrap_or(1000) as usize)
            .offset(options.offset.unwrap_or(0) as usize)
            .live(self.live.clone());
        let (base, display_root, pattern) =
            (PathBuf::from(options.path), PathBuf::from(options.display_root), options.pattern);
        run_on_search_pool(completer, id, AnyReply::Glob, move || {
            let out = core::glob_files(&roots, &base, &display_root, &pattern, &config, &cancel)?;
            Ok(GlobResult {
                paths: out.paths.join("\0"),
                total: out.total as u32,
                errors: out.errors,
                from_index: out.from_index,
            })
        });
    }

    /// Searches file contents on the search pool; the reply goes to `completer` as `id`.
    #[napi]
    pub fn grep(&self, completer: &Completer, id: u32, options: GrepOptions, cancel: Option<&CancelToken>) {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let mut config = core::GrepConfig::default();
        *config.walk() = core::WalkConfig::from(&options.walk);
        config
            .mode(match options.mode.as_deref() {
                Some("files_with_matches") => core::GrepMode::Files,
                Some("count") => core::GrepMode::Count,
                _ => core::GrepMode::Content,
            })
            .case_insensitive(options.case_insensitive.unwrap_or(false))
            .multiline(options.multiline.unwrap_or(false))
            .before(options.before.unwrap_or(0) as usize)
            .after(options.after.unwrap_or(0) as usize)
            .limit(options.limit.unwrap_or(1000) as usize)
            .offset(options.offset.unwrap_or(0) as usize)
            .line_numbers(options.line_numbers.unwrap_or(true))
            .max_columns(options.max_columns.unwrap_or(500) as usize)
            .max_output(options.max_output.map_or(256 << 10, |b| b.max(0.0) as usize))
            .only_matching(options.only_matching.unwrap_or(false))
            .exclude(options.exclude.as_deref())
            .max_per_file(options.max_per_file.map(u64::from))
            .max_tokens(options.max_tokens.map(|t| t as usize))
            .live(self.live.clone());
        let (base, display_root, pattern) =
            (PathBuf::from(options.path), PathBuf::from(options.display_root), options.pattern);
        run_on_search_pool(completer, id, AnyReply::Grep, move || {
            core::grep(&roots, &base, &display_root, &pattern, &config, &cancel).map(GrepResult::from)
        });
    }
}

/// Options of [`Workspace::rank`].
#[napi(object)]
pub struct RankOptions {
    /// Absolute path of the folder to search.
    pub path: String,
    /// Paths under this folder (the workspace) are shown relative to it.
    pub display_root: String,
    /// A natural-language or symbol query.
    pub query: String,
    /// Most snippets (at most 25). @default 8
    pub top_k: Option<u32>,
    /// Snippets skipped first, in rank order (at most 1,000). @default 0
    pub offset: Option<u32>,
}

/// One ranked snippet.
#[napi(object)]
pub struct RankHitInfo {
    /// The file, relative to the display root when inside it.
    pub path: String,
    /// First line of the chunk, 1-based.
    pub start_line: u32,
    /// Last line of the chunk, inclusive.
    pub end_line: u32,
    /// BM25 score with boosts and damping.
    pub score: f64,
    /// The symbol the chunk defines, if any.
    pub symbol: Option<String>,
    /// The chunk's text, at most 40 lines.
    pub snippet: String,
    /// Lines of the chunk after the snippet was cut.
    pub more_lines: u32,
}

/// What a ranked code search found.
#[napi(object)]
pub struct RankResult {
    /// Best first.
    pub hits: Vec<RankHitInfo>,
    /// Files read and chunked by this call (new or changed since the last).
    pub files_indexed: u32,
    /// Files the walk offered.
    pub files_considered: u32,
    /// Chunks scored.
    pub chunks: u32,
    /// Chunks the query matched: the hits there are in all pages.
    pub total: u32,
    /// Files not searched: unreadable, binary, or over 1 MiB.
    pub skipped: u32,
    /// Folders and files that could not be read.
    pub errors: Vec<String>,
    /// Whether the live index's snapshot offered the files (else the folder was walked).
    pub from_index: bool,
}

impl From<core::RankOutcome> for RankResult {
    fn from(o: core::RankOutcome) -> RankResult {
        RankResult {
            hits: o
                .hits
                .into_iter()
                .map(|h| RankHitInfo {
                    path: h.shown,
                    start_line: h.start_line as u32,
                    end_line: h.end_line as u32,
                    score: h.score,
                    symbol: h.symbol,
                    snippet: h.snippet,
                    more_lines: h.more_lines as u32,
                })
                .collect(),
            files_indexed: o.files_indexed as u32,
            files_considered: o.files_considered as u32,
            chunks: o.chunks as u32,
            total: o.total as u32,
            skipped: o.skipped as u32,
            errors: o.errors,
            from_index: o.from_index,
        }
    }
}

#[napi]
impl Workspace {
    /// Ranks code chunks under a folder for a query, reusing the workspace's index; the
    /// reply goes to `completer` as `id`.
    #[napi]
    pub fn rank(&self, completer: &Completer, id: u32, options: RankOptions, cancel: Option<&CancelToken>) {
        let roots = self.roots.clone();
        let index = self.code_index.clone();
        let cancel = cancel_of(cancel);
        let mut config = core::RankConfig::default();
        config
            .top_k(options.top_k.unwrap_or(8) as usize)
            .offset(options.offset.unwrap_or(0) as usize)
            .live(self.live.clone());
        let (base, display_root, query) =
            (PathBuf::from(options.path), PathBuf::from(options.display_root), options.query);
        run_on_search_pool(completer, id, AnyReply::Rank, move || {
            core::rank_folder(&roots, &base, &display_root, &query, &config, &index, &cancel).map(RankResult::from)
        });
    }

    /// The real path of a folder to search, checked against the roots; the reply goes to
    /// `completer` as `id`. (For a search run by another program, such as Semble.)
    #[napi]
    pub fn search_root(&self, completer: &Completer, id: u32, path: String) {
        let roots = self.roots.clone();
        run_on_pool(completer, id, AnyReply::Text, move || {
            core::search_folder(&roots, std::path::Path::new(&path)).map(|p| p.display().to_string())
        });
    }
}
