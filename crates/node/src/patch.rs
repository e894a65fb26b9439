//! The bindings of apply_patch: parsing a patch, applying it with the paths the caller
//! checked, committing whole-file changes together (an undo of a patch), and the text
//! editor's line insertion.

use std::path::PathBuf;

use fsgate_core as core;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::change::{cap_bytes, expectation, ChangeChecks, EditResult, LineCandidate, WriteResult};
use crate::{cancel_of, run_on_io_pool, run_on_pool, AnyReply, CancelToken, Completer, NativeError, Workspace};

/// One operation of a parsed patch.
#[napi(object)]
pub struct PatchOpInfo {
    /// "add", "delete" or "update".
    pub kind: String,
    /// The path as the patch gives it.
    pub path: String,
    /// Where an update moves the file.
    pub move_to: Option<String>,
    /// The 1-based line of its header in the patch.
    pub line: u32,
}

/// What one operation of an applied patch did.
#[napi(object)]
pub struct PatchOpResult {
    /// "added", "updated", "moved" or "deleted".
    pub action: String,
    /// The real path (the source of a move).
    pub path: String,
    /// Where a moved file went.
    pub to: Option<String>,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// The loosest rung of the matching ladder its hunks needed: "exact",
    /// "trailing-whitespace", "whitespace" or "punctuation".
    pub matched_by: String,
    /// A unified diff of the change.
    pub diff: String,
}

/// A file a patch (or a commit of whole files) changed.
#[napi(object)]
pub struct PatchFileResult {
    /// The real path.
    pub real_path: String,
    /// "created", "replaced" or "removed".
    pub action: String,
    /// What is on disk now (absent when removed).
    pub written: Option<WriteResult>,
    /// The bytes replaced or removed (absent when created).
    pub previous: Option<Buffer>,
    /// The mode bits of the file replaced or removed (Unix; absent when created).
    pub previous_mode: Option<u32>,
    /// The folders made for a created file, the deepest first.
    pub made_folders: Vec<String>,
}

/// A file of a failed change and what it is now.
#[napi(object)]
pub struct OnDiskInfo {
    /// The real path.
    pub real_path: String,
    /// "old" (as before), "new" (changed), or "unknown" (putting it back failed).
    pub state: String,
}

/// Why a patch (or a commit of whole files) changed nothing (but see `onDisk`).
#[napi(object)]
pub struct PatchFailureInfo {
    /// MALFORMED (the patch text), EMPTY (no operations), FILE (an operation's file, see
    /// `error`), CONTEXT_NOT_FOUND (an @@ line), LINES_NOT_FOUND (a context or removed
    /// line), OVERLAP (two hunks change the same lines) or COMMIT (writing failed, see
    /// `error` and `onDisk`).
    pub code: String,
    /// The operation, 0-based.
    pub op: Option<u32>,
    /// The hunk of the operation, 0-based.
    pub hunk: Option<u32>,
    /// The 1-based line of the patch at fault.
    pub line: Option<u32>,
    /// That line's text (MALFORMED), or the line not found.
    pub text: Option<String>,
    /// MALFORMED: what is wrong.
    pub message: Option<String>,
    /// LINES_NOT_FOUND: the 1-based file line after which the hunk's earlier lines matched.
    pub after: Option<u32>,
    /// LINES_NOT_FOUND: every line is there, but not at the end of the file.
    pub not_at_end: Option<bool>,
    /// The file's lines most like the one not found.
    pub candidates: Option<Vec<LineCandidate>>,
    /// FILE and COMMIT: the error.
    pub error: Option<NativeError>,
    /// COMMIT: every file and what it is now.
    pub on_disk: Option<Vec<OnDiskInfo>>,
}

/// The reply of `parsePatch`, `applyPatch` and `commitFiles`.
#[napi(object)]
pub struct PatchResult {
    /// parsePatch: the operations.
    pub parsed: Option<Vec<PatchOpInfo>>,
    /// applyPatch: each operation, in the patch's order.
    pub ops: Option<Vec<PatchOpResult>>,
    /// Each file changed.
    pub files: Option<Vec<PatchFileResult>>,
    /// Why nothing changed.
    pub failure: Option<PatchFailureInfo>,
}

/// Where one operation of a patch lands, as the caller resolved and checked it.
#[napi(object)]
pub struct PatchTargetOptions {
    /// The real path of the operation's file (the source of a move).
    pub path: String,
    /// The real path an update moves the file to.
    pub move_to: Option<String>,
    /// The file an Add writes or a move goes to must not exist. @default true
    pub expect_absent: Option<bool>,
    /// Or: the version of it the caller has read (size, with `expectHash`).
    pub expect_size: Option<f64>,
    /// The content hash of that version (32 hex digits).
    pub expect_hash: Option<String>,
    /// The file's name in the diff.
    pub label: String,
    /// The moved file's name in the diff.
    pub move_label: Option<String>,
}

/// Options of [`Workspace::apply_patch`].
#[napi(object)]
pub struct ApplyPatchOptions {
    /// The patch text.
    pub patch: String,
    /// One target for each operation, in order.
    pub targets: Vec<PatchTargetOptions>,
    /// Whether real paths may lie outside the roots. @default false
    pub allow_outside: Option<bool>,
    /// The largest existing file a patch may change. @default no limit
    pub max_bytes: Option<f64>,
    /// Most lines of each file's diff. @default 400
    pub diff_lines: Option<u32>,
    /// Check every operation and write nothing: no `failure` and no `ops` means it would apply. @default false
    pub dry_run: Option<bool>,
}

/// One file of [`Workspace::commit_files`].
#[napi(object)]
pub struct CommitFileOptions {
    /// The real path.
    pub path: String,
    /// The version it must be now (or `expectAbsent`).
    pub checks: ChangeChecks,
    /// Its new bytes; absent removes it.
    pub bytes: Option<Buffer>,
    /// The mode bits it gets (Unix). @default the mode of the file replaced, or a new file's default
    pub mode: Option<u32>,
}

/// Options of [`Workspace::insert`].
#[napi(object)]
pub struct InsertOptions {
    /// The real path of the file.
    pub path: String,
    /// The line after which the text goes (0: at the start).
    pub after: u32,
    /// The text to insert.
    pub text: String,
    /// What must hold of the file when it is written.
    pub checks: ChangeChecks,
    /// The file's name in the diff headers.
    pub label: String,
    /// Most lines of the snippet. @default 40
    pub snippet_lines: Option<u32>,
    /// Most lines of the unified diff. @default 400
    pub diff_lines: Option<u32>,
}

fn empty() -> PatchResult {
    PatchResult { parsed: None, ops: None, files: None, failure: None }
}

fn failure(code: &str) -> PatchFailureInfo {
    PatchFailureInfo {
        code: code.into(),
        op: None,
        hunk: None,
        line: None,
        text: None,
        message: None,
        after: None,
        not_at_end: None,
        candidates: None,
        error: None,
        on_disk: None,
    }
}

fn parse_failure(e: core::ParseError) -> PatchResult {
    let f = PatchFailureInfo {
        line: Some(e.line as u32),
        text: Some(e.text),
        message: Some(e.message),
        ..failure("MALFORMED")
    };
    PatchResult { failure: Some(f), ..empty() }
}

fn candidates(list: Vec<core::Candidate>) -> Option<Vec<LineCandidate>> {
    Some(list.into_iter().map(|c| LineCandidate { line: c.line as u32, text: c.text }).collect())
}

fn failure_of(f: core::PatchFailure) -> PatchFailureInfo {
    match f {
        core::PatchFailure::Empty => failure("EMPTY"),
        core::PatchFailure::File { op, error } => {
            PatchFailureInfo { op: Some(op as u32), error: Some(NativeError::from(&error)), ..failure("FILE") }
        }
        core::PatchFailure::Hunk { op, miss } => match miss {
            core::HunkMiss::Context { chunk, line, text, candidates: c } => PatchFailureInfo {
                op: Some(op as u32),
                hunk: Some(chunk as u32),
                line: Some(line as u32),
                text: Some(text),
                candidates: candidates(c),
                ..failure("CONTEXT_NOT_FOUND")
            },
            core::HunkMiss::Lines { chunk, line, text, after, not_at_end, candidates: c } => PatchFailureInfo {
                op: Some(op as u32),
                hunk: Some(chunk as u32),
                line: Some(line as u32),
                text: Some(text),
                after: after.map(|a| a as u32),
                not_at_end: Some(not_at_end),
                candidates: candidates(c),
                ..failure("LINES_NOT_FOUND")
            },
            core::HunkMiss::Overlap { chunk, line } => PatchFailureInfo {
                op: Some(op as u32),
                hunk: Some(chunk as u32),
                line: Some(line as u32),
                ..failure("OVERLAP")
            },
        },
        core::PatchFailure::Commit(c) => commit_failure(c),
    }
}

fn commit_failure(c: core::CommitFailure) -> PatchFailureInfo {
    let on_disk = c
        .on_disk
        .into_iter()
        .map(|(real, state)| OnDiskInfo {
            real_path: real.display().to_string(),
            state: match state {
                core::OnDisk::Old => "old",
                core::OnDisk::New => "new",
                core::OnDisk::Unknown => "unknown",
            }
            .into(),
        })
        .collect();
    PatchFailureInfo { error: Some(NativeError::from(&c.error)), on_disk: Some(on_disk), ..failure("COMMIT") }
}

fn file_result(change: core::Changed, total_lines: u64, encoding: Option<core::TextEncoding>) -> PatchFileResult {
    let action = match (&change.written, &change.previous) {
        (None, _) => "removed",
        (Some(_), None) => "created",
        (Some(_), Some(_)) => "replaced",
    };
    let made_folders = change.made.iter().map(|p| p.display().to_string()).collect();
    let written = change.written.map(|mut w| {
        w.total_lines = total_lines;
        if let Some(encoding) = encoding {
            w.encoding = encoding;
        }
        WriteResult::from(w)
    });
    PatchFileResult {
        real_path: change.real.display().to_string(),
        action: action.into(),
        written,
        previous: change.previous.map(Buffer::from),
        previous_mode: change.previous_mode.as_ref().and_then(mode_bits),
        made_folders,
    }
}

#[cfg(unix)]
fn mode_bits(permissions: &std::fs::Permissions) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(permissions.mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_bits(_permissions: &std::fs::Permissions) -> Option<u32> {
    None
}

#[cfg(unix)]
fn permissions_of(mode: u32) -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(mode & 0o7777))
}

#[cfg(not(unix))]
fn permissions_of(_mode: u32) -> Option<std::fs::Permissions> {
    None
}

fn target_of(t: PatchTargetOptions) -> Result<core::OpTarget> {
    let expect = match (t.expect_size, t.expect_hash.as_deref()) {
        (None, None) if t.expect_absent == Some(false) => core::Expect::Any,
        (None, None) => core::Expect::Absent,
        (size, hash) => expectation(None, size, hash)?,
    };
    Ok(core::OpTarget {
        path: PathBuf::from(t.path),
        move_to: t.move_to.map(PathBuf::from),
        expect,
        label: t.label,
        move_label: t.move_label,
    })
}

#[napi]
impl Workspace {
    /// Parses a patch; the reply (`parsed`, or a MALFORMED `failure`) goes to `completer` as `id`.
    #[napi]
    pub fn parse_patch(&self, completer: &Completer, id: u32, patch: String) {
        run_on_pool(completer, id, AnyReply::Patch, move || {
            Ok(match core::parse_patch(&patch) {
                Err(e) => parse_failure(e),
                Ok(parsed) => {
                    let ops = parsed
                        .ops
                        .into_iter()
                        .map(|op| match op {
                            core::PatchOp::Add { path, line, .. } => {
                                PatchOpInfo { kind: "add".into(), path, move_to: None, line: line as u32 }
                            }
                            core::PatchOp::Delete { path, line } => {
                                PatchOpInfo { kind: "delete".into(), path, move_to: None, line: line as u32 }
                            }
                            core::PatchOp::Update { path, move_to, line, .. } => {
                                PatchOpInfo { kind: "update".into(), path, move_to, line: line as u32 }
                            }
                        })
                        .collect();
                    PatchResult { parsed: Some(ops), ..empty() }
                }
            })
        });
    }

    /// Applies a patch with the paths the caller checked (one target per operation, in
    /// order); the reply goes to `completer` as `id`.
    #[napi]
    pub fn apply_patch(
        &self,
        completer: &Completer,
        id: u32,
        options: ApplyPatchOptions,
        cancel: Option<&CancelToken>,
    ) -> Result<()> {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let targets = options.targets.into_iter().map(target_of).collect::<Result<Vec<_>>>()?;
        let mut config = core::PatchConfig::default();
        config
            .allow_outside(options.allow_outside.unwrap_or(false))
            .max_bytes(options.max_bytes.map(|b| b.max(0.0) as u64))
            .diff_lines(options.diff_lines.unwrap_or(400) as usize)
            .dry_run(options.dry_run.unwrap_or(false));
        let patch = options.patch;
        run_on_io_pool(completer, id, AnyReply::Patch, move || {
            let parsed = match core::parse_patch(&patch) {
                Ok(parsed) => parsed,
                Err(e) => return Ok(parse_failure(e)),
            };
            Ok(match core::apply_patch(&roots, &parsed, &targets, &config, &cancel)? {
                core::PatchOutcome::Failed(f) => PatchResult { failure: Some(failure_of(f)), ..empty() },
                core::PatchOutcome::Checked => empty(),
                core::PatchOutcome::Done { ops, files } => {
                    let ops = ops
                        .into_iter()
                        .map(|op| PatchOpResult {
                            action: op.action.name().into(),
                            path: op.path.display().to_string(),
                            to: op.to.map(|t| t.display().to_string()),
                            added: op.added as u32,
                            removed: op.removed as u32,
                            matched_by: op.fuzz.name().into(),
                            diff: cap_bytes(op.diff),
                        })
                        .collect();
                    let files =
                        files.into_iter().map(|f| file_result(f.change, f.total_lines, Some(f.encoding))).collect();
                    PatchResult { ops: Some(ops), files: Some(files), ..empty() }
                }
            })
        });
        Ok(())
    }

    /// Changes several files together or not at all (each must be its expected version),
    /// then removes `emptyFolders` (real paths, the deepest first) that are left empty; the
    /// reply (`files`, or a COMMIT `failure`) goes to `completer` as `id`.
    #[napi]
    pub fn commit_files(
        &self,
        completer: &Completer,
        id: u32,
        files: Vec<CommitFileOptions>,
        allow_outside: Option<bool>,
        empty_folders: Option<Vec<String>>,
    ) -> Result<()> {
        let roots = self.roots.clone();
        let changes = files
            .into_iter()
            .map(|f| {
                let expect =
                    expectation(f.checks.expect_absent, f.checks.expect_size, f.checks.expect_hash.as_deref())?;
                Ok(core::FileChange {
                    real: PathBuf::from(f.path),
                    expect,
                    content: f.bytes.map(|b| b.to_vec()),
                    mode: f.mode.and_then(permissions_of),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let folders: Vec<PathBuf> = empty_folders.unwrap_or_default().into_iter().map(PathBuf::from).collect();
        run_on_io_pool(completer, id, AnyReply::Patch, move || {
            let cancel = core::Cancel::new();
            Ok(match core::commit_files(&roots, &changes, allow_outside.unwrap_or(false), &cancel)? {
                Ok(changed) => {
                    core::remove_empty_folders(&roots, &folders);
                    PatchResult {
                        files: Some(changed.into_iter().map(|c| file_result(c, 0, None)).collect()),
                        ..empty()
                    }
                }
                Err(failure) => PatchResult { failure: Some(commit_failure(failure)), ..empty() },
            })
        });
        Ok(())
    }

    /// Inserts text as whole lines after a line of a file, with the checks and the atomic
    /// write of an edit; the reply goes to `completer` as `id`.
    #[napi]
    pub fn insert(
        &self,
        completer: &Completer,
        id: u32,
        options: InsertOptions,
        cancel: Option<&CancelToken>,
    ) -> Result<()> {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let config = core::WriteConfig::try_from(&options.checks)?;
        let snippet_lines = options.snippet_lines.unwrap_or(40) as usize;
        let diff_lines = options.diff_lines.unwrap_or(400) as usize;
        run_on_io_pool(completer, id, AnyReply::Edit, move || {
            let path = PathBuf::from(&options.path);
            let out = core::insert_into_file(&roots, &path, options.after as usize, &options.text, &config, &cancel)?;
            Ok(EditResult::of(out, &options.label, snippet_lines, diff_lines))
        });
        Ok(())
    }
}
