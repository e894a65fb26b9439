//! Changing files without ever leaving a half-written one: where a write lands, the
//! check that the file is still the version the caller saw, text that round-trips in the
//! file's own encoding, and the temp-file + fsync + rename that makes the change atomic.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::cancel::Cancel;
use crate::confine::{blocked, check_malformed, follow_links, is_stream_alias, Roots};
use crate::dir::{Dir, Made, Stat};
use crate::edit::{apply_edit, insert_lines, EditFailure, EditSpec, Edited};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::hash_bytes;
use crate::page::group;
use crate::sniff::{sniff, Kind, TextEncoding};

/// Where a write to a path would land.
#[derive(Debug, Clone)]
pub struct Target {
    /// The real path: every existing symlink followed, missing parts appended.
    pub real: PathBuf,
    /// Whether a file is there now.
    pub exists: bool,
    /// Whether the real path lies inside the roots.
    pub inside: bool,
    /// Its size (0 when missing).
    pub size: u64,
    /// Its modification time in ms since the epoch (0 when missing).
    pub mtime_ms: f64,
}

impl Roots {
    /// Resolves where a write to `path` would land, following symlinks (a link inside
    /// the roots is written through, not replaced). A directory is
    /// [`ErrorKind::IsDirectory`]; a device or other special file
    /// [`ErrorKind::BlockedDevice`]; a real path outside the roots
    /// [`ErrorKind::OutsideRoots`] unless `allow_outside`.
    pub fn target(&self, path: &Path, allow_outside: bool) -> Result<Target> {
        check_malformed(path)?;
        if is_stream_alias(path) {
            return Err(blocked(path));
        }
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            Err(_) => {
                let followed = follow_links(path).map_err(|_| {
                    Error::new(ErrorKind::InvalidPath, "has a symlink loop or too many symlinks").with_path(path)
                })?;
                canonical_prefix(&followed)
            }
        };
        let inside = self.contains(&real);
        if !inside && !allow_outside {
            return Err(Error::new(
                ErrorKind::OutsideRoots,
                format!("resolves to {} which is outside the allowed folders", real.display()),
            )
            .with_path(path));
        }
        let meta = match std::fs::symlink_metadata(&real) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if e.raw_os_error() == Some(libc_enotdir()) => {
                return Err(
                    Error::new(ErrorKind::InvalidPath, "has a part that is a file, not a folder").with_path(path)
                )
            }
            Err(e) => return Err(Error::io(e).with_path(path)),
        };
        if let Some(meta) = &meta {
            if meta.is_dir() {
                return Err(Error::new(ErrorKind::IsDirectory, "is a directory").with_path(path));
            }
            if !meta.is_file() {
                return Err(blocked(path));
            }
        }
        Ok(Target {
            real,
            exists: meta.is_some(),
            inside,
            size: meta.as_ref().map_or(0, |m| m.len()),
            mtime_ms: meta.as_ref().map_or(0.0, mtime_ms),
        })
    }
}

/// A path whose last parts do not exist yet, with its existing part in the system's
/// canonical form (the form the roots are in: `\\?\C:\` on Windows, the real case of
/// each name on macOS), so that it compares equal to the roots and to later resolutions.
fn canonical_prefix(path: &Path) -> PathBuf {
    for base in path.ancestors().skip(1) {
        if let Ok(real) = std::fs::canonicalize(base) {
            let rest = path.strip_prefix(base).unwrap_or(path);
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// What the caller expects to find at the path just before the write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expect {
    /// Anything (no check).
    #[default]
    Any,
    /// No file: the write creates one ([`ErrorKind::Exists`] otherwise).
    Absent,
    /// This exact version (size and content hash; [`ErrorKind::Stale`] otherwise).
    Version {
        /// Size in bytes.
        size: u64,
        /// Content hash ([`hash_bytes`]).
        hash: u128,
    },
}

/// How to write. Built with setters; see each for its default.
#[derive(Clone, Debug, Default)]
pub struct WriteConfig {
    expect: Expect,
    allow_outside: bool,
    keep_previous: bool,
    real_only: bool,
    max_bytes: Option<u64>,
    dry_run: bool,
}

impl WriteConfig {
    /// What must be at the path when the bytes are written. By default, anything.
    pub fn expect(&mut self, expect: Expect) -> &mut Self {
        self.expect = expect;
        self
    }

    /// What the write expects to find (see [`WriteConfig::expect`]).
    pub fn expected(&self) -> Expect {
        self.expect
    }

    /// Whether the real path may lie outside the roots (the caller has decided it may).
    /// By default, this is disabled.
    pub fn allow_outside(&mut self, yes: bool) -> &mut Self {
        self.allow_outside = yes;
        self
    }

    /// Whether to return the bytes that were replaced. By default, this is disabled.
    pub fn keep_previous(&mut self, yes: bool) -> &mut Self {
        self.keep_previous = yes;
        self
    }

    /// Whether the path given must already be the real path (the caller resolved and
    /// checked it): if it now resolves elsewhere, a folder on it was swapped for a link
    /// since, and the write is [`ErrorKind::Stale`]. By default, this is disabled.
    pub fn real_only(&mut self, yes: bool) -> &mut Self {
        self.real_only = yes;
        self
    }

    /// The largest existing file that may be replaced or edited ([`ErrorKind::TooLarge`]
    /// past it). By default, there is no limit.
    pub fn max_bytes(&mut self, bytes: Option<u64>) -> &mut Self {
        self.max_bytes = bytes;
        self
    }

    /// Whether to make every check of the change (where it lands, the expected version,
    /// the size limit, the encoding, an edit's match) and stop before anything is
    /// written: the returned [`Written`] describes the bytes that would be written, with
    /// `mtime_ms` 0. A caller asks a person about a change only once it would succeed,
    /// then makes it for real, when every check runs again. By default, this is disabled.
    pub fn dry_run(&mut self, yes: bool) -> &mut Self {
        self.dry_run = yes;
        self
    }

    /// Whether this is a dry run (see [`WriteConfig::dry_run`]).
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }
}

/// What a dry run reports in place of a write: the bytes that would land at `place`.
fn unwritten(place: &Place, bytes: &[u8], created: bool) -> Written {
    Written {
        real: place.folder.join(&place.name),
        created,
        size: bytes.len() as u64,
        mtime_ms: 0.0,
        hash: hash_bytes(bytes),
        total_lines: 0,
        encoding: TextEncoding::Utf8,
        previous: None,
    }
}

/// What a write or edit left on disk.
#[derive(Debug)]
pub struct Written {
    /// The real path written.
    pub real: PathBuf,
    /// Whether the file was created (it did not exist).
    pub created: bool,
    /// Size in bytes now.
    pub size: u64,
    /// Modification time now, ms since the epoch.
    pub mtime_ms: f64,
    /// Content hash of the new bytes.
    pub hash: u128,
    /// Lines of the new text, counted as a read counts them.
    pub total_lines: u64,
    /// The encoding the text was written in.
    pub encoding: TextEncoding,
    /// The bytes replaced (when asked for and the file existed).
    pub previous: Option<Vec<u8>>,
}

/// What to write.
#[derive(Debug, Clone, Copy)]
pub enum Payload<'a> {
    /// Text: stored with LF line endings, in the encoding (and BOM) of the file it
    /// replaces, or UTF-8 for a new file.
    Text(&'a str),
    /// Bytes, written as they are (a restore).
    Bytes(&'a [u8]),
}

/// Resolves where a change lands, holding the caller to the path it checked.
fn resolve(roots: &Roots, path: &Path, config: &WriteConfig) -> Result<Target> {
    let target = roots.target(path, config.allow_outside)?;
    if config.real_only && target.real != path {
        return Err(Error::new(
            ErrorKind::Stale,
            format!("now resolves to {}: a folder on its path was replaced by a link", target.real.display()),
        )
        .with_path(path));
    }
    Ok(target)
}

/// A file about to change as part of a larger change: where it lands, and the bytes and
/// metadata there now (None: no file). Reading it resolves the path and checks it against
/// `config` as [`write_file`] does.
pub(crate) struct Prepared {
    pub place: Place,
    pub current: Option<(Vec<u8>, Metadata)>,
}

/// Resolves `path`, reads what is there and checks it against `config`'s expectation.
pub(crate) fn prepare(roots: &Roots, path: &Path, config: &WriteConfig) -> Result<Prepared> {
    let target = resolve(roots, path, config)?;
    let place = Place::of(&target, path)?;
    let current = read_current(&place, path, config.max_bytes, true)?;
    check_expectation(config.expect, current.as_ref(), path)?;
    Ok(Prepared { place, current })
}

/// Writes `payload` to `path` atomically: the real target is resolved, the current file
/// checked against `config`'s expectation, the bytes written to a temp file in the same
/// folder, flushed to disk and renamed over the target (keeping its mode). Missing
/// folders are created. A crash at any point leaves the old file or the new one.
pub fn write_file(roots: &Roots, path: &Path, payload: Payload<'_>, config: &WriteConfig) -> Result<Written> {
    let target = resolve(roots, path, config)?;
    let place = Place::of(&target, path)?;
    let current = read_current(&place, path, config.max_bytes, true)?;
    check_expectation(config.expect, current.as_ref(), path)?;
    let mut lines = 0;
    let (bytes, encoding) = match payload {
        Payload::Bytes(b) => (b.to_vec(), decode(b).map_or(TextEncoding::Utf8, |(_, enc)| enc)),
        Payload::Text(text) => {
            let text = lf_only(text);
            lines = count_lines(&text);
            let encoding = match current.as_ref().map(|(bytes, _)| (sniff(bytes), bytes)) {
                Some((Kind::Text(enc), bytes)) => {
                    // Text shown from a file in a legacy encoding has U+FFFD where its
                    // bytes were; writing that back would destroy them for good.
                    if text.contains('\u{FFFD}') && decode(bytes).is_err() {
                        return Err(Error::new(
                            ErrorKind::Encoding,
                            "is not valid UTF-8 (it may be Latin-1 or another legacy encoding), and the new content has U+FFFD where its undecodable bytes were",
                        )
                        .with_path(path));
                    }
                    enc
                }
                _ => TextEncoding::Utf8,
            };
            (encode(&text, encoding), encoding)
        }
    };
    if let Payload::Bytes(b) = payload {
        lines = count_lines(&String::from_utf8_lossy(b));
    }
    if config.dry_run {
        place.check_writable(path)?;
        return Ok(Written { total_lines: lines, encoding, ..unwritten(&place, &bytes, current.is_none()) });
    }
    let carry =
        Carry { permissions: current.as_ref().map(|(_, m)| m.permissions()), owner: current.as_ref().map(|(_, m)| m) };
    // A write that expects any version replaces whatever is there; one that expects a
    // version takes the last look.
    let look = config.expect != Expect::Any;
    let replacing = current.as_ref().map(|(read, before)| Replacing { before, read, look });
    let mut written = replace_atomically(place, &bytes, carry, replacing).map_err(|e| e.with_path(path))?;
    written.total_lines = lines;
    written.encoding = encoding;
    written.previous = if config.keep_previous { current.map(|(b, _)| b) } else { None };
    Ok(written)
}

/// The outcome of [`edit_file`]: the edit made, or why not.
#[derive(Debug)]
pub enum EditOutcome {
    /// The edit was written.
    Done {
        /// What is on disk now.
        written: Written,
        /// The replacement made.
        edit: Edited,
        /// The text before the edit (for diffs and snippets).
        before: String,
        /// The 1-based line where the first replacement starts.
        first_line: u64,
    },
    /// The edit could not be applied; nothing was written.
    Failed(EditFailure),
}

/// Applies one exact-match edit. The text is read from `source` (the file the caller
/// read), checked against `config`'s expectation, decoded in its own encoding (text
/// that would not survive a round trip is [`ErrorKind::Encoding`]), edited, and written
/// atomically to `path` (usually the same file; a working copy otherwise). A missing
/// `source` reads as empty text (so `old: ""` creates the file).
pub fn edit_file(
    roots: &Roots,
    source: &Path,
    path: &Path,
    spec: &EditSpec<'_>,
    config: &WriteConfig,
    cancel: &Cancel,
) -> Result<EditOutcome> {
    change_text(roots, source, path, config, cancel, &|text| apply_edit(text, spec))
}

/// Inserts `new` as whole lines after line `after` (0: at the start) of the file at
/// `path` ([`insert_lines`]), with the checks and the atomic write of [`edit_file`].
pub fn insert_into_file(
    roots: &Roots,
    path: &Path,
    after: usize,
    new: &str,
    config: &WriteConfig,
    cancel: &Cancel,
) -> Result<EditOutcome> {
    change_text(roots, path, path, config, cancel, &|text| insert_lines(text, after, new))
}

/// A change of a file's text computed by `change` (see [`edit_file`]).
fn change_text(
    roots: &Roots,
    source: &Path,
    path: &Path,
    config: &WriteConfig,
    cancel: &Cancel,
    change: &dyn Fn(&str) -> std::result::Result<Edited, EditFailure>,
) -> Result<EditOutcome> {
    let from = resolve(roots, source, config)?;
    let from = Place::of(&from, source)?;
    let current = read_current(&from, source, config.max_bytes, source == path)?;
    check_expectation(config.expect, current.as_ref(), source)?;
    let (before, encoding) = match &current {
        Some((bytes, _)) => decode(bytes).map_err(|e| e.with_path(source))?,
        None => (String::new(), TextEncoding::Utf8),
    };
    cancel.check()?;
    let edit = match change(&before) {
        Ok(edit) => edit,
        Err(failure) => return Ok(EditOutcome::Failed(failure)),
    };
    cancel.check()?;
    let bytes = encode(&edit.text, encoding);
    let (dest, carry, replacing) = if source == path {
        let carry = Carry {
            permissions: current.as_ref().map(|(_, m)| m.permissions()),
            owner: current.as_ref().map(|(_, m)| m),
        };
        (from, carry, current.as_ref().map(|(read, before)| Replacing { before, read, look: true }))
    } else {
        // A working copy: created beside the source, never over another file. It is the
        // writer's own file, with the source's mode plus the right to write it again.
        let to = resolve(roots, path, config)?;
        if to.exists {
            return Err(Error::new(ErrorKind::Exists, "already exists").with_path(path));
        }
        let to = Place::of(&to, path)?;
        (to, Carry { permissions: current.as_ref().map(|(_, m)| writable_by_owner(m)), owner: None }, None)
    };
    let mut written = if config.dry_run {
        dest.check_writable(path)?;
        unwritten(&dest, &bytes, replacing.is_none())
    } else {
        replace_atomically(dest, &bytes, carry, replacing).map_err(|e| e.with_path(path))?
    };
    written.total_lines = count_lines(&edit.text);
    written.encoding = encoding;
    written.previous = if config.keep_previous && source == path { current.map(|(b, _)| b) } else { None };
    let start = edit.spans.first().map_or(0, |(old, _)| old.start);
    let first_line = memchr::memchr_iter(b'\n', &before.as_bytes()[..start]).count() as u64 + 1;
    Ok(EditOutcome::Done { written, edit, before, first_line })
}

/// Removes a file the caller created, if it is still the version expected (an undo of a
/// creation). `path` must be the real path. Returns the bytes removed.
pub fn remove_file(roots: &Roots, path: &Path, expect: Expect, allow_outside: bool) -> Result<Vec<u8>> {
    let mut config = WriteConfig::default();
    config.allow_outside(allow_outside).real_only(true);
    let target = resolve(roots, path, &config)?;
    let place = Place::of(&target, path)?;
    let current = read_current(&place, path, None, true)?;
    check_expectation(expect, current.as_ref(), path)?;
    let (Some((bytes, meta)), Some(dir)) = (current, place.dir.as_ref()) else {
        return Err(Error::new(ErrorKind::NotFound, "no such file").with_path(path));
    };
    // Removed by name inside the folder held open, in the folder's turn, and only if that
    // name is still the file just checked: a folder swapped for a link meanwhile cannot
    // aim the removal at a file elsewhere, nor another process's new version be removed.
    let _turn = dir.lock().map_err(|e| e.with_path(path))?;
    if !dir.stat(&place.name).is_ok_and(|now| same_file(&meta, &now)) {
        return Err(Error::new(ErrorKind::Stale, "was replaced since it was checked").with_path(path));
    }
    dir.remove(&place.name).map_err(|e| Error::io(e).with_path(path))?;
    Ok(bytes)
}

/// Whether the process may make and rename files in `folder` (or, for a folder still to
/// be made, in the nearest one that exists): a dry run's last check, so that the user is
/// not asked to allow a change that a read-only, immutable or foreign folder would refuse.
pub(crate) fn check_writable(folder: &Path, path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let existing = folder.ancestors().find(|a| a.exists()).unwrap_or(folder);
        let c = std::ffi::CString::new(existing.as_os_str().as_bytes())
            .map_err(|_| Error::new(ErrorKind::InvalidPath, "holds a NUL byte").with_path(path))?;
        // SAFETY: a valid C string; faccessat reads it and nothing else.
        let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK | libc::X_OK, libc::AT_EACCESS) };
        if rc != 0 {
            return Err(Error::io(std::io::Error::last_os_error()).with_path(path));
        }
    }
    #[cfg(not(unix))]
    let _ = (folder, path);
    Ok(())
}

/// Where a change lands: the real path's folder, held open when it exists ([`Dir`]), and
/// the name in it. Everything the change does to the file goes through the held folder.
pub(crate) struct Place {
    folder: PathBuf,
    name: std::ffi::OsString,
    dir: Option<Dir>,
    /// How many times the folder had to be made again (see [`replace_atomically`]).
    remade: u32,
}

impl Place {
    /// Whether the folder exists now (a change into it makes no folder).
    pub(crate) fn has_folder(&self) -> bool {
        self.dir.is_some()
    }

    /// See [`check_writable`].
    pub(crate) fn check_writable(&self, path: &Path) -> Result<()> {
        check_writable(&self.folder, path)
    }

    pub(crate) fn of(target: &Target, path: &Path) -> Result<Place> {
        let (Some(folder), Some(name)) = (target.real.parent(), target.real.file_name()) else {
            return Err(Error::new(ErrorKind::InvalidPath, "has no parent folder").with_path(path));
        };
        let dir = match Dir::open(folder) {
            Ok(dir) => Some(dir),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e.with_path(path)),
        };
        Ok(Place { folder: folder.to_path_buf(), name: name.to_os_string(), dir, remade: 0 })
    }

    /// Holds the folder, making it (and the folders missing on the way) if it is not
    /// there; returns the folders made, for a failed change to remove.
    fn hold(&mut self) -> Result<Made> {
        if self.dir.is_some() {
            return Ok(Made::default());
        }
        let (dir, made) = Dir::make(&self.folder)?;
        self.dir = Some(dir);
        Ok(made)
    }
}

/// Decodes a text file's bytes in their own encoding (UTF-8, with or without a BOM, or
/// UTF-16 with a BOM; the BOM is not part of the text). Anything that would not be
/// written back byte for byte — invalid UTF-8 in any other encoding, binary data — is
/// [`ErrorKind::Encoding`].
pub fn decode(bytes: &[u8]) -> Result<(String, TextEncoding)> {
    let encoding = match sniff(bytes) {
        Kind::Text(enc) => enc,
        Kind::Binary(what) => return Err(Error::new(ErrorKind::Encoding, format!("is binary ({what}), not text"))),
        Kind::Pdf => return Err(Error::new(ErrorKind::Encoding, "is a PDF, not text")),
        Kind::Image(_) => return Err(Error::new(ErrorKind::Encoding, "is an image, not text")),
    };
    let text = match encoding {
        TextEncoding::Utf8 | TextEncoding::Utf8Bom => {
            let body = if encoding == TextEncoding::Utf8Bom { &bytes[3..] } else { bytes };
            std::str::from_utf8(body)
                .map_err(|e| {
                    let at = e.valid_up_to() + if encoding == TextEncoding::Utf8Bom { 3 } else { 0 };
                    Error::new(
                        ErrorKind::Encoding,
                        format!("is not valid UTF-8 (byte {at}); it may be Latin-1 or another legacy encoding"),
                    )
                })?
                .to_owned()
        }
        TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            let body = &bytes[2..];
            if body.len() % 2 != 0 {
                return Err(Error::new(ErrorKind::Encoding, "is UTF-16 with an odd number of bytes"));
            }
            let le = encoding == TextEncoding::Utf16Le;
            let units = body.chunks_exact(2).map(|p| {
                if le {
                    u16::from_le_bytes([p[0], p[1]])
                } else {
                    u16::from_be_bytes([p[0], p[1]])
                }
            });
            char::decode_utf16(units)
                .collect::<std::result::Result<String, _>>()
                .map_err(|_| Error::new(ErrorKind::Encoding, "is UTF-16 with an unpaired surrogate"))?
        }
    };
    Ok((text, encoding))
}

/// Encodes text in `encoding`, with its BOM where it has one: the inverse of [`decode`].
pub fn encode(text: &str, encoding: TextEncoding) -> Vec<u8> {
    match encoding {
        TextEncoding::Utf8 => text.as_bytes().to_vec(),
        TextEncoding::Utf8Bom => [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
        TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            let le = encoding == TextEncoding::Utf16Le;
            let mut out = Vec::with_capacity(2 + text.len() * 2);
            out.extend_from_slice(if le { &[0xFF, 0xFE] } else { &[0xFE, 0xFF] });
            for unit in text.encode_utf16() {
                out.extend_from_slice(&if le { unit.to_le_bytes() } else { unit.to_be_bytes() });
            }
            out
        }
    }
}

/// Lines as a read counts them: a final line without a line break counts, an empty
/// text has none.
fn count_lines(text: &str) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

/// CRLF line endings turned into LF (a lone CR is content, e.g. a progress line, and stays).
fn lf_only(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\r\n") {
        return text.into();
    }
    text.replace("\r\n", "\n").into()
}

/// Reads the file at the place, if there is one, by name inside its held folder.
/// `replaced` says whether it will be written over (and so must be writable), rather than
/// only read (the source of a working copy).
fn read_current(
    place: &Place,
    path: &Path,
    max_bytes: Option<u64>,
    replaced: bool,
) -> Result<Option<(Vec<u8>, Metadata)>> {
    let Some(dir) = place.dir.as_ref() else { return Ok(None) };
    let mut file = match dir.open_file(&place.name) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.with_path(path)),
    };
    let meta = file.metadata().map_err(|e| Error::io(e).with_path(path))?;
    if let Some(max) = max_bytes.filter(|&max| meta.len() > max) {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("is {} bytes, over the {} byte limit for write and edit", group(meta.len()), group(max)),
        )
        .with_path(path));
    }
    if replaced && !dir.writable(&place.name) {
        return Err(Error::new(ErrorKind::PermissionDenied, "is read-only for this process").with_path(path));
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| {
        Error::new(ErrorKind::TooLarge, format!("is {} bytes, more than can be held in memory", group(meta.len())))
            .with_path(path)
    })?;
    // Bounded even if the file grows while it is read.
    let cap = max_bytes.map_or(u64::MAX, |max| max.saturating_add(1));
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, cap), &mut bytes)
        .map_err(|e| Error::io(e).with_path(path))?;
    if let Some(max) = max_bytes.filter(|&max| bytes.len() as u64 > max) {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!("grew past the {} byte limit while it was read", group(max)),
        )
        .with_path(path));
    }
    Ok(Some((bytes, meta)))
}

fn check_expectation(expect: Expect, current: Option<&(Vec<u8>, Metadata)>, path: &Path) -> Result<()> {
    match (expect, current) {
        (Expect::Any, _) | (Expect::Absent, None) => Ok(()),
        (Expect::Absent, Some(_)) => Err(Error::new(ErrorKind::Exists, "already exists").with_path(path)),
        (Expect::Version { .. }, None) => {
            Err(Error::new(ErrorKind::Stale, "was deleted since it was read").with_path(path))
        }
        (Expect::Version { size, hash }, Some((bytes, _))) => {
            if bytes.len() as u64 != size || hash_bytes(bytes) != hash {
                Err(Error::new(ErrorKind::Stale, "was modified since it was read").with_path(path))
            } else {
                Ok(())
            }
        }
    }
}

/// What a new version carries over from the file it replaces (or is copied from).
#[derive(Default)]
pub(crate) struct Carry<'a> {
    /// The permissions to give it (None: a new file's default).
    pub permissions: Option<std::fs::Permissions>,
    /// The file whose owner and group it should keep.
    pub owner: Option<&'a Metadata>,
}

/// How a change lands on a file that is there: the bytes it was made from (and their
/// metadata), and whether the file must still be exactly that when the change lands.
#[derive(Clone, Copy)]
pub(crate) struct Replacing<'a> {
    pub before: &'a Metadata,
    pub read: &'a [u8],
    /// Whether the last look is taken: always for an edit (made from the bytes read); for
    /// a write only when the caller expects a version ([`Expect::Any`] means anything).
    pub look: bool,
}

/// Writes `bytes` to a temp file beside the place's file (private until it has its final
/// mode), flushes it, and moves it into place: over `replacing`, or, when `replacing` is
/// None, only where no file is (a file that appeared meanwhile is [`ErrorKind::Exists`],
/// never replaced). The folder is flushed too, so the change survives a power cut.
///
/// Everything happens inside the folder held open ([`Dir`]): missing folders are made
/// one inside the other, and the temp file, the last look, the rename and, on failure,
/// the removal of the temp file and of the folders made all go through it. A folder on
/// the path swapped for a link meanwhile can neither redirect the write nor strand a temp
/// file outside. On failure `real` is untouched and nothing new is left.
fn replace_atomically(
    place: Place,
    bytes: &[u8],
    carry: Carry<'_>,
    replacing: Option<Replacing<'_>>,
) -> Result<Written> {
    stage(place, bytes, carry)?.install(replacing, true).map(|installed| installed.written)
}

/// A new version of a file written and flushed to a temp file beside it, not yet in
/// place: [`Staged::install`] moves it in, [`Staged::discard`] takes it away. A change of
/// several files that must land together (a patch) stages every file first, so that a
/// full disk or any other write error is met before any file has changed.
pub(crate) struct Staged {
    place: Place,
    temp: std::ffi::OsString,
    /// The temp file's metadata: the new version, recognized by it once it is in place.
    ours: Metadata,
    /// The folders made for it.
    made: Made,
    size: u64,
    hash: u128,
}

/// A staged version moved into place ([`Staged::install`]).
pub(crate) struct Installed {
    /// What is on disk now.
    pub written: Written,
    /// The new file's metadata (an undo recognizes it by this).
    pub ours: Metadata,
    /// The folders made for it, which an undo of a creation removes.
    pub made: Made,
}

/// Writes `bytes` to a new temp file beside the place's file (private until it has its
/// final mode, with the owner and permissions `carry` gives) and flushes it. On failure
/// nothing is left: no temp file, no folder made for it.
pub(crate) fn stage(mut place: Place, bytes: &[u8], carry: Carry<'_>) -> Result<Staged> {
    let mut made = place.hold()?;
    let (temp, mut file) = loop {
        match place.dir.as_ref().expect("held").create_temp(&place.name, carry.permissions.is_some()) {
            Ok(created) => break created,
            // The folder was removed after it was opened (another write that made it for
            // itself failed and took it away again): make it anew.
            Err(e) if e.kind() == ErrorKind::NotFound && place.dir.is_some() && place.remade < 3 => {
                place.dir = None;
                place.remade += 1;
                made.absorb(place.hold()?);
            }
            Err(e) => {
                made.undo();
                return Err(e);
            }
        }
    };
    let written = (|| -> Result<Metadata> {
        if let Some(meta) = carry.owner {
            keep_owner(&file, meta);
        }
        file.write_all(bytes).map_err(Error::io)?;
        // After the bytes: a write by a process that is not root clears setuid and setgid.
        if let Some(permissions) = carry.permissions {
            file.set_permissions(permissions).map_err(Error::io)?;
        }
        file.sync_all().map_err(Error::io)?;
        file.metadata().map_err(Error::io)
    })();
    match written {
        Ok(ours) => Ok(Staged { place, temp, ours, made, size: bytes.len() as u64, hash: hash_bytes(bytes) }),
        Err(e) => {
            let _ = place.dir.as_ref().expect("held").remove(&temp);
            made.undo();
            Err(e)
        }
    }
}

impl Staged {
    /// Moves the staged version into place, over `replacing` (see [`replace_atomically`]),
    /// and, if `sync`, flushes the folder (a change of several files flushes each folder
    /// once, after the last rename in it: [`sync_folder`]). On failure the temp file and
    /// the folders made for it are removed and the file is as it was.
    pub(crate) fn install(self, replacing: Option<Replacing<'_>>, sync: bool) -> Result<Installed> {
        let Staged { place, temp, ours, made, size, hash } = self;
        let (dir, name) = (place.dir.as_ref().expect("held"), place.name.as_os_str());
        #[cfg(test)]
        if let Some(e) = tests::injected_install_failure() {
            let _ = dir.remove(&temp);
            made.undo();
            return Err(e);
        }
        let result = (|| -> Result<()> {
            match replacing {
                Some(replacing) if replacing.look => {
                    let turn = dir.lock()?;
                    swap_into_place(dir, &temp, name, &ours, replacing.before, replacing.read, turn.held())?;
                }
                Some(_) => dir.rename(&temp, name).map_err(Error::io)?,
                None => place_new(dir, &temp, name)?,
            }
            if sync {
                dir.sync();
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = dir.remove(&temp);
            made.undo();
            return Err(e);
        }
        let mtime_ms = dir.stat(name).map_err(Error::io)?.mtime_ms();
        let written = Written {
            real: place.folder.join(name),
            created: replacing.is_none(),
            size,
            mtime_ms,
            hash,
            total_lines: 0,
            encoding: TextEncoding::Utf8,
            previous: None,
        };
        Ok(Installed { written, ours, made })
    }

    /// Removes the staged version and the folders made for it.
    pub(crate) fn discard(self) {
        if let Some(dir) = self.place.dir.as_ref() {
            let _ = dir.remove(&self.temp);
        }
        self.made.undo();
    }
}

/// Removes the place's file if it is still the version read (`before`, with the bytes
/// `read`), in the folder's turn; otherwise [`ErrorKind::Stale`] and the file stays. The
/// folder is flushed after if `sync`.
pub(crate) fn remove_if_unchanged(place: &Place, before: &Metadata, read: &[u8], sync: bool) -> Result<()> {
    let Some(dir) = place.dir.as_ref() else {
        return Err(Error::new(ErrorKind::Stale, "was deleted while it was being changed"));
    };
    let _turn = dir.lock()?;
    if last_look(dir, &place.name, before, read)?.is_none() {
        return Err(Error::new(ErrorKind::Stale, "was modified while it was being changed"));
    }
    dir.remove(&place.name).map_err(Error::io)?;
    if sync {
        dir.sync();
    }
    Ok(())
}

/// Flushes a folder's entries to disk (best effort), so the renames in it survive a power cut.
pub(crate) fn sync_folder(folder: &Path) {
    if let Ok(dir) = Dir::open(folder) {
        dir.sync();
    }
}

/// Moves the finished temp file over `name` if `name` is still the file read (`before`,
/// with the bytes `read`); otherwise [`ErrorKind::Stale`], with `name` as it was. Called
/// in the folder's turn, so no other fsgate process changes the folder meanwhile.
///
/// The last look comes first, and nothing is at the name but the file read until it
/// passes. Where the system can, and the folder's turn is really held (`turn`), the new
/// file then goes in with one exchange of the two names, and the file swapped out must be
/// the one just looked at (same file, size and modification time): a program that does
/// not take the folder's turn and changed it in the instant since is seen, the swap
/// undone, and the change is STALE. Elsewhere the rename follows the last look. (Without
/// the turn, swaps of several writers could undo one another's, so there are none.)
fn swap_into_place(
    dir: &Dir,
    temp: &OsStr,
    name: &OsStr,
    ours: &Metadata,
    before: &Metadata,
    read: &[u8],
    turn: bool,
) -> Result<()> {
    let changed = || Error::new(ErrorKind::Stale, "was modified while it was being written");
    let Some(looked) = last_look(dir, name, before, read)? else { return Err(changed()) };
    #[cfg(test)]
    tests::pause_in_the_turn();
    let exchanged = if turn { dir.exchange(temp, name) } else { Ok(false) };
    match exchanged {
        Ok(true) => {
            // `temp` now names the file that was at `name` until the exchange.
            let out = dir.stat(temp).map_err(Error::io)?;
            if (out.dev, out.ino, out.size, out.mtime) == (looked.dev, looked.ino, looked.size, looked.mtime) {
                let _ = dir.remove(temp);
                return Ok(());
            }
            // Put it back, unless `name` has been replaced again since the exchange.
            if dir.stat(name).is_ok_and(|now| same_file(ours, &now)) {
                dir.exchange(temp, name).map_err(Error::io)?;
            }
            Err(changed())
        }
        Ok(false) => dir.rename(temp, name).map_err(Error::io),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(Error::new(ErrorKind::Stale, "was deleted while it was being written"))
        }
        Err(e) => Err(Error::io(e)),
    }
}

/// The last look at `name` in `dir`: what is there, if it is still the file read as `read`
/// (with metadata `before`). The same file and times settle it at once; if only the times
/// moved (a touch, a chmod), the bytes decide, so a touch is not a change.
fn last_look(dir: &Dir, name: &OsStr, before: &Metadata, read: &[u8]) -> Result<Option<Stat>> {
    let now = match dir.stat(name) {
        Ok(now) => now,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(e)),
    };
    if !now.is_file || !same_file(before, &now) || now.size != read.len() as u64 {
        return Ok(None);
    }
    if same_version(before, &now) {
        return Ok(Some(now));
    }
    // Compared a block at a time: no second copy of a large file is held.
    let mut file = dir.open_file(name)?;
    let mut block = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let n = std::io::Read::read(&mut file, &mut block).map_err(Error::io)?;
        if n == 0 {
            return Ok((at == read.len()).then_some(now));
        }
        if at + n > read.len() || block[..n] != read[at..at + n] {
            return Ok(None);
        }
        at += n;
    }
}

/// Moves a finished temp file to a name where no file may be: a hard link fails if one
/// appeared meanwhile, so nothing is ever replaced; where the file system has no hard
/// links, a rename that refuses to replace (Linux), else, in the folder's turn, a rename
/// after a last look.
fn place_new(dir: &Dir, temp: &OsStr, name: &OsStr) -> Result<()> {
    let taken = || Error::new(ErrorKind::Exists, "was created by someone else while it was being written");
    match dir.link(temp, name) {
        Ok(()) => {
            let _ = dir.remove(temp);
            return Ok(());
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(taken()),
        Err(_) => {}
    }
    match dir.rename_noreplace(temp, name) {
        Ok(true) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(taken()),
        Ok(false) | Err(_) => {}
    }
    let _turn = dir.lock()?;
    if dir.stat(name).is_ok() {
        return Err(taken());
    }
    dir.rename(temp, name).map_err(Error::io)
}

/// Whether two looks at a file saw the same version of it (same file, size and times).
#[cfg(unix)]
fn same_version(a: &Metadata, b: &Stat) -> bool {
    use std::os::unix::fs::MetadataExt;
    same_file(a, b)
        && a.len() == b.size
        && (a.mtime(), a.mtime_nsec()) == b.mtime
        && (a.ctime(), a.ctime_nsec()) == b.ctime
}

#[cfg(not(unix))]
fn same_version(a: &Metadata, b: &Stat) -> bool {
    let ms = a.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    a.len() == b.size && ms.map(|d| (d.as_secs() as i64, d.subsec_nanos() as i64)) == Some(b.mtime)
}

/// Whether two looks saw the same file (not a new one renamed into its place).
#[cfg(unix)]
fn same_file(a: &Metadata, b: &Stat) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev, b.ino)
}

#[cfg(not(unix))]
fn same_file(_a: &Metadata, _b: &Stat) -> bool {
    true
}

/// Gives the temp file the owner and group of the file it replaces, as far as this
/// process may: root keeps both (a root agent editing a user's file must not take it
/// over); anyone else keeps the group where they belong to it and becomes the owner, as
/// `sed -i` and safe-saving editors do.
#[cfg(unix)]
fn keep_owner(file: &File, meta: &Metadata) {
    use std::os::unix::fs::MetadataExt;
    let Ok(own) = file.metadata() else { return };
    if (own.uid(), own.gid()) == (meta.uid(), meta.gid()) {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let uid = root.then_some(meta.uid());
    let _ = std::os::unix::fs::fchown(file, uid, Some(meta.gid()));
}

#[cfg(not(unix))]
fn keep_owner(_file: &File, _meta: &Metadata) {}

/// A source's permissions with the owner's write bit added: a working copy is the
/// writer's to change again.
fn writable_by_owner(meta: &Metadata) -> std::fs::Permissions {
    let mut permissions = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        permissions.set_mode((permissions.mode() & 0o777) | 0o200);
    }
    #[cfg(not(unix))]
    permissions.set_readonly(false);
    permissions
}

#[cfg(unix)]
fn libc_enotdir() -> i32 {
    libc::ENOTDIR
}

#[cfg(not(unix))]
fn libc_enotdir() -> i32 {
    267
}

fn mtime_ms(meta: &Metadata) -> f64 {
    meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Makes the `n`th install of this thread from now fail (tests of changes that must be put back).
#[cfg(test)]
pub(crate) fn fail_install(n: u32) {
    tests::FAIL_INSTALL.with(|left| left.set(n));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tmp, wfile};

    fn roots(dir: &Path) -> Roots {
        Roots::new(&[dir]).unwrap()
    }

    /// Where a change of `p` (inside `dir`) lands.
    fn place(dir: &Path, p: &Path) -> Place {
        Place::of(&roots(dir).target(p, false).unwrap(), p).unwrap()
    }

    fn version(bytes: &[u8]) -> Expect {
        Expect::Version { size: bytes.len() as u64, hash: hash_bytes(bytes) }
    }

    fn temps(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".fsgate-tmp"))
            .collect()
    }

    #[test]
    fn creates_with_missing_folders_and_lf_endings() {
        let dir = tmp();
        let mut cfg = WriteConfig::default();
        cfg.expect(Expect::Absent);
        let w = write_file(&roots(&dir), &dir.join("a/b/c.txt"), Payload::Text("one\r\ntwo\rthree"), &cfg).unwrap();
        assert!(w.created);
        assert_eq!(std::fs::read(dir.join("a/b/c.txt")).unwrap(), b"one\ntwo\rthree");
        assert_eq!(w.total_lines, 2);
        assert_eq!(w.hash, hash_bytes(b"one\ntwo\rthree"));
        assert!(temps(&dir.join("a/b")).is_empty());
    }

    #[test]
    fn stale_when_content_changed_even_at_equal_size_and_nothing_written() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"aaaa");
        let mut cfg = WriteConfig::default();
        cfg.expect(version(b"bbbb"));
        let err = write_file(&roots(&dir), &p, Payload::Text("new"), &cfg).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&p).unwrap(), b"aaaa");
        assert!(temps(&dir).is_empty());
        cfg.expect(version(b"aaaa"));
        let w = write_file(&roots(&dir), &p, Payload::Text("new"), cfg.keep_previous(true)).unwrap();
        assert_eq!(w.previous.as_deref(), Some(&b"aaaa"[..]));
        assert!(!w.created);
    }

    #[test]
    fn absent_expectation_refuses_an_existing_file() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"x");
        let mut cfg = WriteConfig::default();
        cfg.expect(Expect::Absent);
        assert_eq!(write_file(&roots(&dir), &p, Payload::Text("y"), &cfg).unwrap_err().kind(), ErrorKind::Exists);
        cfg.expect(version(b"x"));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(write_file(&roots(&dir), &p, Payload::Text("y"), &cfg).unwrap_err().kind(), ErrorKind::Stale);
    }

    #[test]
    fn keeps_the_encoding_of_the_file_it_replaces() {
        let dir = tmp();
        let utf16: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("hi\n".encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
        let p = wfile(&dir, "u16.txt", &utf16);
        let w = write_file(&roots(&dir), &p, Payload::Text("안녕\r\n"), &WriteConfig::default()).unwrap();
        assert_eq!(w.encoding, TextEncoding::Utf16Le);
        assert_eq!(decode(&std::fs::read(&p).unwrap()).unwrap(), ("안녕\n".to_string(), TextEncoding::Utf16Le));
        let p = wfile(&dir, "bom.txt", b"\xEF\xBB\xBFold");
        write_file(&roots(&dir), &p, Payload::Text("new"), &WriteConfig::default()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"\xEF\xBB\xBFnew");
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_and_writes_through_a_symlink_inside() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let real = wfile(&dir, "run.sh", b"echo 1\n");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o751)).unwrap();
        std::os::unix::fs::symlink(&real, dir.join("link.sh")).unwrap();
        let w =
            write_file(&roots(&dir), &dir.join("link.sh"), Payload::Text("echo 2\n"), &WriteConfig::default()).unwrap();
        assert_eq!(w.real, std::fs::canonicalize(&real).unwrap());
        assert!(std::fs::symlink_metadata(dir.join("link.sh")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"echo 2\n");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777, 0o751);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_or_missing_path_leading_outside_is_refused_unless_allowed() {
        let dir = tmp();
        let outside = tmp();
        std::os::unix::fs::symlink(&outside, dir.join("out")).unwrap();
        let target = dir.join("out/new.txt");
        let err = write_file(&roots(&dir), &target, Payload::Text("x"), &WriteConfig::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutsideRoots);
        assert!(!outside.join("new.txt").exists());
        let mut cfg = WriteConfig::default();
        cfg.allow_outside(true);
        let w = write_file(&roots(&dir), &target, Payload::Text("x"), &cfg).unwrap();
        assert_eq!(w.real, std::fs::canonicalize(&outside).unwrap().join("new.txt"));
    }

    #[test]
    fn targets_report_directories_and_existing_files() {
        let dir = tmp();
        std::fs::create_dir(dir.join("sub")).unwrap();
        wfile(&dir, "f.txt", b"12345");
        let r = roots(&dir);
        assert_eq!(r.target(&dir.join("sub"), false).unwrap_err().kind(), ErrorKind::IsDirectory);
        let t = r.target(&dir.join("f.txt"), false).unwrap();
        assert!(t.exists && t.inside && t.size == 5);
        assert!(!r.target(&dir.join("nope/x.txt"), false).unwrap().exists);
        assert_eq!(r.target(&dir.join("f.txt/x"), false).unwrap_err().kind(), ErrorKind::InvalidPath);
    }

    #[test]
    fn decode_refuses_what_would_not_round_trip() {
        assert_eq!(decode(b"caf\xE9\n").unwrap_err().kind(), ErrorKind::Encoding);
        assert_eq!(decode(b"a\0b").unwrap_err().kind(), ErrorKind::Encoding);
        assert_eq!(decode(b"\xFF\xFEa").unwrap_err().kind(), ErrorKind::Encoding);
        assert_eq!(decode(b"\xFF\xFE\x00\xD8").unwrap_err().kind(), ErrorKind::Encoding);
        for (bytes, enc) in [
            (&b"plain \xED\x95\x9C\r\n"[..], TextEncoding::Utf8),
            (&b"\xEF\xBB\xBFbom"[..], TextEncoding::Utf8Bom),
            (&b"\xFE\xFF\x00h\x00i"[..], TextEncoding::Utf16Be),
        ] {
            let (text, got) = decode(bytes).unwrap();
            assert_eq!(got, enc);
            assert_eq!(encode(&text, got), bytes, "round trip of {enc:?}");
        }
    }

    #[test]
    fn a_dry_run_into_a_folder_that_cannot_be_written_is_refused_as_the_change_would_be() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let sub = dir.join("sub");
        std::fs::create_dir(&sub).unwrap();
        let p = wfile(&sub, "f.txt", b"alpha\n");
        // Root passes mode bits, so as root the folder is made immutable instead.
        let root = unsafe { libc::geteuid() } == 0;
        let locked = if root {
            std::process::Command::new("chattr").arg("+i").arg(&sub).status().is_ok_and(|s| s.success())
        } else {
            std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o555)).is_ok()
        };
        assert!(locked, "could not make {} unwritable (chattr needs ext4 or similar as root)", sub.display());
        let mut cfg = WriteConfig::default();
        cfg.dry_run(true);
        let dry = write_file(&roots(&dir), &p, Payload::Text("new\n"), &cfg);
        let edit = edit_file(
            &roots(&dir),
            &p,
            &p,
            &EditSpec { old: "alpha", new: "beta", replace_all: false, strip_trailing_whitespace: true },
            &cfg,
            &Cancel::new(),
        );
        let real = write_file(&roots(&dir), &p, Payload::Text("new\n"), &WriteConfig::default());
        if root {
            let _ = std::process::Command::new("chattr").arg("-i").arg(&sub).status();
        } else {
            let _ = std::fs::set_permissions(&sub, std::fs::Permissions::from_mode(0o755));
        }
        assert_eq!(real.unwrap_err().kind(), ErrorKind::PermissionDenied);
        assert_eq!(dry.unwrap_err().kind(), ErrorKind::PermissionDenied);
        assert_eq!(edit.unwrap_err().kind(), ErrorKind::PermissionDenied);
        assert_eq!(std::fs::read(&p).unwrap(), b"alpha\n");
    }

    #[test]
    fn a_dry_run_makes_every_check_and_writes_nothing() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"alpha\nalpha\n");
        let mut cfg = WriteConfig::default();
        cfg.expect(version(b"alpha\nalpha\n")).dry_run(true);
        // A write that would succeed reports the bytes it would write, and writes none.
        let w = write_file(&roots(&dir), &p, Payload::Text("new\n"), &cfg).unwrap();
        assert_eq!((w.size, w.hash, w.total_lines, w.created), (4, hash_bytes(b"new\n"), 1, false));
        let fresh = dir.join("sub/new.txt");
        assert!(
            write_file(&roots(&dir), &fresh, Payload::Text("x"), &WriteConfig::default().dry_run(true).clone())
                .unwrap()
                .created
        );
        assert!(!dir.join("sub").exists());
        // An edit: its match is decided, its failures reported, nothing written.
        let edit = |old: &str, cfg: &WriteConfig| {
            let spec = EditSpec { old, new: "beta", replace_all: false, strip_trailing_whitespace: true };
            edit_file(&roots(&dir), &p, &p, &spec, cfg, &Cancel::new())
        };
        assert!(matches!(edit("alpha", &cfg).unwrap(), EditOutcome::Failed(EditFailure::Ambiguous { count: 2, .. })));
        assert!(matches!(edit("gamma", &cfg).unwrap(), EditOutcome::Failed(EditFailure::NotFound { .. })));
        assert!(matches!(edit("alpha\nalpha", &cfg).unwrap(), EditOutcome::Done { .. }));
        // A stale version is refused as by the real change.
        cfg.expect(version(b"other"));
        assert_eq!(edit("alpha\nalpha", &cfg).unwrap_err().kind(), ErrorKind::Stale);
        assert_eq!(write_file(&roots(&dir), &p, Payload::Text("new\n"), &cfg).unwrap_err().kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&p).unwrap(), b"alpha\nalpha\n");
        assert!(temps(&dir).is_empty());
    }

    #[test]
    fn edit_writes_in_the_files_own_encoding_and_reports_the_first_line() {
        let dir = tmp();
        let original: Vec<u8> =
            [0xFE, 0xFF].into_iter().chain("a\r\nb\r\nc\r\n".encode_utf16().flat_map(|u| u.to_be_bytes())).collect();
        let p = wfile(&dir, "f.txt", &original);
        let spec = EditSpec { old: "b", new: "B", replace_all: false, strip_trailing_whitespace: true };
        let mut cfg = WriteConfig::default();
        cfg.expect(version(&original)).keep_previous(true);
        let out = edit_file(&roots(&dir), &p, &p, &spec, &cfg, &Cancel::new()).unwrap();
        let EditOutcome::Done { written, first_line, .. } = out else { panic!("edit failed") };
        assert_eq!(first_line, 2);
        assert_eq!(written.previous.as_deref(), Some(&original[..]));
        assert_eq!(decode(&std::fs::read(&p).unwrap()).unwrap(), ("a\r\nB\r\nc\r\n".into(), TextEncoding::Utf16Be));
    }

    #[test]
    fn edit_failures_and_encoding_errors_write_nothing() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"one\ntwo\n");
        let spec = EditSpec { old: "three", new: "3", replace_all: false, strip_trailing_whitespace: true };
        let out = edit_file(&roots(&dir), &p, &p, &spec, &WriteConfig::default(), &Cancel::new()).unwrap();
        assert!(matches!(out, EditOutcome::Failed(EditFailure::NotFound { .. })));
        let latin1 = wfile(&dir, "l.txt", b"caf\xE9 one\n");
        let spec = EditSpec { old: "one", new: "1", replace_all: false, strip_trailing_whitespace: true };
        let err =
            edit_file(&roots(&dir), &latin1, &latin1, &spec, &WriteConfig::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encoding);
        assert_eq!(std::fs::read(&latin1).unwrap(), b"caf\xE9 one\n");
        assert!(temps(&dir).is_empty());
    }

    #[test]
    fn an_edit_to_a_working_copy_leaves_the_source_alone() {
        let dir = tmp();
        let src = wfile(&dir, "report.md", b"draft\n");
        let copy = dir.join("report.edited.md");
        let spec = EditSpec { old: "draft", new: "final", replace_all: false, strip_trailing_whitespace: false };
        let out = edit_file(&roots(&dir), &src, &copy, &spec, &WriteConfig::default(), &Cancel::new()).unwrap();
        let EditOutcome::Done { written, .. } = out else { panic!("edit failed") };
        assert!(written.created);
        assert_eq!(std::fs::read(&src).unwrap(), b"draft\n");
        assert_eq!(std::fs::read(&copy).unwrap(), b"final\n");
        let again = edit_file(&roots(&dir), &src, &copy, &spec, &WriteConfig::default(), &Cancel::new());
        assert_eq!(again.unwrap_err().kind(), ErrorKind::Exists);
    }

    #[test]
    fn a_change_between_the_read_and_the_rename_is_stale_and_a_new_name_is_never_replaced() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"old");
        let seen = std::fs::metadata(&p).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, b"theirs").unwrap();
        let carry = Carry { permissions: Some(seen.permissions()), owner: Some(&seen) };
        let replacing = Replacing { before: &seen, read: b"old", look: true };
        let err = replace_atomically(place(&dir, &p), b"mine", carry, Some(replacing)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        let err = replace_atomically(place(&dir, &p), b"mine", Carry::default(), None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Exists);
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert!(temps(&dir).is_empty());
    }

    std::thread_local! {
        /// Installs of this thread left before one fails (0: none fails), for the tests
        /// of changes of several files that must be put back.
        pub(super) static FAIL_INSTALL: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }

    /// The failure injected into this install, if its turn has come.
    pub(super) fn injected_install_failure() -> Option<Error> {
        FAIL_INSTALL.with(|left| match left.get() {
            0 => None,
            1 => {
                left.set(0);
                Some(Error::new(ErrorKind::Io, "injected install failure"))
            }
            n => {
                left.set(n - 1);
                None
            }
        })
    }

    std::thread_local! {
        /// How long a change of this thread pauses in the folder's turn, between its last
        /// look and the rename (ms): widens the gap the turn and the exchange must close.
        static PAUSE_MS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    pub(super) fn pause_in_the_turn() {
        let ms = PAUSE_MS.with(|p| p.get());
        if ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }

    /// Many writers that read the same version race to replace it (as several processes
    /// do): exactly one wins, every other is STALE, and the file is the winner's, whole.
    #[test]
    fn writers_racing_from_one_version_never_both_win() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"v0\n");
        for round in 0..20 {
            let start = std::fs::read(&p).unwrap();
            let barrier = std::sync::Barrier::new(6);
            let results: Vec<(String, Result<Written>)> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..6)
                    .map(|i| {
                        let (p, dir, start, barrier) = (&p, &dir, &start, &barrier);
                        scope.spawn(move || {
                            PAUSE_MS.with(|ms| ms.set(3));
                            let text = format!("round {round} writer {i}\n");
                            let mut config = WriteConfig::default();
                            config.expect(version(start));
                            barrier.wait();
                            let result = write_file(&roots(dir), p, Payload::Text(&text), &config);
                            (text, result)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let won: Vec<&String> = results.iter().filter(|(_, r)| r.is_ok()).map(|(t, _)| t).collect();
            assert_eq!(won.len(), 1, "round {round}: {} writers won", won.len());
            for (_, r) in &results {
                if let Err(e) = r {
                    assert_eq!(e.kind(), ErrorKind::Stale, "round {round}: {e}");
                }
            }
            assert_eq!(std::fs::read_to_string(&p).unwrap(), *won[0]);
            assert!(temps(&dir).is_empty());
        }
    }

    /// A program that does not take the folder's turn changes the file in place between
    /// the last look and the exchange: the file swapped out is not the one looked at, so
    /// it is put back, and the write is STALE with the other program's bytes kept.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_change_after_the_last_look_is_seen_in_the_file_swapped_out_and_put_back() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"old\n");
        let seen = std::fs::metadata(&p).unwrap();
        let mut config = WriteConfig::default();
        config.expect(version(b"old\n"));
        PAUSE_MS.with(|ms| ms.set(200));
        let result = std::thread::scope(|scope| {
            let theirs = scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(80));
                std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"theirs\n").unwrap();
            });
            let result = write_file(&roots(&dir), &p, Payload::Text("mine\n"), &config);
            theirs.join().unwrap();
            result
        });
        PAUSE_MS.with(|ms| ms.set(0));
        assert_eq!(result.unwrap_err().kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&p).unwrap(), b"old\ntheirs\n");
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&p).unwrap()),
            std::os::unix::fs::MetadataExt::ino(&seen)
        );
        assert!(temps(&dir).is_empty());
    }

    /// A write that expects any version replaces whatever is there, even a file that keeps
    /// changing (a log); an edit, made from the bytes it read, still takes the last look.
    #[test]
    fn a_write_expecting_anything_replaces_a_file_that_changed_since_it_was_read() {
        let dir = tmp();
        let p = wfile(&dir, "app.log", b"line 1\n");
        let place = place(&dir, &p);
        let current = read_current(&place, &p, None, true).unwrap().unwrap();
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"line 2\n").unwrap();
        let replacing = Replacing { before: &current.1, read: &current.0, look: false };
        replace_atomically(place, b"fresh\n", Carry::default(), Some(replacing)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"fresh\n");
        let place = self::place(&dir, &p);
        let current = read_current(&place, &p, None, true).unwrap().unwrap();
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"line 3\n").unwrap();
        let replacing = Replacing { before: &current.1, read: &current.0, look: true };
        let err = replace_atomically(place, b"edited\n", Carry::default(), Some(replacing)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&p).unwrap(), b"fresh\nline 3\n");
    }

    #[test]
    fn a_failed_write_into_new_folders_leaves_no_folder() {
        let dir = tmp();
        let p = dir.join("fresh/sub").join("n".repeat(300));
        let err = write_file(&roots(&dir), &p, Payload::Text("x\n"), &WriteConfig::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPath, "{err}");
        assert!(!dir.join("fresh").exists());
        assert!(temps(&dir).is_empty());
    }

    #[test]
    fn a_touch_between_the_read_and_the_rename_is_not_a_change() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"same");
        let seen = std::fs::metadata(&p).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(later).unwrap();
        let held = Dir::open(&dir).unwrap();
        let name = OsStr::new("f.txt");
        assert!(last_look(&held, name, &seen, b"same").unwrap().is_some());
        let carry = Carry { permissions: Some(seen.permissions()), owner: Some(&seen) };
        let replacing = Replacing { before: &seen, read: b"same", look: true };
        replace_atomically(place(&dir, &p), b"mine", carry, Some(replacing)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"mine");
        std::fs::write(&p, b"MINE").unwrap();
        assert!(last_look(&held, name, &seen, b"mine").unwrap().is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_working_copy_of_a_read_only_file_is_writable_by_its_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let src = wfile(&dir, "ro.md", b"draft\n");
        std::fs::set_permissions(&src, std::fs::Permissions::from_mode(0o444)).unwrap();
        let copy = dir.join("ro.edited.md");
        let spec = EditSpec { old: "draft", new: "final", replace_all: false, strip_trailing_whitespace: false };
        let out = edit_file(&roots(&dir), &src, &copy, &spec, &WriteConfig::default(), &Cancel::new()).unwrap();
        assert!(matches!(out, EditOutcome::Done { .. }));
        assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o644);
        assert_eq!(std::fs::metadata(&src).unwrap().permissions().mode() & 0o777, 0o444);
    }

    #[cfg(unix)]
    #[test]
    fn setuid_and_setgid_bits_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let p = wfile(&dir, "tool", b"#!/bin/sh\n");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o6755)).unwrap();
        write_file(&roots(&dir), &p, Payload::Text("#!/bin/sh\necho\n"), &WriteConfig::default()).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777, 0o6755);
    }

    #[test]
    fn a_new_file_under_missing_folders_resolves_to_the_canonical_form_of_its_existing_part() {
        let dir = tmp();
        let t = roots(&dir).target(&dir.join("a/b/new.txt"), false).unwrap();
        assert_eq!(t.real, std::fs::canonicalize(&dir).unwrap().join("a/b/new.txt"));
        assert!(t.inside && !t.exists);
    }

    #[test]
    fn real_only_refuses_a_path_that_resolves_elsewhere_and_max_bytes_caps_the_file() {
        let dir = tmp();
        let p = wfile(&dir, "big.txt", b"0123456789");
        let mut cfg = WriteConfig::default();
        cfg.max_bytes(Some(9));
        assert_eq!(write_file(&roots(&dir), &p, Payload::Text("x"), &cfg).unwrap_err().kind(), ErrorKind::TooLarge);
        cfg.max_bytes(Some(10)).real_only(true);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&p, dir.join("alias.txt")).unwrap();
            let err = write_file(&roots(&dir), &dir.join("alias.txt"), Payload::Text("x"), &cfg).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Stale);
        }
        assert!(write_file(&roots(&dir), &std::fs::canonicalize(&p).unwrap(), Payload::Text("x"), &cfg).is_ok());
    }

    #[test]
    fn writing_replacement_characters_over_a_legacy_file_is_refused() {
        let dir = tmp();
        let p = wfile(&dir, "l.txt", b"caf\xE9\n");
        let err = write_file(&roots(&dir), &p, Payload::Text("caf\u{FFFD}!\n"), &WriteConfig::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Encoding);
        assert_eq!(std::fs::read(&p).unwrap(), b"caf\xE9\n");
        assert!(write_file(&roots(&dir), &p, Payload::Text("caf\u{E9}!\n"), &WriteConfig::default()).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn the_temp_file_is_private_until_it_has_the_final_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmp();
        let (temp, _file) = Dir::open(&dir).unwrap().create_temp(OsStr::new("secret.env"), true).unwrap();
        assert_eq!(std::fs::metadata(dir.join(temp)).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn remove_checks_the_version() {
        let dir = tmp();
        let p = wfile(&dir, "f.txt", b"mine");
        assert_eq!(remove_file(&roots(&dir), &p, version(b"other"), false).unwrap_err().kind(), ErrorKind::Stale);
        assert_eq!(remove_file(&roots(&dir), &p, version(b"mine"), false).unwrap(), b"mine");
        assert!(!p.exists());
    }
}
