//! Directory listings: a folder's entries (or a tree of them, to a depth), with the
//! ignore and hidden-file rules of the searches, sorted, and paged; and the facts of one
//! path (what `stat` says), for a file-info tool.
//!
//! This is one plain function over the file system, [`list_directory`], so that a
//! caller holding a snapshot of the tree (a live index) can answer the same question
//! from it instead: the options and the result are all a listing is.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cancel::Cancel;
use crate::error::{Error, Result};
use crate::live::{Kind, LiveIndex};
use crate::walk::{self, Filter, Moved, Start, WalkConfig};
use crate::Roots;

/// How to list. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct ListConfig {
    walk: WalkConfig,
    depth: usize,
    offset: usize,
    limit: usize,
    max_entries: usize,
    dirs_first: bool,
    live: Option<Arc<LiveIndex>>,
}

impl Default for ListConfig {
    fn default() -> ListConfig {
        ListConfig {
            walk: WalkConfig::default(),
            depth: 1,
            offset: 0,
            limit: 1000,
            max_entries: 200_000,
            dirs_first: false,
            live: None,
        }
    }
}

impl ListConfig {
    /// Which entries are listed: hidden ones, ignored ones, and `!glob`s that leave
    /// entries out (a glob without `/` matches a name at any depth). By default, as the
    /// searches: no hidden entries, none that ignore files leave out.
    pub fn walk(&mut self) -> &mut WalkConfig {
        &mut self.walk
    }

    /// How deep to list: 1 is the folder's own entries, 2 adds theirs, and so on; 0
    /// lists nothing but the path itself. By default, this is 1.
    pub fn depth(&mut self, depth: usize) -> &mut Self {
        self.depth = depth;
        self
    }

    /// Entries skipped before the page. By default, this is 0.
    pub fn offset(&mut self, offset: usize) -> &mut Self {
        self.offset = offset;
        self
    }

    /// The most entries in the page. By default, this is 1000.
    pub fn limit(&mut self, limit: usize) -> &mut Self {
        self.limit = limit.max(1);
        self
    }

    /// The most entries looked at; past it the listing stops and says so. By default,
    /// this is 200,000.
    pub fn max_entries(&mut self, n: usize) -> &mut Self {
        self.max_entries = n.max(1);
        self
    }

    /// Folders before files among the entries of each folder (else by name only). By
    /// default, this is disabled.
    pub fn dirs_first(&mut self, yes: bool) -> &mut Self {
        self.dirs_first = yes;
        self
    }

    /// The workspace's live index: a listing [`DEEP`] levels deep or more is taken from
    /// its snapshot instead of a walk, when the index can answer. By default, none.
    pub fn live(&mut self, index: Option<Arc<LiveIndex>>) -> &mut Self {
        self.live = index;
        self
    }
}

/// The depth from which a listing is taken from the live index's snapshot: a shallower
/// one reads a few folders, which costs less than the sync with the index's watcher and
/// the look through the snapshot below the folder (BENCHMARKS.md §17).
pub const DEEP: usize = 3;

/// What an entry is (links are not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A device, FIFO or socket.
    Other,
}

impl EntryKind {
    /// "file", "dir", "symlink" or "other".
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }
}

/// One entry of a listing, or the path itself.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The path relative to the folder listed, with `/` separators ("" for the path itself).
    pub path: String,
    /// How deep below the folder listed (0 for the path itself).
    pub depth: usize,
    /// What it is.
    pub kind: EntryKind,
    /// Size in bytes (of the link itself for a link).
    pub size: u64,
    /// Modification time, ms since the epoch.
    pub mtime_ms: f64,
    /// Last access, ms since the epoch (0 when unknown).
    pub atime_ms: f64,
    /// Creation time, ms since the epoch (0 where the file system does not keep it).
    pub birthtime_ms: f64,
    /// Permission bits (`0o644`); 0 where there are none.
    pub mode: u32,
    /// Where a link points, as written in it.
    pub link_target: Option<String>,
}

/// A page of a listing.
#[derive(Debug)]
pub struct Listing {
    /// The real path listed.
    pub real_path: PathBuf,
    /// The path itself.
    pub root: Entry,
    /// The entries of the page, in order (a tree in pre-order: each folder before what it holds).
    pub entries: Vec<Entry>,
    /// Entries listed in all (a lower bound when `complete` is false).
    pub total: usize,
    /// Folders and files among them.
    pub dirs: usize,
    /// Files (and links and others) among them.
    pub files: usize,
    /// Whether every entry was looked at (false: `max_entries` was reached).
    pub complete: bool,
    /// Folders that could not be read.
    pub errors: Vec<String>,
    /// Whether the entries came from the live index's snapshot (else from a walk).
    pub from_index: bool,
}

/// Lists `path` (a folder, or one file) inside the roots. Entries that ignore files leave
/// out, hidden ones and the folders of version control are left out as the searches
/// leave them out, unless the configuration includes them; links are listed, never
/// followed.
pub fn list_directory(roots: &Roots, path: &Path, config: &ListConfig, cancel: &Cancel) -> Result<Listing> {
    let start = walk::start(roots, path)?;
    let real = match &start {
        Start::Dir(d) | Start::File(d) => d.clone(),
    };
    let meta = std::fs::metadata(&real).map_err(|e| Error::io(e).with_path(path))?;
    let mut root = entry_of(String::new(), 0, &meta);
    // The path as named: a link inside the roots is shown as the link it is.
    if let Ok(own) = std::fs::symlink_metadata(path) {
        if own.file_type().is_symlink() {
            root.link_target = std::fs::read_link(path).ok().map(|t| t.to_string_lossy().into_owned());
        }
    }
    let mut out = Listing {
        real_path: real.clone(),
        root,
        entries: Vec::new(),
        total: 0,
        dirs: 0,
        files: 0,
        complete: true,
        errors: Vec::new(),
        from_index: false,
    };
    let Start::Dir(dir) = start else {
        return Ok(out);
    };
    if config.depth == 0 {
        return Ok(out);
    }
    let filter = Filter::new(&config.walk)?;
    if let Some(found) = from_snapshot(&dir, config, &filter) {
        fill(&mut out, &dir, found, config);
        return Ok(out);
    }
    let mut builder = walk::builder(&dir, &config.walk, &filter);
    builder.max_depth(Some(config.depth));
    let mut moved = Moved::default();
    let mut found: Vec<(Vec<u8>, Entry)> = Vec::new();
    let mut walker = builder.build();
    loop {
        cancel.check()?;
        let Some(result) = walk::unwound(|| walker.next())? else { break };
        let entry = match result {
            Ok(entry) => entry,
            Err(err) => {
                out.errors.extend(moved.shown(&err));
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(&dir).unwrap_or(entry.path()).to_path_buf();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        // Folders a `!glob` leaves out are pruned by the walker; files are checked here.
        if !is_dir && filter.drops(&rel) {
            continue;
        }
        if found.len() == config.max_entries {
            out.complete = false;
            break;
        }
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(err) => {
                out.errors.extend(moved.shown(&err));
                continue;
            }
        };
        let shown = rel.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/");
        let mut e = entry_of(shown, entry.depth(), &meta);
        if e.kind == EntryKind::Symlink {
            e.link_target = std::fs::read_link(entry.path()).ok().map(|t| t.to_string_lossy().into_owned());
        }
        found.push((order_key(&rel, e.kind == EntryKind::Dir, config.dirs_first), e));
    }
    out.errors.extend(moved.note());
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    out.total = found.len();
    out.dirs = found.iter().filter(|(_, e)| e.kind == EntryKind::Dir).count();
    out.files = out.total - out.dirs;
    out.entries = found.into_iter().skip(config.offset).take(config.limit).map(|(_, e)| e).collect();
    Ok(out)
}

/// The entries of a listing from the live index's snapshot, with their sort keys; `None`
/// when there is no index, the listing is shallow, the index cannot answer, or the
/// listing would pass `max_entries` (the walk then says where it stopped).
fn from_snapshot(dir: &Path, config: &ListConfig, filter: &Filter) -> Option<Vec<(Vec<u8>, PathBuf, Kind)>> {
    let live = config.live.as_ref().filter(|_| config.depth >= DEEP)?;
    let listed = live.list(dir, &config.walk, filter, config.depth)?;
    if listed.len() > config.max_entries {
        return None;
    }
    let keyed = listed.into_iter().map(|(path, kind)| {
        let rel = path.strip_prefix(dir).unwrap_or(&path);
        (order_key(rel, kind == Kind::Dir, config.dirs_first), path, kind)
    });
    Some(keyed.collect())
}

/// The counts and the page of a listing from the snapshot: each entry of the page is
/// looked at (`lstat`), and one gone since the sync is left out and not counted.
fn fill(out: &mut Listing, dir: &Path, mut found: Vec<(Vec<u8>, PathBuf, Kind)>, config: &ListConfig) {
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let (mut total, mut dirs) = (found.len(), found.iter().filter(|f| f.2 == Kind::Dir).count());
    for (_, path, kind) in found.iter().skip(config.offset).take(config.limit) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            total -= 1;
            dirs -= usize::from(*kind == Kind::Dir);
            continue;
        };
        let rel = path.strip_prefix(dir).unwrap_or(path);
        let shown = rel.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/");
        let mut e = entry_of(shown, rel.components().count(), &meta);
        if e.kind == EntryKind::Symlink {
            e.link_target = std::fs::read_link(path).ok().map(|t| t.to_string_lossy().into_owned());
        }
        out.entries.push(e);
    }
    (out.total, out.dirs, out.files, out.from_index) = (total, dirs, total - dirs, true);
}

/// The key that puts a tree in pre-order, component by component (a folder right before
/// what it holds), with folders first among their siblings when asked.
fn order_key(rel: &Path, is_dir: bool, dirs_first: bool) -> Vec<u8> {
    if !dirs_first {
        return walk::sort_key(rel);
    }
    let parts: Vec<_> = rel.components().collect();
    let mut key = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        // Every component but the last is a folder.
        let folder = i + 1 < parts.len() || is_dir;
        key.push(if folder { 1 } else { 2 });
        key.extend_from_slice(part.as_os_str().as_encoded_bytes());
        key.push(0);
    }
    key
}

fn entry_of(path: String, depth: usize, meta: &std::fs::Metadata) -> Entry {
    let t = meta.file_type();
    let kind = if t.is_symlink() {
        EntryKind::Symlink
    } else if t.is_dir() {
        EntryKind::Dir
    } else if t.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    };
    let ms = |t: std::io::Result<SystemTime>| {
        t.ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    #[cfg(unix)]
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777;
    #[cfg(not(unix))]
    let mode = if meta.permissions().readonly() { 0o444 } else { 0o666 };
    Entry {
        path,
        depth,
        kind,
        size: if kind == EntryKind::Dir { 0 } else { meta.len() },
        mtime_ms: ms(meta.modified()),
        atime_ms: ms(meta.accessed()),
        birthtime_ms: ms(meta.created()),
        mode,
        link_target: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::testutil::tree;

    fn list(dir: &Path, setup: impl FnOnce(&mut ListConfig)) -> Listing {
        let roots = Roots::new(&[dir]).unwrap();
        let mut config = ListConfig::default();
        setup(&mut config);
        list_directory(&roots, dir, &config, &Cancel::new()).unwrap()
    }

    fn paths(l: &Listing) -> Vec<String> {
        l.entries
            .iter()
            .map(|e| if e.kind == EntryKind::Dir { format!("{}/", e.path) } else { e.path.clone() })
            .collect()
    }

    #[test]
    fn lists_one_level_sorted_with_the_search_rules() {
        let dir = tree(&[
            (".gitignore", "build/\n*.log\n"),
            ("b.txt", "bb"),
            ("a.txt", "a"),
            ("x.log", ""),
            ("build/out.o", ""),
            ("src/main.rs", ""),
            (".env", "SECRET"),
            (".git/config", ""),
        ]);
        let l = list(&dir, |_| {});
        assert_eq!(paths(&l), ["a.txt", "b.txt", "src/"]);
        assert_eq!((l.total, l.dirs, l.files, l.complete), (3, 1, 2, true));
        assert_eq!(l.entries[1].size, 2);
        let all = list(&dir, |c| {
            c.walk().include_hidden(true).include_ignored(true);
        });
        assert_eq!(
            paths(&all),
            [".env", ".gitignore", "a.txt", "b.txt", "build/", "src/", "x.log"],
            ".git is never listed"
        );
    }

    #[test]
    fn a_tree_is_in_pre_order_to_its_depth_and_pages() {
        let dir = tree(&[("a/b/c/d.txt", ""), ("a/b/e.txt", ""), ("a-z.txt", ""), ("z/y.txt", "")]);
        let l = list(&dir, |c| {
            c.depth(3);
        });
        assert_eq!(paths(&l), ["a/", "a/b/", "a/b/c/", "a/b/e.txt", "a-z.txt", "z/", "z/y.txt"]);
        assert_eq!(l.entries.iter().map(|e| e.depth).collect::<Vec<_>>(), [1, 2, 3, 3, 1, 1, 2]);
        let page = list(&dir, |c| {
            c.depth(3).offset(2).limit(2);
        });
        assert_eq!((paths(&page), page.total), (vec!["a/b/c/".to_string(), "a/b/e.txt".to_string()], 7));
        let first = list(&dir, |c| {
            c.depth(2).dirs_first(true);
        });
        assert_eq!(paths(&first), ["a/", "a/b/", "z/", "z/y.txt", "a-z.txt"]);
    }

    #[test]
    fn exclusion_globs_leave_out_names_and_folders() {
        let dir = tree(&[("keep.rs", ""), ("skip.tmp", ""), ("node/x.js", ""), ("sub/skip.tmp", "")]);
        let l = list(&dir, |c| {
            c.depth(2).walk().globs(&["!*.tmp", "!node"]);
        });
        assert_eq!(paths(&l), ["keep.rs", "sub/"]);
    }

    #[test]
    fn the_cap_stops_the_walk_visibly() {
        let dir = tree(&[("a", ""), ("b", ""), ("c", "")]);
        let l = list(&dir, |c| {
            c.max_entries(2);
        });
        assert!(!l.complete);
        assert_eq!(l.total, 2);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_shown_not_followed_and_escapes_are_refused() {
        let dir = tree(&[("in/f.txt", "x")]);
        let outside = tree(&[("secret/key", "k")]);
        std::os::unix::fs::symlink(outside.join("secret"), dir.join("out")).unwrap();
        let l = list(&dir, |c| {
            c.depth(5);
        });
        let link = l.entries.iter().find(|e| e.path == "out").unwrap();
        assert_eq!(link.kind, EntryKind::Symlink);
        assert_eq!(link.link_target.as_deref(), Some(outside.join("secret").to_str().unwrap()));
        assert!(l.entries.iter().all(|e| !e.path.contains("key")));
        let roots = Roots::new(&[&dir]).unwrap();
        let err = list_directory(&roots, &dir.join("out"), &ListConfig::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutsideRoots);
        let err = list_directory(&roots, &dir.join("../"), &ListConfig::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutsideRoots);
    }

    #[test]
    fn a_file_or_depth_zero_gives_the_path_itself() {
        let dir = tree(&[("f.txt", "hello")]);
        let roots = Roots::new(&[&dir]).unwrap();
        let l = list_directory(&roots, &dir.join("f.txt"), &ListConfig::default(), &Cancel::new()).unwrap();
        assert_eq!((l.root.kind, l.root.size, l.entries.len()), (EntryKind::File, 5, 0));
        assert!(l.root.mtime_ms > 0.0);
        let d = list(&dir, |c| {
            c.depth(0);
        });
        assert_eq!((d.root.kind, d.entries.len()), (EntryKind::Dir, 0));
    }
}
