//! The snapshot of a workspace: every file a search of it would read (ripgrep's rules,
//! hidden files included and marked by their path), with the identity each was indexed
//! at, and the trigrams of their text.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::Metadata;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use ignore::Match;

use super::plan::Query;
use super::postings::{Postings, Seen};
use super::{Found, Want};
use crate::confine::open_found;
use crate::error::ErrorKind;
use crate::walk::{self, Filter, WalkConfig};

/// The most text of one file that is indexed; a larger file is read by every search
/// that could match it (its text is not indexed).
pub(crate) const TEXT_MAX: u64 = 16 << 20;

/// Files larger than this are also indexed in chunks, so that a search whose matches
/// are short reads only the large files with a chunk that may hold one (a large file
/// holds most trigrams somewhere).
const CHUNKED_FROM: usize = 256 << 10;
/// The bytes each chunk starts after the one before it.
const CHUNK: usize = 64 << 10;
/// The bytes each chunk reaches into the next: a match of at most this many bytes lies
/// wholly inside one chunk.
pub(crate) const OVERLAP: usize = 4 << 10;

/// How recently a file may have changed for a rescan to trust its identity without
/// reading it again: two writes of the same size within one tick of the file system's
/// clock share an identity (git's "racily clean" rule).
const RACY: Duration = Duration::from_secs(2);

/// Ignore files whose change redraws which files a folder holds.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".rgignore"];

/// What identifies one version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    fn of(meta: &Metadata) -> Stamp {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128);
        Stamp { dev: 0, ino: 0, size: meta.len(), mtime_ns, ctime_ns: mtime_ns }
    }

    /// Whether the file changed so recently that the same stamp may hide another version.
    fn racy(&self, now: SystemTime) -> bool {
        let now_ns = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        now_ns - self.ctime_ns.max(self.mtime_ns) < RACY.as_nanos() as i128
    }
}

/// How much of a file's text the trigrams cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// All of it.
    Whole,
    /// The part before its first NUL byte: a search stops there, except in multiline mode.
    BeforeNul,
    /// None: too large, or UTF-16 (which the searcher decodes first); every search reads it.
    Unindexed,
}

struct Entry {
    path: PathBuf,
    stamp: Stamp,
    /// Whether the walk of the workspace with hidden files left out yields it: not hidden,
    /// or let in by an ignore file's `!` rule (`!.env.example`).
    shown: bool,
}

/// Why the index cannot hold a workspace.
#[derive(Debug)]
pub(crate) enum Refused {
    /// It would take more memory than the budget.
    OverBudget { files: usize, bytes: usize },
    /// The build was stopped (the toolkit closed).
    Stopped,
    /// The walk itself failed (the workspace is gone).
    Walk(String),
}

/// The snapshot and its content index.
pub(crate) struct Tree {
    root: PathBuf,
    /// Whether the workspace lies in a git repository (git's rule about ignore files above
    /// a repository's root then applies).
    in_repo: bool,
    budget: usize,
    /// By id; `None` for an id whose file changed or went (its trigrams stay behind).
    entries: Vec<Option<Entry>>,
    by_path: BTreeMap<PathBuf, u32>,
    /// The folders the walk entered (the root included): a change inside any other folder
    /// is one a search never sees.
    dirs: BTreeSet<PathBuf>,
    postings: Postings,
    /// The chunks of large files, by chunk id; and the file id of each chunk.
    chunks: Postings,
    chunk_owner: Vec<u32>,
    /// Ids of the files with chunks, in increasing order.
    chunked: Vec<u32>,
    /// Ids whose text is not indexed: read by every search.
    unindexed: Vec<u32>,
    /// Ids indexed only up to a NUL byte: read by every multiline search.
    before_nul: Vec<u32>,
    seen: Seen,
    /// Entries the walk yields that are neither files nor folders (links, FIFOs, sockets),
    /// for listings: with whether the walk with hidden files left out yields them.
    others: BTreeMap<PathBuf, bool>,
    /// Hidden folders (a folder with a hidden name on its way from the root) that the
    /// walk with hidden files left out enters all the same (let in by a `!` rule).
    shown_dirs: BTreeSet<PathBuf>,
    /// Paths the walk could not read (a folder without permission): a search of a folder
    /// that holds one, or lies in one, walks, so that it reports them as the walk does.
    unreadable: BTreeSet<PathBuf>,
    path_bytes: usize,
    live: usize,
}

/// The walk settings of the snapshot: ripgrep's rules with hidden files included.
fn snapshot_walk() -> WalkConfig {
    let mut config = WalkConfig::default();
    config.include_hidden(true);
    config
}

impl Tree {
    /// Walks and indexes `root` (a real folder); `stop` is checked between files.
    pub(crate) fn build(root: &Path, budget: usize, stop: &dyn Fn() -> bool) -> Result<Tree, Refused> {
        let mut tree = Tree {
            root: root.to_path_buf(),
            in_repo: walk::in_repository(root),
            budget,
            entries: Vec::new(),
            by_path: BTreeMap::new(),
            dirs: BTreeSet::new(),
            postings: Postings::default(),
            chunks: Postings::default(),
            chunk_owner: Vec::new(),
            chunked: Vec::new(),
            unindexed: Vec::new(),
            before_nul: Vec::new(),
            seen: Seen::new(),
            others: BTreeMap::new(),
            shown_dirs: BTreeSet::new(),
            unreadable: BTreeSet::new(),
            path_bytes: 0,
            live: 0,
        };
        tree.rescan(root, stop)?;
        Ok(tree)
    }

    /// Files in the snapshot.
    pub(crate) fn files(&self) -> usize {
        self.live
    }

    /// The memory the snapshot and its index hold (an estimate of what was allocated).
    pub(crate) fn bytes(&self) -> usize {
        const PER_ENTRY: usize = std::mem::size_of::<Option<Entry>>() + 48;
        self.postings.bytes()
            + self.chunks.bytes()
            + (self.chunk_owner.capacity() + self.chunked.capacity()) * 4
            + self.entries.capacity() * PER_ENTRY
            + self.path_bytes * 2
            + (self.dirs.len() + self.others.len() + self.shown_dirs.len()) * 96
            + (self.unindexed.capacity() + self.before_nul.capacity()) * 4
            + (1 << 21)
    }

    /// How many files the snapshot holds under `dir`, counting to `most` at the most.
    pub(crate) fn count_under(&self, dir: &Path, most: usize) -> usize {
        self.under(dir).take(most).count()
    }

    /// Ids that no longer name a file, and are still in the posting lists.
    pub(crate) fn dead(&self) -> usize {
        self.entries.len() - self.live
    }

    /// The ids a query admits (`None`: all), for the tests' timing.
    #[cfg(test)]
    pub(crate) fn eval(&self, query: &Query) -> Option<Vec<u32>> {
        self.postings.eval(query)
    }

    /// The ids a query admits (`None`: all), in increasing order. When a match spans at
    /// most [`OVERLAP`] bytes, a file with chunks is admitted only if one of its chunks
    /// is (the match lies inside one chunk).
    fn eval_within(&self, query: &Query, longest: Option<usize>) -> Option<Vec<u32>> {
        let ids = self.postings.eval(query)?;
        if longest.is_none_or(|n| n > OVERLAP) || self.chunked.is_empty() {
            return Some(ids);
        }
        let mut owners: Vec<u32> =
            self.chunks.eval(query).unwrap_or_default().iter().map(|&c| self.chunk_owner[c as usize]).collect();
        owners.dedup();
        let whole: Vec<u32> = ids.into_iter().filter(|id| self.chunked.binary_search(id).is_err()).collect();
        Some(super::postings::union(&whole, &owners))
    }

    /// Whether the snapshot covers a search starting at `dir` (a real folder): the walk
    /// entered it, and git's rule about ignore files above a repository is the same there.
    pub(crate) fn covers(&self, dir: &Path) -> bool {
        self.dirs.contains(dir)
            && walk::in_repository(dir) == self.in_repo
            && !self.unreadable.iter().any(|p| p.starts_with(dir) || dir.starts_with(p))
    }

    /// Makes the snapshot hold what `dir` (a real folder) holds now: files gone or now
    /// left out are dropped, new or changed files indexed (one whose stamp is unchanged and
    /// settled keeps its text).
    pub(crate) fn rescan(&mut self, dir: &Path, stop: &dyn Fn() -> bool) -> Result<(), Refused> {
        let config = snapshot_walk();
        let filter = Filter::new(&config).map_err(|e| Refused::Walk(e.to_string()))?;
        let mut found_files = Vec::new();
        let mut found_dirs = Vec::new();
        let mut found_others = Vec::new();
        let mut unreadable = Vec::new();
        for result in self.walker(dir, &config, &filter).build() {
            if stop() {
                return Err(Refused::Stopped);
            }
            let entry = match result {
                Ok(entry) => entry,
                Err(err) => {
                    unreadable.extend(walk::error_path(&err).map(Path::to_path_buf));
                    continue;
                }
            };
            match entry.file_type() {
                Some(t) if t.is_dir() => found_dirs.push(entry.into_path()),
                Some(t) if t.is_file() => found_files.push(entry.into_path()),
                Some(_) => found_others.push(entry.into_path()),
                None => {}
            }
        }
        self.unreadable.retain(|p| !p.starts_with(dir));
        if found_dirs.first().map(PathBuf::as_path) != Some(dir) {
            // The folder is gone, or is no longer a folder.
            self.forget(dir);
            return Ok(());
        }
        self.unreadable.extend(unreadable);
        let shown = self.shown_entries(dir, None);
        self.others.retain(|p, _| !inside_dir(p, dir));
        self.others.extend(found_others.into_iter().map(|p| {
            let is_shown = shown.contains(&p);
            (p, is_shown)
        }));
        self.shown_dirs.retain(|d| !inside_dir(d, dir));
        let hidden_shown = found_dirs.iter().skip(1).filter(|d| in_hidden(&self.root, d) && shown.contains(*d));
        self.shown_dirs.extend(hidden_shown.cloned().collect::<Vec<_>>());
        let kept: BTreeSet<&Path> = found_files.iter().map(PathBuf::as_path).collect();
        let gone: Vec<PathBuf> =
            self.under(dir).map(|(p, _)| p).filter(|p| !kept.contains(p.as_path())).cloned().collect();
        for path in gone {
            self.remove_file(&path);
        }
        let kept_dirs: BTreeSet<&Path> = found_dirs.iter().map(PathBuf::as_path).collect();
        let gone_dirs: Vec<PathBuf> = self
            .dirs
            .range(dir.to_path_buf()..)
            .take_while(|d| d.starts_with(dir))
            .filter(|d| !kept_dirs.contains(d.as_path()))
            .cloned()
            .collect();
        for d in gone_dirs {
            self.dirs.remove(&d);
        }
        self.dirs.extend(found_dirs.iter().cloned());
        let now = SystemTime::now();
        for path in found_files {
            if stop() {
                return Err(Refused::Stopped);
            }
            let is_shown = shown.contains(&path);
            let unchanged = self.entry_mut(&path).is_some_and(|e| {
                let same =
                    std::fs::symlink_metadata(&path).is_ok_and(|m| Stamp::of(&m) == e.stamp && !e.stamp.racy(now));
                if same {
                    e.shown = is_shown;
                }
                same
            });
            if !unchanged {
                self.index_file(&path, is_shown);
                self.check_budget()?;
            }
        }
        Ok(())
    }

    fn entry_mut(&mut self, path: &Path) -> Option<&mut Entry> {
        let id = *self.by_path.get(path)?;
        self.entries[id as usize].as_mut()
    }

    /// The walker of the snapshot's rules for a part of it: git's rule about ignore files
    /// above a repository is the workspace's, as when the whole workspace is walked (a
    /// repository nested in a workspace that is not one keeps the workspace's rules).
    fn walker(&self, dir: &Path, config: &WalkConfig, filter: &Filter) -> ignore::WalkBuilder {
        let mut builder = walk::builder(dir, config, filter);
        builder.require_git(self.in_repo);
        builder
    }

    /// The entries under `dir` (to `depth` below it; files, folders and the rest) that the
    /// walk of the workspace with hidden files left out yields. Inside a hidden folder, that walk is followed from the
    /// hidden folder's parent along the way to `dir`: it yields them only when a `!` rule
    /// lets every hidden folder on the way in.
    fn shown_entries(&self, dir: &Path, depth: Option<usize>) -> BTreeSet<PathBuf> {
        let config = WalkConfig::default();
        let Ok(filter) = Filter::new(&config) else { return BTreeSet::new() };
        let Some(from) = first_hidden(&self.root, dir).and_then(Path::parent) else {
            let mut builder = self.walker(dir, &config, &filter);
            builder.max_depth(depth);
            return entries_of(builder);
        };
        let mut builder = self.walker(from, &config, &filter);
        let (target, below) = (dir.to_path_buf(), depth);
        builder.filter_entry(move |entry| {
            let path = entry.path();
            if entry.depth() > 0 && walk::VCS_DIRS.iter().any(|vcs| entry.file_name() == *vcs) {
                return false;
            }
            match path.strip_prefix(&target) {
                Ok(rel) => below.is_none_or(|d| rel.components().count() <= d),
                Err(_) => target.starts_with(path),
            }
        });
        entries_of(builder).into_iter().filter(|p| p.starts_with(dir)).collect()
    }

    /// Brings the snapshot up to date with paths the watcher reported changed.
    pub(crate) fn apply(&mut self, changed: &[PathBuf], stop: &dyn Fn() -> bool) -> Result<(), Refused> {
        let mut relist: BTreeSet<PathBuf> = BTreeSet::new();
        let mut rescan: BTreeSet<PathBuf> = BTreeSet::new();
        for path in changed {
            let Some(parent) = path.parent() else { continue };
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == ".git" {
                // A repository made or removed here changes which ignore files apply.
                self.in_repo = walk::in_repository(&self.root);
                rescan.insert(self.root.clone());
            } else if path.ends_with(".git/info/exclude") {
                rescan.insert(parent.parent().and_then(Path::parent).unwrap_or(&self.root).to_path_buf());
            } else if IGNORE_FILES.contains(&name) && self.dirs.contains(parent) {
                rescan.insert(parent.to_path_buf());
            } else if self.dirs.contains(path.as_path()) {
                // A folder the snapshot holds was changed, moved, or swapped for another of
                // its name: what it holds is looked at again (unchanged files keep their text).
                rescan.insert(path.clone());
                relist.insert(parent.to_path_buf());
            } else if !self.dirs.contains(parent) {
                // Inside a folder the walk left out (or the workspace's own folder).
            } else if let Some(shown) = self.entry_mut(path).map(|e| e.shown).filter(|_| is_file(path)) {
                self.index_file(path, shown);
                self.check_budget()?;
            } else {
                relist.insert(parent.to_path_buf());
            }
        }
        // A folder rescanned in full needs no listing of its own or of what it holds.
        let rescan: Vec<PathBuf> = outermost(rescan);
        for dir in &rescan {
            self.rescan(dir, stop)?;
        }
        for dir in relist.iter().filter(|d| !rescan.iter().any(|r| d.starts_with(r))) {
            self.relist(dir, stop)?;
        }
        Ok(())
    }

    /// Looks at what one folder holds now (by the rules, one level deep): a new or
    /// swapped entry is taken in (a new folder with all it holds), one gone is dropped.
    fn relist(&mut self, dir: &Path, stop: &dyn Fn() -> bool) -> Result<(), Refused> {
        let config = snapshot_walk();
        let filter = Filter::new(&config).map_err(|e| Refused::Walk(e.to_string()))?;
        let mut files = BTreeSet::new();
        let mut folders = Vec::new();
        let mut others = Vec::new();
        let mut entered = false;
        let mut unreadable = Vec::new();
        for result in self.walker(dir, &config, &filter).max_depth(Some(1)).build() {
            let entry = match result {
                Ok(entry) => entry,
                Err(err) => {
                    unreadable.extend(walk::error_path(&err).map(Path::to_path_buf));
                    continue;
                }
            };
            if entry.depth() == 0 {
                entered = entry.file_type().is_some_and(|t| t.is_dir());
                continue;
            }
            match entry.file_type() {
                Some(t) if t.is_dir() => folders.push(entry.into_path()),
                Some(t) if t.is_file() => {
                    files.insert(entry.into_path());
                }
                Some(_) => others.push(entry.into_path()),
                None => {}
            }
        }
        self.unreadable.retain(|p| p != dir && p.parent() != Some(dir));
        if !entered {
            self.forget(dir);
            return Ok(());
        }
        self.unreadable.extend(unreadable);
        let shown = self.shown_entries(dir, Some(1));
        self.others.retain(|p, _| p.parent() != Some(dir));
        self.others.extend(others.into_iter().map(|p| {
            let is_shown = shown.contains(&p);
            (p, is_shown)
        }));
        self.shown_dirs.retain(|d| d.parent() != Some(dir));
        let hidden_shown = folders.iter().filter(|d| in_hidden(&self.root, d) && shown.contains(*d));
        self.shown_dirs.extend(hidden_shown.cloned().collect::<Vec<_>>());
        let held: Vec<PathBuf> = self
            .under(dir)
            .map(|(p, _)| p)
            .filter(|p| p.parent() == Some(dir) && !files.contains(*p))
            .cloned()
            .collect();
        for path in held {
            self.remove_file(&path);
        }
        let held_dirs: Vec<PathBuf> = self
            .dirs
            .range(dir.to_path_buf()..)
            .filter(|d| d.parent() == Some(dir))
            .take_while(|d| d.starts_with(dir))
            .filter(|d| !folders.contains(d))
            .cloned()
            .collect();
        for d in held_dirs {
            self.forget(&d);
        }
        for path in files {
            let is_shown = shown.contains(&path);
            let now = std::fs::symlink_metadata(&path).ok().map(|m| Stamp::of(&m));
            let known = self.entry_mut(&path).map(|e| {
                e.shown = is_shown;
                e.stamp
            });
            if known.is_none() || known != now {
                self.index_file(&path, is_shown);
                self.check_budget()?;
            }
        }
        for folder in folders {
            if !self.dirs.contains(&folder) {
                self.rescan(&folder, stop)?;
            }
        }
        Ok(())
    }

    /// Drops a folder and everything under it.
    fn forget(&mut self, dir: &Path) {
        let files: Vec<PathBuf> = self.under(dir).map(|(p, _)| p.clone()).collect();
        for path in files {
            self.remove_file(&path);
        }
        let dirs: Vec<PathBuf> =
            self.dirs.range(dir.to_path_buf()..).take_while(|d| d.starts_with(dir)).cloned().collect();
        for d in dirs {
            self.dirs.remove(&d);
        }
        self.others.retain(|p, _| !inside_dir(p, dir));
        self.shown_dirs.retain(|d| !d.starts_with(dir));
    }

    /// The snapshot's files under a folder, in path order.
    /// (Not a file at `dir` itself: a folder replaced by a file of its name is gone as a
    /// folder, and the file is not part of it.)
    fn under<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = (&'a PathBuf, u32)> + 'a {
        use std::ops::Bound;
        let bytes = dir.as_os_str().as_encoded_bytes();
        self.by_path
            .range::<Path, _>((Bound::Excluded(dir), Bound::Unbounded))
            .take_while(move |(p, _)| inside(p, bytes).is_some())
            .map(|(p, &id)| (p, id))
    }

    fn remove_file(&mut self, path: &Path) {
        if let Some(id) = self.by_path.remove(path) {
            if self.entries[id as usize].take().is_some() {
                self.live -= 1;
                self.path_bytes -= path.as_os_str().len();
            }
        }
    }

    /// Reads a file and indexes its text under a new id (the old one, if any, dies).
    /// A file that cannot be opened as a regular file without a link is dropped.
    fn index_file(&mut self, path: &Path, shown: bool) {
        self.remove_file(path);
        let file = match open_found(path) {
            Ok(file) => file,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::OutsideRoots) => return,
            // There, but not to be read (no permission): listed, and read by every search,
            // which reports it as the walk does.
            Err(_) => {
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    let id = self.push_entry(path, Stamp::of(&meta), shown);
                    self.unindexed.push(id);
                }
                return;
            }
        };
        let Ok(meta) = file.metadata() else { return };
        let stamp = Stamp::of(&meta);
        let mut text = Vec::new();
        // A file larger than the cap is still indexed when a NUL byte ends its text first
        // (a large binary: a search stops at the NUL).
        let read = file.take(TEXT_MAX + 1).read_to_end(&mut text);
        let utf16 = text.starts_with(&[0xFF, 0xFE]) || text.starts_with(&[0xFE, 0xFF]);
        let kind = if read.is_err() || utf16 {
            Text::Unindexed
        } else if let Some(nul) = memchr::memchr(0, &text) {
            text.truncate(nul);
            Text::BeforeNul
        } else if text.len() as u64 > TEXT_MAX {
            Text::Unindexed
        } else {
            Text::Whole
        };
        let id = self.entries.len() as u32;
        if kind == Text::Unindexed {
            self.unindexed.push(id);
        } else {
            self.postings.add(id, &text, &mut self.seen);
            if text.len() > CHUNKED_FROM {
                for start in (0..text.len()).step_by(CHUNK) {
                    let end = text.len().min(start + CHUNK + OVERLAP);
                    self.chunks.add(self.chunk_owner.len() as u32, &text[start..end], &mut self.seen);
                    self.chunk_owner.push(id);
                }
                self.chunked.push(id);
            }
        }
        if kind == Text::BeforeNul {
            self.before_nul.push(id);
        }
        self.push_entry(path, stamp, shown);
    }

    /// Adds a file under the next id and returns it.
    fn push_entry(&mut self, path: &Path, stamp: Stamp, shown: bool) -> u32 {
        let id = self.entries.len() as u32;
        self.entries.push(Some(Entry { path: path.to_path_buf(), stamp, shown }));
        self.by_path.insert(path.to_path_buf(), id);
        self.path_bytes += path.as_os_str().len();
        self.live += 1;
        id
    }

    fn check_budget(&self) -> Result<(), Refused> {
        let bytes = self.bytes();
        if bytes > self.budget {
            return Err(Refused::OverBudget { files: self.live, bytes });
        }
        Ok(())
    }

    /// The files a search of `base` (a folder the snapshot covers) with these walk
    /// settings would read and that may match `query`, in path order, with the
    /// modification time of each (for a listing by time); and how many files of the
    /// search hold a NUL byte and are not among them (a walk reads and counts those as
    /// binary files skipped; the search counts them all the same).
    pub(crate) fn select(&self, base: &Path, want: &Want) -> (Vec<Found>, usize) {
        let Want { walk, filter, query, longest, multiline } = want;
        let (longest, multiline) = (*longest, *multiline);
        let base_bytes = base.as_os_str().as_encoded_bytes();
        let keep = |entry: &Entry| -> bool {
            let Some(rel) = inside(&entry.path, base_bytes) else { return false };
            visible(rel, &entry.path, walk.includes_hidden() || entry.shown, filter)
        };
        let out =
            |entry: &Entry| Found { path: entry.path.clone(), size: entry.stamp.size, mtime_ns: entry.stamp.mtime_ns };
        let Some(ids) = self.eval_within(query, longest) else {
            let files = self.under(base).filter_map(|(_, id)| self.entries[id as usize].as_ref()).filter(|e| keep(e));
            return (files.map(out).collect(), 0);
        };
        // Text before a NUL answers for a line search; a multiline search reads such a
        // file whole.
        let whole: &[u32] = if multiline { &self.before_nul } else { &[] };
        let live = |id: &u32| self.entries[*id as usize].as_ref();
        let mut picked: Vec<&Entry> =
            ids.iter().chain(self.unindexed.iter()).chain(whole.iter()).filter_map(live).filter(|e| keep(e)).collect();
        picked.sort_unstable_by(|a, b| path_order(&a.path, &b.path));
        picked.dedup_by(|a, b| std::ptr::eq(*a, *b));
        let binary_unread = if multiline {
            0
        } else {
            self.before_nul
                .iter()
                .filter(|id| ids.binary_search(id).is_err())
                .filter_map(live)
                .filter(|e| keep(e))
                .count()
        };
        (picked.into_iter().map(out).collect(), binary_unread)
    }

    /// The entries a listing of `base` (a folder the snapshot covers) to `depth` with
    /// these walk settings shows, in no order: files, folders, and the rest (links, FIFOs,
    /// sockets), as the walk yields them.
    pub(crate) fn list(&self, base: &Path, walk: &WalkConfig, filter: &Filter, depth: usize) -> Vec<(PathBuf, Kind)> {
        use std::ops::Bound;
        let base_bytes = base.as_os_str().as_encoded_bytes();
        let hidden = walk.includes_hidden();
        let deep_enough = |rel: &[u8]| rel.iter().filter(|c| **c == SEP).count() < depth;
        let mut out = Vec::new();
        let mut take = |path: &PathBuf, kind: Kind, shown: bool| {
            let Some(rel) = inside(path, base_bytes).filter(|rel| deep_enough(rel)) else { return };
            let seen = match kind {
                Kind::Dir => visible_dir(rel, hidden || shown, filter),
                _ => visible(rel, path, hidden || shown, filter),
            };
            if seen {
                out.push((path.clone(), kind));
            }
        };
        for (path, id) in self.under(base) {
            if let Some(entry) = &self.entries[id as usize] {
                take(path, Kind::File, entry.shown);
            }
        }
        for (path, shown) in self
            .others
            .range::<Path, _>((Bound::Included(base), Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(base))
        {
            take(path, Kind::Other, *shown);
        }
        for dir in
            self.dirs.range::<Path, _>((Bound::Included(base), Bound::Unbounded)).take_while(|d| d.starts_with(base))
        {
            take(dir, Kind::Dir, self.shown_dirs.contains(dir));
        }
        out
    }
}

/// What an entry of a listing is, as far as the snapshot knows (a listing looks at each
/// entry of its page again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    /// A link, FIFO or socket.
    Other,
}

const SEP: u8 = std::path::MAIN_SEPARATOR as u8;

/// The part of `path` below the folder `base` (its bytes), if `path` lies strictly inside
/// it: byte comparisons, as both are real paths (no `.`, `..` or doubled separators).
fn inside<'a>(path: &'a Path, base: &[u8]) -> Option<&'a [u8]> {
    let rest = path.as_os_str().as_encoded_bytes().strip_prefix(base)?;
    let rest = if base.ends_with(&[SEP]) { rest } else { rest.strip_prefix(&[SEP])? };
    (!rest.is_empty()).then_some(rest)
}

/// Path order, component by component (as `Path::cmp` and `rg --sort path`), by bytes.
fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let key = |c: &u8| if *c == SEP { 0 } else { *c };
    a.as_os_str().as_encoded_bytes().iter().map(key).cmp(b.as_os_str().as_encoded_bytes().iter().map(key))
}

/// A path of bytes cut from a real path at separators.
fn as_path(bytes: &[u8]) -> &Path {
    // SAFETY: the bytes come from `as_encoded_bytes` of a path, cut only next to ASCII
    // separators, which keeps them valid for `from_encoded_bytes_unchecked`.
    Path::new(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(bytes) })
}

/// Whether a file of the snapshot (by its path relative to the folder searched) is one
/// the walk of that folder yields: hidden files as ripgrep's rules have them (a hidden
/// file of a selected type is searched; one in a hidden folder is not), the globs, the
/// `!` globs of the folders on its way, the type.
fn visible(rel: &[u8], path: &Path, include_hidden: bool, filter: &Filter) -> bool {
    let (folders, file) = match rel.iter().rposition(|c| *c == SEP) {
        Some(at) => (&rel[..at], &rel[at + 1..]),
        None => (&rel[..0], rel),
    };
    let hidden_folder = || folders.first() == Some(&b'.') || folders.windows(2).any(|w| w == [SEP, b'.']);
    if !include_hidden && hidden_folder() {
        return false;
    }
    let typed = filter.types().map(|types| types.matched(path, false));
    if typed.as_ref().is_some_and(Match::is_ignore) {
        return false;
    }
    if !include_hidden && file.first() == Some(&b'.') && !typed.as_ref().is_some_and(Match::is_whitelist) {
        return false;
    }
    if filter.has_drops() {
        for (at, _) in folders.iter().enumerate().filter(|(_, c)| **c == SEP) {
            if filter.drops_dir(as_path(&folders[..at])) {
                return false;
            }
        }
        if !folders.is_empty() && filter.drops_dir(as_path(folders)) {
            return false;
        }
    }
    filter.keeps(as_path(rel))
}

/// Whether a folder of the snapshot (by its path relative to the folder listed) is one
/// the walk of that folder enters: no hidden folder on its way (or itself hidden) unless
/// hidden files are in, and no `!` glob leaving out it or a folder on its way.
fn visible_dir(rel: &[u8], include_hidden: bool, filter: &Filter) -> bool {
    let hidden = rel.first() == Some(&b'.') || rel.windows(2).any(|w| w == [SEP, b'.']);
    if !include_hidden && hidden {
        return false;
    }
    if filter.has_drops() {
        for (at, _) in rel.iter().enumerate().filter(|(_, c)| **c == SEP) {
            if filter.drops_dir(as_path(&rel[..at])) {
                return false;
            }
        }
        if filter.drops_dir(as_path(rel)) {
            return false;
        }
    }
    true
}

fn entries_of(builder: ignore::WalkBuilder) -> BTreeSet<PathBuf> {
    builder.build().filter_map(|r| r.ok()).filter(|e| e.depth() > 0).map(|e| e.into_path()).collect()
}

/// The first hidden folder on the way from `root` to `path` (`path` itself included).
fn first_hidden<'a>(root: &Path, path: &'a Path) -> Option<&'a Path> {
    let rel = path.strip_prefix(root).ok()?;
    let mut at = path;
    let mut found = None;
    for c in rel.components().rev() {
        if matches!(c, Component::Normal(n) if n.as_encoded_bytes().first() == Some(&b'.')) {
            found = Some(at);
        }
        at = at.parent()?;
    }
    found
}

/// Whether `path` lies strictly inside the folder `dir`.
fn inside_dir(path: &Path, dir: &Path) -> bool {
    path != dir && path.starts_with(dir)
}

/// Whether `path` lies in a hidden folder (or is one) below `root`.
pub(crate) fn in_hidden(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.components().any(|c| matches!(c, Component::Normal(n) if n.as_encoded_bytes().first() == Some(&b'.')))
    })
}

fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// The folders of a set that are not inside another of them.
fn outermost(dirs: BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !out.iter().any(|o| dir.starts_with(o)) {
            out.push(dir);
        }
    }
    out
}
