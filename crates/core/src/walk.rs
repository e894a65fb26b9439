use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::types::{Types, TypesBuilder};
use ignore::{WalkBuilder, WalkState};

use crate::cancel::Cancel;
use crate::confine::found_still;
use crate::error::{Error, ErrorKind, Result};
use crate::Roots;

/// The folders of version control systems: never listed or searched, even with hidden
/// files included (ripgrep's `--hidden` would descend into `.git`).
pub(crate) const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", ".jj", ".sl"];

/// Which files a walk yields: the ignore rules, hidden files, and file filters, as
/// ripgrep applies them (with `--no-require-git`: ignore files count outside git
/// repositories too).
///
/// Symbolic links are never followed, so a walk never leaves the folder it starts in.
#[derive(Clone, Debug, Default)]
pub struct WalkConfig {
    include_hidden: bool,
    include_ignored: bool,
    globs: Vec<String>,
    file_type: Option<String>,
    ignore_files: Vec<String>,
}

impl WalkConfig {
    /// Also reads ignore files of these names in every folder, with `.gitignore`'s syntax
    /// and under the same switch (gemini-cli's `.geminiignore`). A name holding a `/`, or
    /// empty, is refused when the walk starts. By default, there are none (`.gitignore`,
    /// `.ignore` and `.rgignore` are always read).
    pub fn ignore_files<S: AsRef<str>>(&mut self, names: &[S]) -> &mut Self {
        self.ignore_files = names.iter().map(|n| n.as_ref().to_string()).collect();
        self
    }

    /// Includes hidden files and folders (names starting with a dot), except the
    /// folders of version control systems. By default, this is disabled.
    pub fn include_hidden(&mut self, yes: bool) -> &mut Self {
        self.include_hidden = yes;
        self
    }

    /// Includes files that `.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude`
    /// or the global git excludes would leave out. By default, this is disabled.
    pub fn include_ignored(&mut self, yes: bool) -> &mut Self {
        self.include_ignored = yes;
        self
    }

    /// Keeps only files whose path (relative to the folder searched) matches one of
    /// these globs; a glob starting with `!` leaves matching files out. A glob without
    /// a `/` matches the file name at any depth (`*.rs`); one with a `/` is anchored at
    /// the folder searched (`src/**/*.rs`). By default, there are none and every file
    /// is kept.
    pub fn globs<S: AsRef<str>>(&mut self, globs: &[S]) -> &mut Self {
        self.globs = globs.iter().map(|g| g.as_ref().to_string()).collect();
        self
    }

    /// Keeps only files of one of ripgrep's built-in file types (`rust`, `js`, `py`,
    /// …). By default, this is unset and every type is kept.
    pub fn file_type(&mut self, name: Option<&str>) -> &mut Self {
        self.file_type = name.map(str::to_string);
        self
    }

    /// Whether hidden files are included.
    pub(crate) fn includes_hidden(&self) -> bool {
        self.include_hidden
    }

    /// Whether a walk with these settings yields a part of what the live index's snapshot
    /// holds (ripgrep's ignore rules, and no ignore files of other names).
    pub(crate) fn fits_snapshot(&self) -> bool {
        !self.include_ignored && self.ignore_files.is_empty()
    }
}

/// What a walk starts from: a folder to walk, or one file named directly.
pub(crate) enum Start {
    Dir(PathBuf),
    File(PathBuf),
}

/// Resolves the folder or file to search inside the roots.
pub(crate) fn start(roots: &Roots, path: &Path) -> Result<Start> {
    crate::confine::check_malformed(path)?;
    let real = std::fs::canonicalize(path).map_err(|e| {
        let (Ok(target) | Err(target)) = crate::confine::follow_links(path);
        if roots.contains(&target) {
            Error::io(e).with_path(path)
        } else {
            crate::confine::outside(path, &target)
        }
    })?;
    if !roots.contains(&real) {
        return Err(crate::confine::outside(path, &real));
    }
    let meta = std::fs::metadata(&real).map_err(|e| Error::io(e).with_path(path))?;
    if meta.is_dir() {
        Ok(Start::Dir(real))
    } else if meta.is_file() {
        Ok(Start::File(real))
    } else {
        Err(crate::confine::blocked(path))
    }
}

/// The real path of a folder to search, inside the roots: for a search another program
/// runs (the caller hands it this path). A file, or a path outside the roots, is an error.
pub fn search_folder(roots: &Roots, path: &Path) -> Result<PathBuf> {
    match start(roots, path)? {
        Start::Dir(dir) => Ok(dir),
        Start::File(_) => Err(Error::new(ErrorKind::InvalidInput, "is a file, not a folder").with_path(path)),
    }
}

/// The compiled filters of a [`WalkConfig`].
pub(crate) struct Filter {
    keep: Option<GlobSet>,
    drop: Option<GlobSet>,
    /// `!` globs that leave out folders only: `!dist/`, and the folder of `!dist/**`.
    drop_dirs: Option<GlobSet>,
    types: Option<Types>,
}

impl Filter {
    pub fn new(config: &WalkConfig) -> Result<Filter> {
        if let Some(bad) =
            config.ignore_files.iter().find(|n| n.is_empty() || n.contains(['/', '\\']) || *n == "." || *n == "..")
        {
            return Err(Error::new(ErrorKind::InvalidInput, format!("ignore file name {bad:?} is not a file name")));
        }
        let (mut keep, mut drop, mut drop_dirs) = (Vec::new(), Vec::new(), Vec::new());
        for glob in config.globs.iter().map(|g| g.trim()).filter(|g| !g.is_empty()) {
            let Some(rest) = glob.strip_prefix('!') else {
                keep.push(glob);
                continue;
            };
            // As in ripgrep (gitignore syntax): `!dist/` leaves out folders named dist, not
            // files; `!dist/**` leaves out what dist holds, and so dist itself (anchored, as
            // it holds a `/`). A folder part that is empty, `**` or no glob is left as it was.
            let plain = rest.trim_start_matches("./");
            let compiles = |g: &str| glob_set(&[g]).is_ok();
            if let Some(folder) = plain.strip_suffix('/').map(|f| f.trim_end_matches('/')) {
                let last = folder.rsplit('/').next().unwrap_or(folder);
                if !folder.trim_start_matches("./").is_empty() && last != "**" && compiles(folder) {
                    drop_dirs.push(folder.to_string());
                    continue;
                }
            }
            if let Some(folder) =
                plain.strip_suffix("/**").filter(|f| !f.trim_start_matches("./").is_empty() && !f.ends_with('/'))
            {
                let anchored = if folder.starts_with('/') { folder.to_string() } else { format!("/{folder}") };
                if compiles(&anchored) {
                    drop_dirs.push(anchored);
                }
            }
            drop.push(rest);
        }
        let types = match &config.file_type {
            None => None,
            Some(name) => {
                let mut builder = TypesBuilder::new();
                builder.add_defaults().select(name);
                Some(builder.build().map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))?)
            }
        };
        // A glob that matches every path (`*`, `**`, `**/*`) keeps everything: no matching.
        let keep = if keep.iter().any(|g| matches!(g.trim_start_matches("./"), "*" | "**" | "**/*" | "/**" | "/**/*")) {
            None
        } else {
            glob_set(&keep)?
        };
        let drop_dirs: Vec<&str> = drop_dirs.iter().map(String::as_str).collect();
        Ok(Filter { keep, drop: glob_set(&drop)?, drop_dirs: glob_set(&drop_dirs)?, types })
    }

    /// Whether a file (by its path relative to the folder searched) passes the globs.
    pub fn keeps(&self, rel: &Path) -> bool {
        if self.keep.as_ref().is_some_and(|set| !set.is_match(rel)) {
            return false;
        }
        !self.drops(rel)
    }

    /// Whether an entry (a file, or a folder with all it holds) is excluded by a `!` glob,
    /// as ripgrep's `-g '!dist'` leaves out the whole folder.
    pub fn drops(&self, rel: &Path) -> bool {
        self.drop.as_ref().is_some_and(|set| set.is_match(rel))
    }

    /// The file types selected, if any.
    pub fn types(&self) -> Option<&Types> {
        self.types.as_ref()
    }

    /// Whether any `!` glob may leave out a folder.
    pub fn has_drops(&self) -> bool {
        self.drop.is_some() || self.drop_dirs.is_some()
    }

    /// Whether a folder, with all it holds, is left out by a `!` glob.
    pub fn drops_dir(&self, rel: &Path) -> bool {
        self.drops(rel) || self.drop_dirs.as_ref().is_some_and(|set| set.is_match(rel))
    }
}

/// Compiles globs with ripgrep's `--glob` semantics (see [`WalkConfig::globs`]).
fn glob_set(globs: &[&str]) -> Result<Option<GlobSet>> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let anchored = glob.trim_start_matches("./");
        let pattern = match anchored.strip_prefix('/') {
            Some(rooted) => rooted.to_string(),
            None if anchored.contains('/') => anchored.to_string(),
            None => format!("**/{anchored}"),
        };
        let compiled = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .backslash_escape(cfg!(unix))
            .build()
            .map_err(|e| Error::new(ErrorKind::InvalidGlob, format!("invalid glob {glob:?}: {}", e.kind())))?;
        set.add(compiled);
    }
    set.build().map(Some).map_err(|e| Error::new(ErrorKind::InvalidGlob, e.to_string()))
}

/// Walks `dir` on the calling thread, calling `visit` on every file that passes the
/// ignore rules and the filters; returning `false` stops the walk. Errors reading
/// folders are collected and returned (the walk goes on), except those about entries
/// that are no longer there, which are counted (see [`Moved`]).
///
/// Why one thread: a walk is a few `readdir` calls per folder, cheap next to reading the
/// files; callers that read them hand batches to the caller's rayon pool, so the work
/// shares the addon's threads instead of starting its own for every call (the `ignore`
/// crate's parallel walker starts threads per walk and polls for work every millisecond,
/// which dominates a search of a small folder). A search of a large tree walks it again
/// with [`walk_parallel`] once this walk has met more than a few hundred files.
pub(crate) fn walk<F>(dir: &Path, config: &WalkConfig, cancel: &Cancel, mut visit: F) -> Result<(Vec<String>, Moved)>
where
    F: FnMut(PathBuf) -> bool,
{
    let filter = Filter::new(config)?;
    let builder = builder(dir, config, &filter);
    let mut errors = Vec::new();
    let mut moved = Moved::default();
    let mut entries = builder.build();
    loop {
        cancel.check()?;
        // The walker can panic on a folder that changes into a link under it (its stack
        // of ignore rules loses step with the folders): that ends this walk, not the host.
        let Some(result) = unwound(|| entries.next())? else { break };
        let entry = match result {
            Ok(entry) => entry,
            Err(err) => {
                errors.extend(moved.shown(&err));
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        if !filter.keeps(rel) {
            continue;
        }
        if !visit(entry.into_path()) {
            break;
        }
    }
    cancel.check()?;
    Ok((errors, moved))
}

/// Walks `dir` with the `ignore` crate's parallel walker, on as many threads of its own as
/// the caller's rayon pool has, calling a visitor on every file that passes the rules and
/// the filters on the thread that found it; `make` makes one visitor per thread, and a
/// visitor returning `false` stops the walk. Errors and entries gone are as in [`walk`];
/// the errors are sorted, as the threads meet them in no particular order.
///
/// For a large tree, as `rg` does: the walk and the work on the files it finds share
/// every thread. A small folder is better walked by [`walk`]: starting the threads, and
/// their polling for work every millisecond when idle, costs more than it saves.
pub(crate) fn walk_parallel<M, F>(
    dir: &Path,
    config: &WalkConfig,
    cancel: &Cancel,
    make: M,
) -> Result<(Vec<String>, Moved)>
where
    M: Fn() -> F + Sync,
    F: FnMut(PathBuf) -> bool + Send,
{
    let filter = Filter::new(config)?;
    let out = Mutex::new((Vec::new(), Vec::new(), Moved::default()));
    let threads = rayon::current_num_threads().max(1);
    parallel(dir, config, &filter, threads, cancel, &out, || {
        let mut visit = make();
        move |path: PathBuf, _: &mut Vec<PathBuf>| visit(path)
    })?;
    cancel.check()?;
    let (_, mut errors, moved) = out.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    errors.sort();
    Ok((errors, moved))
}

/// The `ignore` crate's parallel walker over `dir` on `threads` threads: each file that
/// passes the rules and the filters goes to its thread's visitor (made by `make`) with
/// the thread's list of files to keep; a visitor returning `false` stops the walk. Each
/// thread's files, errors and entries gone are added to `out` when it ends.
fn parallel<M, F>(
    dir: &Path,
    config: &WalkConfig,
    filter: &Filter,
    threads: usize,
    cancel: &Cancel,
    out: &Mutex<Listed>,
    make: M,
) -> Result<()>
where
    M: Fn() -> F + Sync,
    F: FnMut(PathBuf, &mut Vec<PathBuf>) -> bool + Send,
{
    let walker = builder(dir, config, filter).threads(threads).build_parallel();
    unwound(|| {
        walker.run(|| {
            let mut own = Batch { files: Vec::new(), errors: Vec::new(), moved: Moved::default(), out };
            let mut visit = make();
            Box::new(move |result| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                match result {
                    Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
                        if filter.keeps(rel) && !visit(entry.into_path(), &mut own.files) {
                            return WalkState::Quit;
                        }
                    }
                    Ok(_) => {}
                    Err(err) => own.errors.extend(own.moved.shown(&err)),
                }
                WalkState::Continue
            })
        })
    })
}

/// Runs one step of the `ignore` walker, turning a panic into an error.
///
/// The walker panics (ignore 0.4.35, `Walk::next`: `self.ig.parent().unwrap()`) when
/// the folder it walks is a link at one look and gone at the next: walkdir descends
/// through the link, the walker's own look takes the root for a file, and its stack of
/// ignore rules ends one short. Nothing of the walk is shown then: the caller gets this
/// error, whose message the race test of `__test__/escape.test.ts` expects.
pub(crate) fn unwound<T>(step: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step))
        .map_err(|_| Error::new(ErrorKind::Io, "the folder was replaced while it was being searched; search again"))
}

/// The entries a walk met that are gone, or now reached through a link, when looked at
/// again: counted, never named.
///
/// A walk reads folders by path. A folder swapped for a link to another place while it
/// is read yields that place's names and errors; such a name is not there, inside, when
/// looked at again without following links ([`found_still`]). An error about such an
/// entry is left out, so no name from elsewhere reaches a result, and the count says
/// that something changed during the walk.
#[derive(Default)]
pub(crate) struct Moved {
    count: usize,
}

impl Moved {
    /// The message of a walk error, unless it is about an entry that is no longer there.
    pub fn shown(&mut self, err: &ignore::Error) -> Option<String> {
        match error_path(err) {
            Some(path) if self.gone(path) => None,
            _ => Some(err.to_string()),
        }
    }

    /// The message of an error about `path`, unless the entry is no longer there.
    pub fn shown_at(&mut self, path: &Path, err: &dyn std::fmt::Display) -> Option<String> {
        (!self.gone(path)).then(|| format!("{}: {err}", path.display()))
    }

    /// Whether the entry at `path` is not there now, inside (counted if so); one that is
    /// there but cannot be looked at (a path too long) is not gone, and its error is shown.
    fn gone(&mut self, path: &Path) -> bool {
        let gone = found_still(path).is_err_and(|e| matches!(e.kind(), ErrorKind::NotFound | ErrorKind::OutsideRoots));
        self.count += usize::from(gone);
        gone
    }

    /// Counts `n` more entries that moved or vanished.
    pub fn add(&mut self, n: usize) {
        self.count += n;
    }

    /// How many entries moved or vanished.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The note for the report, when anything moved.
    pub fn note(&self) -> Option<String> {
        (self.count > 0).then(|| {
            let n = self.count;
            format!(
                "{n} {} moved or vanished during the search and {} left out",
                plural(n),
                if n == 1 { "was" } else { "were" }
            )
        })
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        "entry"
    } else {
        "entries"
    }
}

/// The path an error of the walker is about, if it names one.
pub(crate) fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithLineNumber { err, .. } | ignore::Error::WithDepth { err, .. } => error_path(err),
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// The walker of ripgrep's rules for `dir`: see [`WalkConfig`].
pub(crate) fn builder(dir: &Path, config: &WalkConfig, filter: &Filter) -> WalkBuilder {
    let mut builder = WalkBuilder::new(dir);
    let respect = !config.include_ignored;
    builder
        .follow_links(false)
        .hidden(!config.include_hidden)
        .parents(respect)
        .ignore(respect)
        .git_ignore(respect)
        .git_global(respect)
        .git_exclude(respect)
        // Inside a repository, git's own rules: ignore files above its root do not apply.
        // Outside one, ignore files count all the same (ripgrep's --no-require-git).
        .require_git(in_repository(dir));
    // Types go to the walker, which checks them after the ignore rules and before the
    // hidden-file rule, as `rg -t` does (a hidden file of the type is searched).
    if let Some(types) = filter.types.clone() {
        builder.types(types);
    }
    let (drops, drop_dirs, root) = (filter.drop.clone(), filter.drop_dirs.clone(), dir.to_path_buf());
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 {
            return true;
        }
        if VCS_DIRS.iter().any(|vcs| entry.file_name() == *vcs) {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let rel = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        let dropped = |set: &Option<GlobSet>| set.as_ref().is_some_and(|set| set.is_match(rel));
        !(is_dir && (dropped(&drops) || dropped(&drop_dirs)))
    });
    if respect {
        builder.add_custom_ignore_filename(".rgignore");
        for name in &config.ignore_files {
            builder.add_custom_ignore_filename(name);
        }
    }
    builder
}

/// Lists every file under `dir` that passes the rules and filters, in no particular
/// order, in parallel: for listings, where the walk is all the work. The ignore crate's
/// parallel walker runs on as many threads of its own as the caller's rayon pool has. With ignore files switched off (and no file type), folders are read
/// directly, with none of the per-entry work of matching ignore rules.
pub(crate) fn list(dir: &Path, config: &WalkConfig, cancel: &Cancel) -> Result<Listed> {
    let filter = Filter::new(config)?;
    let out = Mutex::new((Vec::new(), Vec::new(), Moved::default()));
    if config.include_ignored && filter.types.is_none() {
        let lister = Lister { root: dir, hidden: config.include_hidden, filter: &filter, cancel, out: &out };
        rayon::scope(|scope| lister.read(scope, dir.to_path_buf()));
    } else {
        let threads = rayon::current_num_threads().clamp(1, 4);
        parallel(dir, config, &filter, threads, cancel, &out, || {
            |path: PathBuf, files: &mut Vec<PathBuf>| {
                files.push(path);
                true
            }
        })?;
    }
    cancel.check()?;
    Ok(out.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// Files found, error messages, and the entries that moved or vanished.
pub(crate) type Listed = (Vec<PathBuf>, Vec<String>, Moved);

/// What one walker thread found, added to the shared list when the thread is done.
struct Batch<'a> {
    files: Vec<PathBuf>,
    errors: Vec<String>,
    moved: Moved,
    out: &'a Mutex<Listed>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        let mut out = self.out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        out.0.append(&mut self.files);
        out.1.append(&mut self.errors);
        out.2.add(self.moved.count);
    }
}

/// The listing without ignore rules: each folder read by a task of the rayon pool.
struct Lister<'a> {
    root: &'a Path,
    hidden: bool,
    filter: &'a Filter,
    cancel: &'a Cancel,
    out: &'a Mutex<Listed>,
}

impl<'a> Lister<'a> {
    fn read<'s>(&'s self, scope: &rayon::Scope<'s>, dir: PathBuf)
    where
        'a: 's,
    {
        if self.cancel.is_cancelled() {
            return;
        }
        let mut moved = Moved::default();
        let report = |at: &Path, err: &std::io::Error, moved: &mut Moved| {
            let shown = moved.shown_at(at, err);
            let mut out = self.out.lock().unwrap();
            out.1.extend(shown);
            out.2.add(std::mem::take(&mut moved.count));
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) => return report(&dir, &err, &mut moved),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    report(&dir, &err, &mut moved);
                    continue;
                }
            };
            let name = entry.file_name();
            if (!self.hidden && name.as_encoded_bytes().first() == Some(&b'.')) || VCS_DIRS.iter().any(|v| name == *v) {
                continue;
            }
            let kind = match entry.file_type() {
                Ok(kind) => kind,
                Err(err) => {
                    report(&entry.path(), &err, &mut moved);
                    continue;
                }
            };
            let path = entry.path();
            let rel = path.strip_prefix(self.root).unwrap_or(&path);
            if kind.is_dir() {
                if !self.filter.drops_dir(rel) {
                    scope.spawn(move |scope| self.read(scope, path));
                }
            } else if kind.is_file() && self.filter.keeps(rel) {
                files.push(path);
            }
        }
        self.out.lock().unwrap().0.append(&mut files);
    }
}

/// Whether `dir` is inside a git repository (it or a folder above it has `.git`).
pub(crate) fn in_repository(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

/// A key that sorts paths component by component (as `rg --sort path` and
/// `Path::cmp` do: `a/b` before `a-c`) with one `memcmp`: separators become NUL, which
/// no file name contains.
pub(crate) fn sort_key(path: &Path) -> Vec<u8> {
    let mut key = path.as_os_str().as_encoded_bytes().to_vec();
    for b in &mut key {
        if *b == b'/' || (cfg!(windows) && *b == b'\\') {
            *b = 0;
        }
    }
    key
}

/// A file's modification time in nanoseconds since the epoch (0 when unknown).
pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as i128)
}

/// The real path of `path`, or `path` itself when it cannot be resolved.
pub(crate) fn real_or_self(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// How a path is shown: relative to `display_root` when inside it, else in full.
pub(crate) fn shown(display_root: &Path, real: &Path) -> String {
    match real.strip_prefix(display_root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => real.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tmp;

    /// An error about an entry that is gone is counted, not shown: its name may come from
    /// a folder that was a link to elsewhere while it was read.
    #[test]
    fn errors_about_entries_no_longer_there_are_counted_not_named() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::write(dir.join("here.txt"), "x").unwrap();
        let mut moved = Moved::default();
        let err = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(moved.shown_at(&dir.join("here.txt"), &err).is_some_and(|m| m.contains("here.txt")));
        assert_eq!(moved.shown_at(&dir.join("secret-name"), &err), None);
        let walk_err =
            ignore::Error::WithPath { path: dir.join("other-secret"), err: Box::new(ignore::Error::Io(err)) };
        assert_eq!(moved.shown(&walk_err), None);
        assert_eq!(moved.note().as_deref(), Some("2 entries moved or vanished during the search and were left out"));
        assert_eq!(Moved::default().note(), None);
    }

    /// The folder walked is swapped for a link to elsewhere and back, as fast as a thread
    /// can: every walk ends with names from inside or with the error of [`unwound`],
    /// never a panic (the walker's own panics at the root are caught).
    #[test]
    fn a_root_swapped_for_a_link_mid_walk_is_an_error_never_a_panic() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let base = std::fs::canonicalize(tmp()).unwrap();
        let (race, real, link) = (base.join("race"), base.join("race.real"), base.join("race.link"));
        std::fs::create_dir_all(race.join("a/b")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere/c/d")).unwrap();
        for i in 0..20 {
            std::fs::write(race.join(format!("a/b/inside-{i}")), "x").unwrap();
            std::fs::write(base.join(format!("elsewhere/c/d/outside-{i}")), "x").unwrap();
        }
        std::os::unix::fs::symlink(base.join("elsewhere"), &link).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swapper = {
            let (stop, race, real, link) = (stop.clone(), race.clone(), real.clone(), link.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::fs::rename(&race, &real).unwrap();
                    std::fs::rename(&link, &race).unwrap();
                    std::fs::rename(&race, &link).unwrap();
                    std::fs::rename(&real, &race).unwrap();
                }
            })
        };
        let started = std::time::Instant::now();
        let (mut walks, mut caught) = (0, 0);
        // Until the walker's panic has been caught a few times (it usually takes well under
        // a second), or 5 s.
        while caught < 3 && started.elapsed() < std::time::Duration::from_secs(5) {
            walks += 1;
            let mut names = Vec::new();
            match walk(&race, &WalkConfig::default(), &Cancel::default(), |file| {
                names.push(file);
                true
            }) {
                Ok(_) => {}
                Err(err) => {
                    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
                    assert!(err.message().contains("replaced while it was being searched"), "{err}");
                    caught += 1;
                }
            }
            // The walk reads by path: a name from elsewhere may be visited, and it is the
            // callers that look again (`found_still`); this test is about the panic.
            assert!(names.iter().all(|n| n.starts_with(&race)), "{names:?}");
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(walks > 0);
    }

    /// Files a walk keeps with `globs`, serial and parallel alike, sorted.
    fn walked(dir: &Path, globs: &[&str]) -> Vec<String> {
        let mut config = WalkConfig::default();
        config.globs(globs);
        let mut serial = Vec::new();
        walk(dir, &config, &Cancel::default(), |p| {
            serial.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            true
        })
        .unwrap();
        serial.sort();
        let parallel = Mutex::new(Vec::new());
        walk_parallel(dir, &config, &Cancel::default(), || {
            |p: PathBuf| {
                parallel.lock().unwrap().push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
                true
            }
        })
        .unwrap();
        let mut parallel = parallel.into_inner().unwrap();
        parallel.sort();
        assert_eq!(serial, parallel, "the parallel walk keeps other files");
        serial
    }

    #[test]
    fn negated_folder_globs_leave_the_folder_out() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        for f in ["dist/a.js", "dist/sub/b.js", "src/dist/c.js", "src/d.js", "e.js"] {
            std::fs::create_dir_all(dir.join(f).parent().unwrap()).unwrap();
            std::fs::write(dir.join(f), "x").unwrap();
        }
        // A file named like the folder is not a folder: `!dist/` keeps it.
        std::fs::write(dir.join("src/dist.js"), "x").unwrap();
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        std::fs::write(dir.join("lib/dist"), "x").unwrap();
        // `dist/` matches a folder named dist at any depth, as in ripgrep.
        assert_eq!(walked(&dir, &["!dist/"]), ["e.js", "lib/dist", "src/d.js", "src/dist.js"]);
        assert_eq!(walked(&dir, &["!dist//"]), ["e.js", "lib/dist", "src/d.js", "src/dist.js"]);
        // `dist/**` is anchored: only the top folder.
        assert_eq!(walked(&dir, &["!dist/**"]), ["e.js", "lib/dist", "src/d.js", "src/dist.js", "src/dist/c.js"]);
        assert_eq!(
            walked(&dir, &["!src/dist/"]),
            ["dist/a.js", "dist/sub/b.js", "e.js", "lib/dist", "src/d.js", "src/dist.js"]
        );
        let filter = Filter::new(WalkConfig::default().globs(&["!dist/**"])).unwrap();
        assert!(filter.drops_dir(Path::new("dist")) && !filter.drops(Path::new("dist")));
    }

    #[test]
    fn extra_ignore_files_are_read_like_gitignore() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        for f in ["a.txt", "secret.env", "sub/b.txt", "sub/c.log"] {
            std::fs::create_dir_all(dir.join(f).parent().unwrap()).unwrap();
            std::fs::write(dir.join(f), "x").unwrap();
        }
        std::fs::write(dir.join(".geminiignore"), "*.env\n").unwrap();
        std::fs::write(dir.join("sub/.geminiignore"), "*.log\n").unwrap();
        let files = |config: &WalkConfig| {
            let mut out = Vec::new();
            walk(&dir, config, &Cancel::default(), |p| {
                out.push(p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned());
                true
            })
            .unwrap();
            out.sort();
            out
        };
        assert_eq!(files(&WalkConfig::default()), ["a.txt", "secret.env", "sub/b.txt", "sub/c.log"]);
        assert_eq!(files(WalkConfig::default().ignore_files(&[".geminiignore"])), ["a.txt", "sub/b.txt"]);
        // Under the switch of every ignore file.
        let all = files(WalkConfig::default().ignore_files(&[".geminiignore"]).include_ignored(true));
        assert_eq!(all, ["a.txt", "secret.env", "sub/b.txt", "sub/c.log"]);
        for bad in ["", "../x", "a/b", ".."] {
            let Err(err) = walk(&dir, WalkConfig::default().ignore_files(&[bad]), &Cancel::default(), |_| true) else {
                panic!("{bad:?} was taken")
            };
            assert!(err.to_string().contains("is not a file name"), "{bad}: {err}");
        }
    }
}
