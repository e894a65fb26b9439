//! The bindings of the operations that change files: where a write lands, atomic
//! writes with a version check, exact-match edits, and the removal an undo needs.

use std::path::{Path, PathBuf};

use fsgate_core as core;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::{cancel_of, run_on_io_pool, run_on_pool, AnyReply, CancelToken, Completer, Workspace};

/// Where a write would land.
#[napi(object)]
pub struct TargetResult {
    /// The real path (symlinks followed, missing parts appended).
    pub real_path: String,
    /// Whether a file is there now.
    pub exists: bool,
    /// Whether the real path is inside the workspace or an allowed path.
    pub inside: bool,
    /// Size in bytes (0 when missing).
    pub size: f64,
    /// Modification time, ms since the epoch (0 when missing).
    pub mtime_ms: f64,
}

impl From<core::Target> for TargetResult {
    fn from(t: core::Target) -> TargetResult {
        TargetResult {
            real_path: t.real.display().to_string(),
            exists: t.exists,
            inside: t.inside,
            size: t.size as f64,
            mtime_ms: t.mtime_ms,
        }
    }
}

/// Options of [`Workspace::write`] and [`Workspace::remove`].
#[napi(object)]
pub struct WriteOptions {
    /// Absolute path to write.
    pub path: String,
    /// Text to write (stored with LF line endings, in the replaced file's encoding).
    pub text: Option<String>,
    /// Bytes to write as they are (a restore); used when `text` is absent.
    pub bytes: Option<Buffer>,
    /// What must hold when the bytes are written.
    pub checks: ChangeChecks,
}

/// The checks of a write, edit or removal. Paths are the real paths the caller checked.
#[napi(object)]
pub struct ChangeChecks {
    /// The file must not exist. @default false
    pub expect_absent: Option<bool>,
    /// The size the file must still have (with `expectHash`).
    pub expect_size: Option<f64>,
    /// The content hash the file must still have (32 hex digits).
    pub expect_hash: Option<String>,
    /// Whether real paths may lie outside the roots. @default false
    pub allow_outside: Option<bool>,
    /// Whether to return the bytes replaced. @default false
    pub keep_previous: Option<bool>,
    /// The largest existing file that may be replaced or edited. @default no limit
    pub max_bytes: Option<f64>,
    /// Make every check and write nothing; the result describes what would be written. @default false
    pub dry_run: Option<bool>,
}

impl TryFrom<&ChangeChecks> for core::WriteConfig {
    type Error = Error;

    fn try_from(c: &ChangeChecks) -> Result<core::WriteConfig> {
        let mut config = core::WriteConfig::default();
        config
            .expect(expectation(c.expect_absent, c.expect_size, c.expect_hash.as_deref())?)
            .allow_outside(c.allow_outside.unwrap_or(false))
            .keep_previous(c.keep_previous.unwrap_or(false))
            .max_bytes(c.max_bytes.map(|b| b.max(0.0) as u64))
            .dry_run(c.dry_run.unwrap_or(false))
            // Paths from JavaScript are the real paths it checked: hold the core to them.
            .real_only(true);
        Ok(config)
    }
}

/// What a write, edit or removal left on disk.
#[napi(object)]
pub struct WriteResult {
    /// The real path written.
    pub real_path: String,
    /// Whether the file was created.
    pub created: bool,
    /// Size in bytes now.
    pub size: f64,
    /// Modification time now, ms since the epoch.
    pub mtime_ms: f64,
    /// Content hash of the new bytes, 32 hex digits.
    pub hash: String,
    /// Lines of the new text.
    pub total_lines: f64,
    /// "utf-8", "utf-8-bom", "utf-16le" or "utf-16be".
    pub encoding: String,
    /// The bytes replaced or removed, when asked for.
    pub previous: Option<Buffer>,
}

impl From<core::Written> for WriteResult {
    fn from(w: core::Written) -> WriteResult {
        WriteResult {
            real_path: w.real.display().to_string(),
            created: w.created,
            size: w.size as f64,
            mtime_ms: w.mtime_ms,
            hash: core::hex128(w.hash),
            total_lines: w.total_lines as f64,
            encoding: w.encoding.name().into(),
            previous: w.previous.map(Buffer::from),
        }
    }
}

/// Options of [`Workspace::edit`].
#[napi(object)]
pub struct EditOptions {
    /// Absolute path of the file whose text is edited.
    pub source: String,
    /// Absolute path to write (the source, or a new working copy beside it).
    pub path: String,
    /// The text to replace.
    pub old_string: String,
    /// The replacement.
    pub new_string: String,
    /// Replace every occurrence. @default false
    pub replace_all: Option<bool>,
    /// Strip trailing whitespace from new_string's lines. @default true
    pub strip_trailing_whitespace: Option<bool>,
    /// What must hold of the source when the edit is written.
    pub checks: ChangeChecks,
    /// The file's name in the diff headers.
    pub label: String,
    /// Most lines of the snippet shown to the model. @default 40
    pub snippet_lines: Option<u32>,
    /// Most lines of the unified diff. @default 400
    pub diff_lines: Option<u32>,
}

/// A line that resembles an old_string that was not found.
#[napi(object)]
pub struct LineCandidate {
    /// 1-based line number.
    pub line: u32,
    /// The line (cut at 200 characters).
    pub text: String,
}

/// Why an edit was not made.
#[napi(object)]
pub struct EditFailureInfo {
    /// NO_CHANGE, FILE_EXISTS, STRING_NOT_FOUND, AMBIGUOUS_MATCH or LINE_OUT_OF_RANGE.
    pub code: String,
    /// AMBIGUOUS_MATCH: how many times old_string occurs; LINE_OUT_OF_RANGE: the lines the file has.
    pub count: Option<u32>,
    /// AMBIGUOUS_MATCH: the rung that found the occurrences.
    pub matched_by: Option<String>,
    /// STRING_NOT_FOUND: the closest lines.
    pub candidates: Option<Vec<LineCandidate>>,
}

/// The outcome of an edit: `written` and the edit facts, or `failure`.
#[napi(object)]
pub struct EditResult {
    /// What is on disk now (absent on failure).
    pub written: Option<WriteResult>,
    /// The rung of the matching ladder that found old_string.
    pub matched_by: Option<String>,
    /// Replacements made.
    pub count: Option<u32>,
    /// The edited region with line numbers.
    pub snippet: Option<String>,
    /// A unified diff of the change.
    pub diff: Option<String>,
    /// The first line changed (1-based).
    pub first_line: Option<u32>,
    /// Why nothing was written.
    pub failure: Option<EditFailureInfo>,
}

pub(crate) fn expectation(absent: Option<bool>, size: Option<f64>, hash: Option<&str>) -> Result<core::Expect> {
    if absent == Some(true) {
        return Ok(core::Expect::Absent);
    }
    match (size, hash) {
        (Some(size), Some(hash)) => {
            let hash = u128::from_str_radix(hash, 16)
                .map_err(|_| Error::new(Status::InvalidArg, "expectHash must be 32 hex digits"))?;
            Ok(core::Expect::Version { size: size.max(0.0) as u64, hash })
        }
        (None, None) => Ok(core::Expect::Any),
        _ => Err(Error::new(Status::InvalidArg, "expectSize and expectHash go together")),
    }
}

fn failure_info(failure: core::EditFailure) -> EditFailureInfo {
    let mut info = EditFailureInfo { code: String::new(), count: None, matched_by: None, candidates: None };
    match failure {
        core::EditFailure::NoChange => info.code = "NO_CHANGE".into(),
        core::EditFailure::NotEmpty => info.code = "FILE_EXISTS".into(),
        core::EditFailure::NotFound { candidates } => {
            info.code = "STRING_NOT_FOUND".into();
            info.candidates =
                Some(candidates.into_iter().map(|c| LineCandidate { line: c.line as u32, text: c.text }).collect());
        }
        core::EditFailure::Ambiguous { count, rung } => {
            info.code = "AMBIGUOUS_MATCH".into();
            info.count = Some(count as u32);
            info.matched_by = Some(rung.name().into());
        }
        core::EditFailure::LineOutOfRange { lines } => {
            info.code = "LINE_OUT_OF_RANGE".into();
            info.count = Some(lines as u32);
        }
    }
    info
}

#[napi]
impl Workspace {
    /// Resolves where a write to `path` would land; the reply goes to `completer` as `id`.
    #[napi]
    pub fn target(&self, completer: &Completer, id: u32, path: String, allow_outside: Option<bool>) {
        let roots = self.roots.clone();
        run_on_pool(completer, id, AnyReply::Target, move || {
            roots.target(Path::new(&path), allow_outside.unwrap_or(false)).map(TargetResult::from)
        });
    }

    /// Writes a file atomically after checking it is still the expected version; the reply
    /// goes to `completer` as `id`. `path` must be the real path the caller checked.
    #[napi]
    pub fn write(&self, completer: &Completer, id: u32, options: WriteOptions) -> Result<()> {
        let roots = self.roots.clone();
        let config = core::WriteConfig::try_from(&options.checks)?;
        let path = PathBuf::from(options.path);
        let (text, bytes) = (options.text, options.bytes);
        if text.is_none() && bytes.is_none() {
            return Err(Error::new(Status::InvalidArg, "write needs text or bytes"));
        }
        run_on_io_pool(completer, id, AnyReply::Written, move || {
            let payload = match (&text, &bytes) {
                (Some(t), _) => core::Payload::Text(t),
                (None, Some(b)) => core::Payload::Bytes(b),
                (None, None) => unreachable!("checked above"),
            };
            core::write_file(&roots, &path, payload, &config).map(WriteResult::from)
        });
        Ok(())
    }

    /// Removes a file if it is still the expected version (the undo of a creation); the
    /// reply (with the removed bytes as `previous`) goes to `completer` as `id`.
    #[napi]
    pub fn remove(&self, completer: &Completer, id: u32, options: WriteOptions) -> Result<()> {
        let roots = self.roots.clone();
        let checks = &options.checks;
        let expect = expectation(checks.expect_absent, checks.expect_size, checks.expect_hash.as_deref())?;
        let allow_outside = checks.allow_outside.unwrap_or(false);
        let path = PathBuf::from(options.path);
        run_on_io_pool(completer, id, AnyReply::Written, move || {
            let bytes = core::remove_file(&roots, &path, expect, allow_outside)?;
            Ok(WriteResult {
                real_path: path.display().to_string(),
                created: false,
                size: 0.0,
                mtime_ms: 0.0,
                hash: core::hex128(core::hash_bytes(b"")),
                total_lines: 0.0,
                encoding: "utf-8".into(),
                previous: Some(Buffer::from(bytes)),
            })
        });
        Ok(())
    }

    /// Applies one exact-match edit and writes it atomically; the reply goes to
    /// `completer` as `id`. `source` and `path` must be the real paths the caller checked.
    #[napi]
    pub fn edit(
        &self,
        completer: &Completer,
        id: u32,
        options: EditOptions,
        cancel: Option<&CancelToken>,
    ) -> Result<()> {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let config = core::WriteConfig::try_from(&options.checks)?;
        let snippet_lines = options.snippet_lines.unwrap_or(40) as usize;
        let diff_lines = options.diff_lines.unwrap_or(400) as usize;
        run_on_io_pool(completer, id, AnyReply::Edit, move || {
            let spec = core::EditSpec {
                old: &options.old_string,
                new: &options.new_string,
                replace_all: options.replace_all.unwrap_or(false),
                strip_trailing_whitespace: options.strip_trailing_whitespace.unwrap_or(true),
            };
            let source = PathBuf::from(&options.source);
            let path = PathBuf::from(&options.path);
            let out = core::edit_file(&roots, &source, &path, &spec, &config, &cancel)?;
            Ok(EditResult::of(out, &options.label, snippet_lines, diff_lines))
        });
        Ok(())
    }
}

impl EditResult {
    /// The reply of an edit's outcome: a snippet and a diff of the change, or the failure.
    pub(crate) fn of(out: core::EditOutcome, label: &str, snippet_lines: usize, diff_lines: usize) -> EditResult {
        match out {
            core::EditOutcome::Failed(failure) => EditResult {
                written: None,
                matched_by: None,
                count: None,
                snippet: None,
                diff: None,
                first_line: None,
                failure: Some(failure_info(failure)),
            },
            core::EditOutcome::Done { written, edit, before, first_line } => EditResult {
                snippet: Some(core::snippet(&edit.text, &edit.spans, 4, snippet_lines)),
                diff: Some(cap_bytes(core::unified_diff(&before, &edit.text, &edit.spans, label, 3, diff_lines))),
                matched_by: Some(edit.rung.name().into()),
                count: Some(edit.count as u32),
                first_line: Some(first_line as u32),
                written: Some(WriteResult::from(written)),
                failure: None,
            },
        }
    }
}

/// Most bytes of a diff sent back: a minified one-line file would otherwise make a huge one.
const DIFF_BYTES: usize = 256 * 1024;

pub(crate) fn cap_bytes(mut diff: String) -> String {
    if diff.len() > DIFF_BYTES {
        let mut cut = DIFF_BYTES;
        while !diff.is_char_boundary(cut) {
            cut -= 1;
        }
        diff.truncate(cut);
        diff.push_str("\n… diff cut at 256 KiB\n");
    }
    diff
}
