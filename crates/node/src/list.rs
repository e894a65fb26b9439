//! The binding of directory listings. A page of entries crosses as a few parallel
//! columns (one string of NUL-separated paths, one of kind letters, arrays of numbers),
//! not as thousands of small JS objects.

use std::path::PathBuf;

use fsgate_core as core;
use napi_derive::napi;

use crate::search::WalkOptions;
use crate::{cancel_of, run_on_search_pool, AnyReply, CancelToken, Completer, Workspace};

/// Options of [`Workspace::list`].
#[napi(object)]
pub struct ListOptions {
    /// Absolute path of the folder (or file) to list.
    pub path: String,
    /// Which entries are listed (`globs` are `!` exclusions).
    pub walk: WalkOptions,
    /// Levels below the folder: 1 is its own entries; 0 the path alone. @default 1
    pub depth: Option<u32>,
    /// Entries skipped before the page. @default 0
    pub offset: Option<u32>,
    /// Most entries in the page. @default 1000
    pub limit: Option<u32>,
    /// Most entries looked at. @default 200000
    pub max_entries: Option<u32>,
    /// Folders before files among siblings. @default false
    pub dirs_first: Option<bool>,
}

/// The facts of one path.
#[napi(object)]
pub struct ListEntryInfo {
    /// "file", "dir", "symlink" or "other".
    pub kind: String,
    /// Size in bytes (0 for a folder).
    pub size: f64,
    /// Modification time, ms since the epoch.
    pub mtime_ms: f64,
    /// Last access, ms since the epoch (0 when unknown).
    pub atime_ms: f64,
    /// Creation time, ms since the epoch (0 when unknown).
    pub birthtime_ms: f64,
    /// Permission bits.
    pub mode: u32,
    /// Where a link points, as written in it.
    pub link_target: Option<String>,
}

/// A page of a listing.
#[napi(object)]
pub struct ListResult {
    /// The real path listed.
    pub real_path: String,
    /// The path itself.
    pub root: ListEntryInfo,
    /// The entries' paths relative to the folder, `/`-separated, joined by NUL.
    pub paths: String,
    /// One letter per entry: `f` file, `d` folder, `l` link, `o` other.
    pub kinds: String,
    /// Each entry's depth (1 for the folder's own entries).
    pub depths: Vec<u32>,
    /// Each entry's size in bytes.
    pub sizes: Vec<f64>,
    /// Each entry's modification time, ms since the epoch.
    pub mtimes: Vec<f64>,
    /// Each entry's link target ("" when it is not a link), joined by NUL.
    pub link_targets: String,
    /// Entries listed in all.
    pub total: u32,
    /// Folders among them.
    pub dirs: u32,
    /// Files (and links and others) among them.
    pub files: u32,
    /// Whether every entry was looked at.
    pub complete: bool,
    /// Folders that could not be read.
    pub errors: Vec<String>,
    /// Whether the entries came from the live index's snapshot (else from a walk).
    pub from_index: bool,
}

fn info(e: &core::Entry) -> ListEntryInfo {
    ListEntryInfo {
        kind: e.kind.name().into(),
        size: e.size as f64,
        mtime_ms: e.mtime_ms,
        atime_ms: e.atime_ms,
        birthtime_ms: e.birthtime_ms,
        mode: e.mode,
        link_target: e.link_target.clone(),
    }
}

impl From<core::Listing> for ListResult {
    fn from(l: core::Listing) -> ListResult {
        let letter = |k: core::EntryKind| match k {
            core::EntryKind::File => 'f',
            core::EntryKind::Dir => 'd',
            core::EntryKind::Symlink => 'l',
            core::EntryKind::Other => 'o',
        };
        ListResult {
            real_path: l.real_path.display().to_string(),
            root: info(&l.root),
            paths: l.entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>().join("\0"),
            kinds: l.entries.iter().map(|e| letter(e.kind)).collect(),
            depths: l.entries.iter().map(|e| e.depth as u32).collect(),
            sizes: l.entries.iter().map(|e| e.size as f64).collect(),
            mtimes: l.entries.iter().map(|e| e.mtime_ms).collect(),
            link_targets: l
                .entries
                .iter()
                .map(|e| e.link_target.as_deref().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\0"),
            total: l.total as u32,
            dirs: l.dirs as u32,
            files: l.files as u32,
            complete: l.complete,
            errors: l.errors,
            from_index: l.from_index,
        }
    }
}

#[napi]
impl Workspace {
    /// Lists a folder (or the facts of one path) on the search pool; the reply goes to
    /// `completer` as `id`.
    #[napi]
    pub fn list(&self, completer: &Completer, id: u32, options: ListOptions, cancel: Option<&CancelToken>) {
        let roots = self.roots.clone();
        let cancel = cancel_of(cancel);
        let mut config = core::ListConfig::default();
        *config.walk() = core::WalkConfig::from(&options.walk);
        config
            .depth(options.depth.unwrap_or(1) as usize)
            .offset(options.offset.unwrap_or(0) as usize)
            .limit(options.limit.unwrap_or(1000) as usize)
            .max_entries(options.max_entries.unwrap_or(200_000) as usize)
            .dirs_first(options.dirs_first.unwrap_or(false))
            .live(self.live.clone());
        let path = PathBuf::from(options.path);
        run_on_search_pool(completer, id, AnyReply::Listing, move || {
            core::list_directory(&roots, &path, &config, &cancel).map(ListResult::from)
        });
    }
}
