use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::types::{Types, TypesBuilder};
use ignore::{DirEntry, WalkBuilder, WalkState};

use crate::cancel::Cancel;
use crate::error::{Error, ErrorKind, Result};
use crate::Roots;

/// The folders of version control systems: never listed or searched, even with hidden
/// files included (ripgrep's `--hidden` would descend into `.git`).
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", ".jj", ".sl"];

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
    threads: usize,
}

impl WalkConfig {
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

    /// Threads that walk the tree. By default, this is 0: one per core.
    pub fn threads(&mut self, n: usize) -> &mut Self {
        self.threads = n;
        self
    }
}

/// A file a walk found.
pub(crate) struct Found {
    /// The path as walked (under the real path of the folder searched).
    pub path: PathBuf,
    /// The directory entry, for metadata.
    pub entry: DirEntry,
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
    types: Option<Types>,
}

impl Filter {
    pub fn new(config: &WalkConfig) -> Result<Filter> {
        let (mut keep, mut drop) = (Vec::new(), Vec::new());
        for glob in config.globs.iter().map(|g| g.trim()).filter(|g| !g.is_empty()) {
            match glob.strip_prefix('!') {
                Some(rest) => drop.push(rest),
                None => keep.push(glob),
            }
        }
        let types = match &config.file_type {
            None => None,
            Some(name) => {
                let mut builder = TypesBuilder::new();
                builder.add_defaults().select(name);
                let types = builder.build().map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))?;
                if !builder.definitions().iter().any(|d| d.name() == name) {
                    return Err(Error::new(ErrorKind::InvalidInput, format!("unrecognized file type: {name}")));
                }
                Some(types)
            }
        };
        Ok(Filter { keep: glob_set(&keep)?, drop: glob_set(&drop)?, types })
    }

    /// Whether a file (by its path relative to the folder searched) passes the filters.
    pub fn keeps(&self, rel: &Path) -> bool {
        if self.keep.as_ref().is_some_and(|set| !set.is_match(rel)) {
            return false;
        }
        if self.drop.as_ref().is_some_and(|set| set.is_match(rel)) {
            return false;
        }
        if let Some(types) = &self.types {
            return types.matched(rel, false).is_whitelist();
        }
        true
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
            .map_err(|e| Error::new(ErrorKind::InvalidPattern, format!("invalid glob {glob:?}: {}", e.kind())))?;
        set.add(compiled);
    }
    set.build().map(Some).map_err(|e| Error::new(ErrorKind::InvalidPattern, e.to_string()))
}

/// Walks `dir` in parallel. Each walker thread calls `make` once for its own visitor
/// (so a visitor may own state that is not `Sync`, such as a searcher), then the
/// visitor on every file that passes the ignore rules and the filters; returning
/// `false` stops the walk. Errors reading folders are collected and returned (the walk
/// goes on).
pub(crate) fn walk<'s, M>(dir: &Path, config: &WalkConfig, cancel: &Cancel, make: M) -> Result<Vec<String>>
where
    M: Fn() -> Box<dyn FnMut(Found) -> bool + Send + 's> + Sync,
{
    let filter = Filter::new(config)?;
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
        .require_git(false)
        .threads(config.threads)
        .filter_entry(|entry| {
            !(entry.depth() > 0
                && entry.file_type().is_some_and(|t| t.is_dir())
                && VCS_DIRS.iter().any(|vcs| entry.file_name() == *vcs))
        });
    if respect {
        builder.add_custom_ignore_filename(".rgignore");
    }
    let errors = Mutex::new(Vec::new());
    let (make, filter, errors_ref) = (&make, &filter, &errors);
    builder.build_parallel().run(|| {
        let mut visit = make();
        Box::new(move |result| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match result {
                Ok(entry) => entry,
                Err(err) => {
                    errors_ref.lock().unwrap().push(err.to_string());
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path()).to_path_buf();
            if !filter.keeps(&rel) {
                return WalkState::Continue;
            }
            let found = Found { path: entry.path().to_path_buf(), entry };
            if visit(found) {
                WalkState::Continue
            } else {
                WalkState::Quit
            }
        })
    });
    cancel.check()?;
    Ok(errors.into_inner().unwrap())
}

/// How a path is shown: relative to `display_root` when inside it, else in full.
pub(crate) fn shown(display_root: &Path, real: &Path) -> String {
    match real.strip_prefix(display_root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => real.to_string_lossy().into_owned(),
    }
}
