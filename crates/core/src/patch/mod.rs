//! apply_patch: the V4A patch format of OpenAI's models (Codex's `apply_patch`), applied
//! to files all together or not at all.
//!
//! A patch adds, deletes, updates and moves files:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: docs/new.md
//! +# New
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def greet():
//! -    print("Hi")
//! +    print("Hello")
//! *** Delete File: obsolete.txt
//! *** End Patch
//! ```
//!
//! [`parse_patch`] reads it as Codex does, [`apply_patch`] applies it: each update's
//! hunks are found with Codex's matching ladder ([`Fuzz`]) in the file's own encoding and
//! line endings, every new version is computed before anything is written, and then all
//! files change through the atomic writer or none does ([`commit_files`]). Where Codex
//! writes file after file and leaves the first ones changed when a later one fails, here
//! a failure leaves every file as it was, and a failure while putting one back is reported
//! file by file ([`OnDisk`]).
//!
//! The paths are resolved and checked by the caller (confinement, protected paths, what a
//! session may overwrite): it passes one [`OpTarget`] per operation.

mod apply;
mod commit;
mod parse;
mod seek;

use std::collections::HashMap;
use std::path::PathBuf;

pub use apply::HunkMiss;
pub use commit::{commit_files, remove_empty_folders, Changed, CommitFailure, FileChange, OnDisk};
pub use parse::{parse_patch, Chunk, ChunkLine, LineKind, ParseError, Patch, PatchOp};
pub use seek::Fuzz;

use crate::cancel::Cancel;
use crate::confine::Roots;
use crate::edit::unified_diff;
use crate::error::{Error, ErrorKind, Result};
use crate::sniff::{sniff, Kind, TextEncoding};
use crate::write::{decode, encode, prepare, Expect, Prepared, WriteConfig};

/// Where one operation of a patch lands, as the caller resolved and checked it.
#[derive(Clone, Debug)]
pub struct OpTarget {
    /// The real path of the operation's file (the source of a move).
    pub path: PathBuf,
    /// The real path an updated file moves to.
    pub move_to: Option<PathBuf>,
    /// What must be at the file an Add writes or a move goes to, as the caller last saw
    /// it: [`Expect::Absent`], or a version it has read (then it may be replaced). Updates
    /// and deletions need none: the patch's own lines are checked against the file.
    pub expect: Expect,
    /// The file's name in the diff.
    pub label: String,
    /// The moved file's name in the diff.
    pub move_label: Option<String>,
}

/// How to apply a patch. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct PatchConfig {
    allow_outside: bool,
    max_bytes: Option<u64>,
    diff_lines: usize,
    dry_run: bool,
}

impl Default for PatchConfig {
    fn default() -> PatchConfig {
        PatchConfig { allow_outside: false, max_bytes: None, diff_lines: 400, dry_run: false }
    }
}

impl PatchConfig {
    /// Whether real paths may lie outside the roots. By default, this is disabled.
    pub fn allow_outside(&mut self, yes: bool) -> &mut Self {
        self.allow_outside = yes;
        self
    }

    /// The largest existing file a patch may change ([`ErrorKind::TooLarge`] past it). By
    /// default, there is no limit.
    pub fn max_bytes(&mut self, bytes: Option<u64>) -> &mut Self {
        self.max_bytes = bytes;
        self
    }

    /// Most lines of each file's diff. By default, 400.
    pub fn diff_lines(&mut self, lines: usize) -> &mut Self {
        self.diff_lines = lines;
        self
    }

    /// Whether to check every operation (paths, versions, limits, encodings, hunks) and
    /// stop before any file is written ([`PatchOutcome::Checked`]). A caller asks a
    /// person about a patch only once it would apply, then applies it for real, when
    /// every check runs again. By default, this is disabled.
    pub fn dry_run(&mut self, yes: bool) -> &mut Self {
        self.dry_run = yes;
        self
    }
}

/// What an operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A file added (or replaced whole, where the caller allowed it).
    Added,
    /// A file updated in place.
    Updated,
    /// A file updated and moved.
    Moved,
    /// A file deleted.
    Deleted,
}

impl Action {
    /// "added", "updated", "moved" or "deleted".
    pub fn name(self) -> &'static str {
        match self {
            Action::Added => "added",
            Action::Updated => "updated",
            Action::Moved => "moved",
            Action::Deleted => "deleted",
        }
    }
}

/// What one operation of an applied patch did.
#[derive(Clone, Debug)]
pub struct OpSummary {
    /// What it did.
    pub action: Action,
    /// The real path of its file (the source of a move).
    pub path: PathBuf,
    /// Where a moved file went.
    pub to: Option<PathBuf>,
    /// Lines added and removed.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The loosest rung of the matching ladder its hunks needed.
    pub fuzz: Fuzz,
    /// A unified diff of the change.
    pub diff: String,
}

/// A file an applied patch changed.
#[derive(Debug)]
pub struct FileResult {
    /// What is on disk now, and what it replaced.
    pub change: Changed,
    /// Lines of the new text (0 when removed).
    pub total_lines: u64,
    /// The encoding it was written in.
    pub encoding: TextEncoding,
}

/// Why a patch was not applied. Nothing was written, except as a
/// [`PatchFailure::Commit`]'s `on_disk` says.
#[derive(Debug)]
pub enum PatchFailure {
    /// The patch has no operations.
    Empty,
    /// An operation's file cannot be changed: missing (update, delete), not text, too
    /// large, a directory, or not the version the caller expected.
    File {
        /// The operation, 0-based.
        op: usize,
        /// Why (with the path).
        error: Error,
    },
    /// An update's hunk is not in its file.
    Hunk {
        /// The operation, 0-based.
        op: usize,
        /// Which hunk, and which of its lines.
        miss: HunkMiss,
    },
    /// Writing the files failed.
    Commit(CommitFailure),
}

/// The outcome of [`apply_patch`].
#[derive(Debug)]
pub enum PatchOutcome {
    /// Every file changed.
    Done {
        /// Each operation, in the patch's order.
        ops: Vec<OpSummary>,
        /// Each file changed, in the order the patch first named it.
        files: Vec<FileResult>,
    },
    /// Nothing changed (but see [`PatchFailure::Commit`]).
    Failed(PatchFailure),
    /// A dry run found that every operation would apply ([`PatchConfig::dry_run`]).
    Checked,
}

/// A file as the patch has left it so far, in memory.
struct Work {
    real: PathBuf,
    prepared: Prepared,
    /// Its bytes now; None when there is no file.
    now: Option<Vec<u8>>,
    lines: u64,
    encoding: TextEncoding,
    /// The mode of the file moved here (a move is a rename: the file keeps its mode); None
    /// keeps the mode of the file replaced, or gives a new file the default.
    mode: Option<std::fs::Permissions>,
}

/// Applies a parsed patch; `targets` gives each operation's resolved paths (one per
/// operation). Every operation is applied in memory first, in order (a later operation
/// sees an earlier one's result); then all files change together ([`commit_files`]).
pub fn apply_patch(
    roots: &Roots,
    patch: &Patch,
    targets: &[OpTarget],
    config: &PatchConfig,
    cancel: &Cancel,
) -> Result<PatchOutcome> {
    if patch.ops.is_empty() {
        return Ok(PatchOutcome::Failed(PatchFailure::Empty));
    }
    if targets.len() != patch.ops.len() {
        return Err(Error::new(ErrorKind::InvalidInput, "needs one target for each operation of the patch"));
    }
    let mut files: Vec<Work> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    let mut ops = Vec::with_capacity(patch.ops.len());
    for (i, (op, target)) in patch.ops.iter().zip(targets).enumerate() {
        cancel.check()?;
        let failed = |error: Error| Ok(PatchOutcome::Failed(PatchFailure::File { op: i, error }));
        let summary = match op {
            PatchOp::Add { contents, .. } => {
                let at = match slot(roots, &mut files, &mut index, &target.path, target.expect, config) {
                    Ok(at) => at,
                    Err(e) => return failed(e),
                };
                let w = &mut files[at];
                let before = w.now.as_deref().and_then(|b| decode(b).ok()).map(|(t, _)| t).unwrap_or_default();
                w.now = Some(encode(contents, w.encoding));
                w.mode = None;
                w.lines = count_lines(contents);
                let spans = [(0..before.len(), 0..contents.len())];
                OpSummary {
                    action: Action::Added,
                    path: target.path.clone(),
                    to: None,
                    added: count_lines(contents) as usize,
                    removed: count_lines(&before) as usize,
                    fuzz: Fuzz::Exact,
                    diff: unified_diff(&before, contents, &spans, &target.label, 3, config.diff_lines),
                }
            }
            PatchOp::Delete { .. } => {
                let at = match slot(roots, &mut files, &mut index, &target.path, Expect::Any, config) {
                    Ok(at) => at,
                    Err(e) => return failed(e),
                };
                let w = &mut files[at];
                let Some(now) = w.now.take() else { return failed(missing(&target.path, "to delete")) };
                let before = decode(&now).map(|(t, _)| t).unwrap_or_default();
                w.lines = 0;
                w.mode = None;
                OpSummary {
                    action: Action::Deleted,
                    path: target.path.clone(),
                    to: None,
                    added: 0,
                    removed: count_lines(&before) as usize,
                    fuzz: Fuzz::Exact,
                    diff: unified_diff(&before, "", &[(0..before.len(), 0..0)], &target.label, 3, config.diff_lines),
                }
            }
            PatchOp::Update { chunks, .. } => {
                let at = match slot(roots, &mut files, &mut index, &target.path, Expect::Any, config) {
                    Ok(at) => at,
                    Err(e) => return failed(e),
                };
                let Some(now) = files[at].now.as_deref() else { return failed(missing(&target.path, "to update")) };
                let (text, encoding) = match decode(now) {
                    Ok(decoded) => decoded,
                    Err(e) => return failed(e.with_path(&target.path)),
                };
                cancel.check()?;
                let applied = match apply::apply_chunks(&text, chunks) {
                    Ok(applied) => applied,
                    Err(miss) => return Ok(PatchOutcome::Failed(PatchFailure::Hunk { op: i, miss })),
                };
                let bytes = encode(&applied.text, encoding);
                let lines = count_lines(&applied.text);
                let moved = target.move_to.as_ref().filter(|to| **to != target.path);
                let mut diff = unified_diff(
                    &text,
                    &applied.text,
                    &applied.spans,
                    target.move_label.as_deref().unwrap_or(&target.label),
                    3,
                    config.diff_lines,
                );
                if let Some(to) = moved {
                    let dest = match slot(roots, &mut files, &mut index, to, target.expect, config) {
                        Ok(dest) => dest,
                        Err(e) => return failed(e),
                    };
                    let mode = files[at]
                        .mode
                        .take()
                        .or_else(|| files[at].prepared.current.as_ref().map(|(_, meta)| meta.permissions()));
                    files[at].now = None;
                    files[at].lines = 0;
                    let d = &mut files[dest];
                    d.mode = mode;
                    d.now = Some(bytes);
                    d.lines = lines;
                    d.encoding = encoding;
                    if let Some(rest) =
                        diff.strip_prefix(&format!("--- a/{}\n", target.move_label.as_deref().unwrap_or(&target.label)))
                    {
                        diff = format!("--- a/{}\n{rest}", target.label);
                    }
                } else {
                    files[at].now = Some(bytes);
                    files[at].lines = lines;
                    files[at].encoding = encoding;
                }
                OpSummary {
                    action: if moved.is_some() { Action::Moved } else { Action::Updated },
                    path: target.path.clone(),
                    to: moved.cloned(),
                    added: applied.added,
                    removed: applied.removed,
                    fuzz: applied.fuzz,
                    diff,
                }
            }
        };
        ops.push(summary);
    }

    if config.dry_run {
        for w in &files {
            if let Some(folder) = w.real.parent() {
                crate::write::check_writable(folder, &w.real)?;
            }
        }
        return Ok(PatchOutcome::Checked);
    }
    let facts: Vec<(u64, TextEncoding)> = files.iter().map(|w| (w.lines, w.encoding)).collect();
    let slots = files
        .into_iter()
        .map(|w| commit::Slot { real: w.real, prepared: w.prepared, new: w.now, mode: w.mode })
        .collect();
    let changed = match commit::commit(roots, slots, config.allow_outside, cancel)? {
        Ok(changed) => changed,
        Err(failure) => return Ok(PatchOutcome::Failed(PatchFailure::Commit(failure))),
    };
    let order: HashMap<PathBuf, usize> = index;
    let files = changed
        .into_iter()
        .map(|change| {
            let (lines, encoding) = facts[order[&change.real]];
            let lines = if change.written.is_some() { lines } else { 0 };
            FileResult { change, total_lines: lines, encoding }
        })
        .collect();
    Ok(PatchOutcome::Done { ops, files })
}

/// The index of `real`'s work, reading the file the first time it is named. `expect` is
/// checked against the file as it was before the patch.
fn slot(
    roots: &Roots,
    files: &mut Vec<Work>,
    index: &mut HashMap<PathBuf, usize>,
    real: &PathBuf,
    expect: Expect,
    config: &PatchConfig,
) -> Result<usize> {
    if let Some(&at) = index.get(real) {
        let before = files[at].prepared.current.as_ref().map(|(bytes, _)| bytes.as_slice());
        let ok = match (expect, before) {
            (Expect::Any, _) | (Expect::Absent, None) => true,
            (Expect::Version { size, hash }, Some(bytes)) => {
                bytes.len() as u64 == size && crate::hash::hash_bytes(bytes) == hash
            }
            _ => false,
        };
        if !ok {
            let kind = if before.is_some() && expect == Expect::Absent { ErrorKind::Exists } else { ErrorKind::Stale };
            return Err(Error::new(kind, "is not the version expected").with_path(real));
        }
        return Ok(at);
    }
    let mut write = WriteConfig::default();
    write.expect(expect).allow_outside(config.allow_outside).real_only(true).max_bytes(config.max_bytes);
    let prepared = prepare(roots, real, &write)?;
    let now = prepared.current.as_ref().map(|(bytes, _)| bytes.clone());
    let encoding = match now.as_deref().map(sniff) {
        Some(Kind::Text(encoding)) => encoding,
        _ => TextEncoding::Utf8,
    };
    files.push(Work { real: real.clone(), prepared, now, lines: 0, encoding, mode: None });
    index.insert(real.clone(), files.len() - 1);
    Ok(files.len() - 1)
}

fn missing(real: &std::path::Path, what: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("there is no such file {what}")).with_path(real)
}

/// Lines as a read counts them: a final line without a line break counts.
fn count_lines(text: &str) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests;
