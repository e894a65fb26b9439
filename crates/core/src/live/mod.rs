//! The live index of a workspace: a snapshot of the files a search reads and the
//! trigrams of their text, built once in the background and kept fresh by file-system
//! events, so that a content search reads only the files that may match and a glob
//! lists the snapshot instead of walking.
//!
//! A query first syncs with the watcher (see [`watch`]), so it sees every change any
//! program made before it started. When the index cannot answer — not built yet, over
//! its memory budget, the watcher lost, a search the snapshot does not cover — the
//! caller walks the tree as it would without an index.

#[cfg(target_os = "linux")]
mod inotify;
pub(crate) mod plan;
mod postings;
#[cfg(test)]
mod tests;
mod tree;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use self::plan::Query;
pub(crate) use self::tree::Kind;
use self::tree::{Refused, Tree};
use self::watch::{Unsynced, Watch};
use crate::walk::{Filter, WalkConfig};

/// The default memory budget of an index.
pub const INDEX_BYTES: usize = 512 << 20;
/// Dead ids (files changed or removed since they were indexed) past which, when they
/// also outnumber the live ones, the index is built afresh.
const CHURN: usize = 100_000;
/// Files below which a search of a folder (not the workspace) walks it instead.
const FEW: usize = 64;
/// How long a query waits for the watcher to report its cookie.
const SYNC_TIMEOUT: Duration = Duration::from_secs(2);

/// What an index is doing, for the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Nothing built yet: the first search starts the build.
    Idle,
    /// Being built in the background; searches walk meanwhile.
    Building,
    /// Answering searches.
    Ready,
    /// Not answering, and why; searches walk. A later search tries to build it again,
    /// except when it was over its budget or closed.
    Off(String),
}

/// The state of an index and what it holds.
#[derive(Clone, Debug)]
pub struct IndexStatus {
    /// What it is doing.
    pub state: IndexState,
    /// Files in the snapshot.
    pub files: usize,
    /// Memory it holds, estimated from what it allocated.
    pub bytes: usize,
    /// Its memory budget.
    pub budget: usize,
    /// How long the last build took.
    pub build_ms: f64,
    /// File-system events its watcher has reported.
    pub events: u64,
}

/// The live index of one folder (the workspace), shared by every session of a toolkit.
pub struct LiveIndex {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    budget: usize,
    tree: RwLock<Option<Tree>>,
    state: Mutex<IndexState>,
    watch: Mutex<Option<Watch>>,
    /// Set when the toolkit closes (under the state's lock): a build stops, and none
    /// starts again.
    closed: AtomicBool,
    build_ms: Mutex<f64>,
    /// Files and bytes of the snapshot as of its last change, and the watcher's events:
    /// what `status` reports without waiting for a search that holds the snapshot.
    files: AtomicUsize,
    bytes: AtomicUsize,
    events: Arc<AtomicU64>,
    /// Ignore files outside the watched folder that its walk reads (those of the folders
    /// above it, git's global excludes), with what they were at the last look.
    outside: Mutex<Vec<(PathBuf, Option<Seen>)>>,
}

/// What identifies one version of a file outside the workspace: size, times, inode.
type Seen = (u64, i128, i128, u64);

/// What a search asks of the index: the files a walk with these settings yields, that
/// may hold a match of the query.
pub(crate) struct Want<'a> {
    pub(crate) walk: &'a WalkConfig,
    pub(crate) filter: &'a Filter,
    pub(crate) query: Query,
    /// The most bytes a match spans, when bounded (see [`plan::plan_and_span`]).
    pub(crate) longest: Option<usize>,
    /// Matches may span lines (files with a NUL are then read whole).
    pub(crate) multiline: bool,
}

/// What a query of the index found: the files to read, in path order.
pub(crate) struct Selection {
    pub(crate) files: Vec<Found>,
    /// Files of the search that hold a NUL byte and are not among them: binary files a
    /// walk would have read and skipped.
    pub(crate) binary_unread: usize,
}

/// A file of the snapshot, as it was at the query's sync.
pub(crate) struct Found {
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
    /// Nanoseconds since the epoch.
    pub(crate) mtime_ns: i128,
}

impl std::fmt::Debug for LiveIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveIndex").field("root", &self.inner.root).finish_non_exhaustive()
    }
}

impl LiveIndex {
    /// An index of `root` (a real folder) that holds at most `budget` bytes. Nothing
    /// happens until [`LiveIndex::start`] or the first search.
    pub fn new(root: &Path, budget: usize) -> LiveIndex {
        LiveIndex {
            inner: Arc::new(Inner {
                root: root.to_path_buf(),
                budget,
                tree: RwLock::new(None),
                state: Mutex::new(IndexState::Idle),
                watch: Mutex::new(None),
                closed: AtomicBool::new(false),
                build_ms: Mutex::new(0.0),
                files: AtomicUsize::new(0),
                bytes: AtomicUsize::new(0),
                events: Arc::new(AtomicU64::new(0)),
                outside: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Starts the build in the background, unless it is built, building, or off for good.
    pub fn start(&self) {
        let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        let again = match &*state {
            IndexState::Idle => true,
            IndexState::Off(why) => {
                !self.inner.closed.load(Ordering::Relaxed) && !FOR_GOOD.iter().any(|w| why.starts_with(w))
            }
            _ => false,
        };
        if !again {
            return;
        }
        *state = IndexState::Building;
        drop(state);
        let inner = self.inner.clone();
        let spawned = std::thread::Builder::new().name("fsgate-index".into()).spawn(move || inner.build());
        if let Err(e) = spawned {
            self.inner.set_state(IndexState::Off(format!("cannot start the build: {e}")));
        }
    }

    /// Stops the watcher and frees the index; later searches walk.
    pub fn close(&self) {
        {
            let mut state = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            self.inner.closed.store(true, Ordering::Relaxed);
            *state = IndexState::Off("closed".into());
        }
        self.inner.drop_all();
    }

    /// What the index is doing and holds. Never waits for a search.
    pub fn status(&self) -> IndexStatus {
        let inner = &self.inner;
        IndexStatus {
            state: inner.state.lock().unwrap_or_else(|e| e.into_inner()).clone(),
            files: inner.files.load(Ordering::Relaxed),
            bytes: inner.bytes.load(Ordering::Relaxed),
            budget: inner.budget,
            build_ms: *inner.build_ms.lock().unwrap_or_else(|e| e.into_inner()),
            events: inner.events.load(Ordering::Relaxed),
        }
    }

    /// Waits until a build started has ended (tests, benchmarks, and hosts that want the
    /// first search fast); `false` if it did not end within `timeout`.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if !matches!(*self.inner.state.lock().unwrap_or_else(|e| e.into_inner()), IndexState::Building) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// The files under `base` (a real folder) that a walk with these settings would
    /// yield and that may match `query`, fresh as of this call; `None` when the index
    /// cannot answer (the caller walks). Starts the build if none has started.
    pub(crate) fn select(&self, base: &Path, want: &Want) -> Option<Selection> {
        self.answer(base, want.walk, |tree| {
            let (files, binary_unread) = tree.select(base, want);
            Selection { files, binary_unread }
        })
    }

    /// The entries a listing of `base` (a real folder) to `depth` with these settings
    /// shows, fresh as of this call, in no order; `None` when the index cannot answer.
    pub(crate) fn list(
        &self,
        base: &Path,
        walk: &WalkConfig,
        filter: &Filter,
        depth: usize,
    ) -> Option<Vec<(PathBuf, Kind)>> {
        self.answer(base, walk, |tree| tree.list(base, walk, filter, depth))
    }

    /// What `ask` makes of the snapshot after a sync with the watcher, when the snapshot
    /// can answer for a walk of `base` with these settings.
    fn answer<R>(&self, base: &Path, walk: &WalkConfig, ask: impl FnOnce(&Tree) -> R) -> Option<R> {
        // Inside a hidden folder, what a walk with hidden files left out yields is not
        // what the snapshot marks as shown (that is as seen from the workspace).
        let hidden_base = !walk.includes_hidden() && tree::in_hidden(&self.inner.root, base);
        if !walk.fits_snapshot() || !base.starts_with(&self.inner.root) || hidden_base {
            return None;
        }
        if base != self.inner.root && self.holds_few(base) {
            return None;
        }
        if !self.inner.sync() {
            self.start();
            return None;
        }
        let tree = self.inner.tree.read().unwrap_or_else(|e| e.into_inner());
        tree.as_ref().filter(|t| t.covers(base)).map(ask)
    }

    /// Whether a folder of the workspace held fewer than [`FEW`] files at the last look:
    /// walking it costs less than the sync a query of the index starts with. (A look that
    /// would wait for a search holding the snapshot says no.)
    fn holds_few(&self, dir: &Path) -> bool {
        let Ok(tree) = self.inner.tree.try_read() else { return false };
        tree.as_ref().is_some_and(|t| t.count_under(dir, FEW) < FEW)
    }

    /// Stops the watcher without telling the index, as a crash of its thread would (tests).
    #[doc(hidden)]
    pub fn kill_watcher(&self) {
        if let Some(watch) = self.inner.watch.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            watch.kill();
        }
    }

    /// Reports an overflow of the watcher's queue, as the kernel would (tests).
    #[doc(hidden)]
    pub fn overflow_watcher(&self) {
        if let Some(watch) = self.inner.watch.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            watch.overflow();
        }
    }
}

/// How the reason of an index over its budget starts.
const OVER_BUDGET: &str = "over its memory budget";
/// How the reason of an index that cannot write its cookie starts.
const NO_COOKIE: &str = "cannot write";
/// How the reason of an index whose folder cannot be watched starts.
const NO_WATCH: &str = "cannot watch";
/// Reasons an index is off for good: no search builds it again.
const FOR_GOOD: [&str; 3] = [OVER_BUDGET, NO_COOKIE, NO_WATCH];

impl Inner {
    fn set_state(&self, state: IndexState) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    fn stopped(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    /// Builds the snapshot on this (background) thread, at the lowest priority, with the
    /// watcher started first so that nothing changed during the build is missed.
    fn build(&self) {
        lower_priority();
        let started = Instant::now();
        let watch = match Watch::start(&self.root, self.events.clone()) {
            Ok(watch) => watch,
            Err(why) => return self.set_state(IndexState::Off(format!("{NO_WATCH} the workspace: {why}"))),
        };
        {
            // Lock order: state, then watch, then tree.
            let _state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if self.stopped() {
                return;
            }
            *self.watch.lock().unwrap_or_else(|e| e.into_inner()) = Some(watch);
        }
        *self.outside.lock().unwrap_or_else(|e| e.into_inner()) = outside_rules(&self.root);
        let built = Tree::build(&self.root, self.budget, &|| self.stopped());
        *self.build_ms.lock().unwrap_or_else(|e| e.into_inner()) = started.elapsed().as_secs_f64() * 1000.0;
        match built {
            Ok(tree) => {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                if self.stopped() {
                    drop(tree);
                    give_back();
                    return;
                }
                self.publish(Some(&tree));
                *self.tree.write().unwrap_or_else(|e| e.into_inner()) = Some(tree);
                *state = IndexState::Ready;
            }
            Err(Refused::Stopped) => {}
            Err(why) => self.refuse(why),
        }
    }

    /// Whether an ignore file outside the workspace changed since the last look.
    fn outside_changed(&self) -> bool {
        let mut outside = self.outside.lock().unwrap_or_else(|e| e.into_inner());
        let mut changed = false;
        for (path, seen) in outside.iter_mut() {
            let now = seen_of(path);
            if now != *seen {
                (*seen, changed) = (now, true);
            }
        }
        changed
    }

    /// Records what the snapshot holds, for `status`.
    fn publish(&self, tree: Option<&Tree>) {
        self.files.store(tree.map_or(0, Tree::files), Ordering::Relaxed);
        self.bytes.store(tree.map_or(0, Tree::bytes), Ordering::Relaxed);
    }

    /// Stops the watcher and frees the snapshot (taking each lock on its own).
    fn drop_all(&self) {
        *self.watch.lock().unwrap_or_else(|e| e.into_inner()) = None;
        *self.tree.write().unwrap_or_else(|e| e.into_inner()) = None;
        self.publish(None);
        give_back();
    }

    fn refuse(&self, why: Refused) {
        self.drop_all();
        let why = match why {
            Refused::OverBudget { files, bytes } => format!(
                "{OVER_BUDGET} ({} MiB) at {files} files ({} MiB); raise limits.indexBytes",
                self.budget >> 20,
                bytes >> 20
            ),
            Refused::Stopped => "closed".into(),
            Refused::Walk(e) => format!("cannot walk the workspace: {e}"),
        };
        self.set_state(IndexState::Off(why));
    }

    /// Brings the snapshot up to date with every change made before this call; `false`
    /// when the index cannot answer (not ready, or the watcher lost, which drops it so
    /// that the next search builds it again).
    ///
    /// The watcher's lock is held from taking its changes until they are applied, so a
    /// search that syncs meanwhile waits for them rather than answering without them.
    fn sync(&self) -> bool {
        if !matches!(*self.state.lock().unwrap_or_else(|e| e.into_inner()), IndexState::Ready) {
            return false;
        }
        let watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        let Some(watcher) = watch.as_ref() else { return false };
        let mut changes = match watcher.sync(SYNC_TIMEOUT) {
            Ok(changes) => changes,
            Err(Unsynced::NoCookie(why) | Unsynced::Lost(why)) => {
                drop(watch);
                self.drop_all();
                self.set_state(IndexState::Off(why));
                return false;
            }
        };
        // No watcher sees the ignore files above the workspace: a change of one is
        // found by looking at them (a few stats) and redraws the whole snapshot.
        changes.rescan |= self.outside_changed();
        if !changes.rescan && changes.paths.is_empty() {
            return true;
        }
        let mut tree = self.tree.write().unwrap_or_else(|e| e.into_inner());
        let Some(snapshot) = tree.as_mut() else { return false };
        let paths: Vec<PathBuf> = changes.paths.into_iter().collect();
        let applied = if changes.rescan {
            snapshot.rescan(&self.root, &|| self.stopped())
        } else {
            snapshot.apply(&paths, &|| self.stopped())
        };
        // Dead ids outweigh live ones after much churn: build afresh (searches walk
        // meanwhile) rather than carry them.
        let churned = applied.is_ok() && snapshot.dead() > snapshot.files().max(CHURN);
        self.publish(Some(snapshot));
        drop(tree);
        drop(watch);
        match applied {
            Ok(()) if churned => {
                self.drop_all();
                self.set_state(IndexState::Off("rebuilding after many changes".into()));
                false
            }
            Ok(()) => true,
            Err(why) => {
                self.refuse(why);
                false
            }
        }
    }
}

/// The ignore files outside `root` that a walk of it reads, as they are now: those of
/// every folder above it, the repository's `info/exclude` when the repository's root is
/// above it, and git's global excludes at their default places (a `core.excludesFile`
/// set elsewhere is not looked at).
fn outside_rules(root: &Path) -> Vec<(PathBuf, Option<Seen>)> {
    let mut files = Vec::new();
    for dir in root.ancestors().skip(1) {
        files.extend([".gitignore", ".ignore", ".rgignore"].map(|name| dir.join(name)));
        files.push(dir.join(".git/info/exclude"));
    }
    if let Some(config) = std::env::var_os("XDG_CONFIG_HOME") {
        files.push(PathBuf::from(config).join("git/ignore"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        files.push(PathBuf::from(home).join(".config/git/ignore"));
    }
    files.into_iter().map(|path| (seen_of(&path), path)).map(|(seen, path)| (path, seen)).collect()
}

fn seen_of(path: &Path) -> Option<Seen> {
    let meta = std::fs::metadata(path).ok()?;
    let ns = |t: std::io::Result<std::time::SystemTime>| {
        t.ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as i128)
    };
    #[cfg(unix)]
    let (ino, ctime) = {
        use std::os::unix::fs::MetadataExt;
        (meta.ino(), i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let (ino, ctime) = (0, 0);
    Some((meta.len(), ns(meta.modified()), ctime, ino))
}

/// Returns the memory of a dropped index to the system. glibc keeps freed memory in its
/// arenas (the build thread fills one of its own), so without this a closed index would
/// keep most of its resident size.
fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory at the top of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Lowers the calling thread's priority to the least, so that a build never takes a
/// core from a search or a read.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on our own thread id changes only
    // this thread's nice value (Linux schedules threads separately).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 19);
    }
}
