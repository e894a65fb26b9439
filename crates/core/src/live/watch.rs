//! What changed in the workspace since the last query: file-system events (inotify on
//! Linux; elsewhere the `notify` crate: FSEvents, ReadDirectoryChangesW), collected as paths, and a cookie
//! that a query writes and waits for, as watchman does: once the watcher reports the
//! cookie, it has reported every change made before the query started.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Names of cookie files start with this.
const COOKIE: &str = ".fsgate-cookie-";
/// Paths held for the next query before they are given up for a rescan of everything.
const MAX_PENDING: usize = 50_000;

/// What the watcher reported since the last [`Watch::sync`].
#[derive(Debug, Default)]
pub(crate) struct Changes {
    pub(crate) paths: BTreeSet<PathBuf>,
    /// Events were lost (the kernel's queue overflowed, or too many piled up): everything
    /// must be looked at again.
    pub(crate) rescan: bool,
}

#[derive(Default)]
struct Pending {
    changes: Changes,
    cookies: BTreeSet<PathBuf>,
    /// The watcher cannot cover the workspace (the watch limit): its reports are not whole.
    broken: Option<String>,
    /// Nothing more is taken: the watcher was killed (tests).
    deaf: bool,
}

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    arrived: Condvar,
    /// Events reported since the watcher started (the host's status reads it).
    events: Arc<AtomicU64>,
}

/// Why a query could not sync with the watcher.
#[derive(Debug)]
pub(crate) enum Unsynced {
    /// The cookie could not be written (a read-only workspace).
    NoCookie(String),
    /// The watcher did not report the cookie in time, or reported that it cannot cover
    /// the workspace.
    Lost(String),
}

/// A watcher of one folder and everything under it.
pub(crate) struct Watch {
    watcher: Option<Backend>,
    shared: Arc<Shared>,
    /// Where cookies are written: the repository's `.git` folder when there is one (it
    /// is never searched), else the workspace.
    cookie_dir: PathBuf,
    next: AtomicU64,
}

/// What a watcher reports.
#[derive(Debug)]
pub(crate) enum Report {
    /// Something at this path changed (`created`: it was created).
    Path { path: PathBuf, created: bool },
    /// Events were lost: everything must be looked at again.
    Rescan,
    /// The watcher cannot cover the workspace any more.
    Broken(String),
}

/// The watcher itself: inotify on Linux, the `notify` crate elsewhere.
enum Backend {
    #[cfg(target_os = "linux")]
    Inotify(#[allow(dead_code)] super::inotify::Inotify),
    #[cfg(not(target_os = "linux"))]
    Notify(#[allow(dead_code)] notify::RecommendedWatcher),
}

impl Watch {
    /// Starts watching `root` (a real folder) and all it holds.
    pub(crate) fn start(root: &Path, events: Arc<AtomicU64>) -> Result<Watch, String> {
        let shared = Arc::new(Shared { events, ..Shared::default() });
        let deliver = {
            let shared = shared.clone();
            move |report: Report| note(&shared, report)
        };
        #[cfg(target_os = "linux")]
        let backend = Backend::Inotify(super::inotify::Inotify::start(root, deliver)?);
        #[cfg(not(target_os = "linux"))]
        let backend = Backend::Notify(notify_backend(root, deliver)?);
        let git = root.join(".git");
        let cookie_dir =
            if std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) { git } else { root.to_path_buf() };
        Ok(Watch { watcher: Some(backend), shared, cookie_dir, next: AtomicU64::new(0) })
    }

    /// Waits until the watcher has reported every change made before this call, and
    /// takes what it reported.
    pub(crate) fn sync(&self, timeout: Duration) -> Result<Changes, Unsynced> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let cookie = self.cookie_dir.join(format!("{COOKIE}{}-{n}", std::process::id()));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&cookie)
            .map_err(|e| Unsynced::NoCookie(format!("cannot write a cookie in {}: {e}", self.cookie_dir.display())))?;
        let _ = std::fs::remove_file(&cookie);
        let deadline = Instant::now() + timeout;
        let mut pending = self.shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(why) = &pending.broken {
                return Err(Unsynced::Lost(why.clone()));
            }
            if pending.cookies.remove(&cookie) {
                return Ok(std::mem::take(&mut pending.changes));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Unsynced::Lost(format!("the watcher did not answer within {} ms", timeout.as_millis())));
            }
            pending = self.shared.arrived.wait_timeout(pending, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Stops the watcher without telling anyone, as a crash of its thread would (tests).
    #[doc(hidden)]
    pub(crate) fn kill(&mut self) {
        self.shared.pending.lock().unwrap_or_else(|e| e.into_inner()).deaf = true;
        self.watcher = None;
    }

    /// Reports an overflow of the kernel's queue, as inotify would (tests).
    #[doc(hidden)]
    pub(crate) fn overflow(&self) {
        note(&self.shared, Report::Rescan);
    }
}

/// The `notify` crate's watcher, its events turned into reports.
#[cfg(not(target_os = "linux"))]
fn notify_backend(
    root: &Path,
    deliver: impl Fn(Report) + Send + 'static,
) -> Result<notify::RecommendedWatcher, String> {
    use notify::event::{AccessKind, AccessMode, EventKind};
    use notify::{RecursiveMode, Watcher};
    let handler = move |event: notify::Result<notify::Event>| match event {
        Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
            deliver(Report::Broken("the system's limit of watched folders was reached".into()))
        }
        Err(_) => deliver(Report::Rescan),
        // Reads (the searches' own, among others) change nothing.
        Ok(event) if matches!(event.kind, EventKind::Access(k) if k != AccessKind::Close(AccessMode::Write)) => {}
        Ok(event) if event.need_rescan() => deliver(Report::Rescan),
        Ok(event) => {
            let created = matches!(event.kind, EventKind::Create(_));
            for path in event.paths {
                deliver(Report::Path { path, created });
            }
        }
    };
    let config = notify::Config::default().with_follow_symlinks(false);
    let mut watcher = notify::RecommendedWatcher::new(handler, config).map_err(|e| e.to_string())?;
    watcher.watch(root, RecursiveMode::Recursive).map_err(|e| e.to_string())?;
    Ok(watcher)
}

/// Takes one report of the watcher (on its thread).
fn note(shared: &Shared, report: Report) {
    let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
    if pending.deaf {
        return;
    }
    shared.events.fetch_add(1, Ordering::Relaxed);
    match report {
        Report::Broken(why) => {
            pending.broken = Some(why);
            shared.arrived.notify_all();
        }
        Report::Rescan => pending.changes.rescan = true,
        Report::Path { path, created } => {
            if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(COOKIE)) {
                if created {
                    pending.cookies.insert(path);
                    shared.arrived.notify_all();
                }
                return;
            }
            if pending.changes.paths.len() >= MAX_PENDING {
                pending.changes.paths.clear();
                pending.changes.rescan = true;
            }
            if !pending.changes.rescan {
                pending.changes.paths.insert(path);
            }
        }
    }
}
