//! A toolkit-wide cache of what one pass over a large text file learned — its hash, its
//! line count and where a line starts in every 1 MiB chunk — so that the next ranged read
//! of the same, unchanged file seeks straight to its page instead of reading the file.

use std::collections::HashMap;
use std::fs::Metadata;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What identifies one version of a file without reading it. Any write changes the
/// ctime, which no user can set; see [`IndexCache`] for the one case this misses.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Identity {
    #[cfg(unix)]
    pub(crate) fn of(meta: &Metadata) -> Option<Identity> {
        use std::os::unix::fs::MetadataExt;
        Some(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ctime_ns: meta.ctime() as i128 * 1_000_000_000 + meta.ctime_nsec() as i128,
        })
    }

    #[cfg(not(unix))]
    pub(crate) fn of(_meta: &Metadata) -> Option<Identity> {
        None
    }

    fn ctime(&self) -> SystemTime {
        let ns = self.ctime_ns.max(0) as u128;
        SystemTime::UNIX_EPOCH + Duration::from_nanos(ns.min(u64::MAX as u128) as u64)
    }
}

/// The facts of one pass.
#[derive(Debug)]
pub(crate) struct Facts {
    pub(crate) hash: u128,
    pub(crate) total_lines: u64,
    /// `(line, byte offset where it starts)`, increasing in both; the first is line 1.
    pub(crate) index: Vec<(u64, u64)>,
}

/// A bounded cache of pass facts keyed by file identity (device, inode, size, mtime, ctime).
///
/// File timestamps tick coarsely (a few milliseconds), so two same-size writes within
/// one tick could share an identity. Like git's "racily clean" rule, an entry is only
/// trusted when the file's ctime was already older than `racy` when the pass was made;
/// a file changed that recently is read in full every time.
#[derive(Debug)]
pub struct IndexCache {
    entries: Mutex<HashMap<Identity, (SystemTime, Arc<Facts>)>>,
    capacity: usize,
    racy: Duration,
}

impl Default for IndexCache {
    fn default() -> IndexCache {
        IndexCache::new(256, Duration::from_secs(2))
    }
}

impl IndexCache {
    /// A cache of at most `capacity` files that trusts only passes made at least `racy`
    /// after the file's last change.
    pub fn new(capacity: usize, racy: Duration) -> IndexCache {
        IndexCache { entries: Mutex::new(HashMap::new()), capacity: capacity.max(1), racy }
    }

    pub(crate) fn get(&self, id: &Identity) -> Option<Arc<Facts>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.get(id).map(|(_, facts)| facts.clone())
    }

    pub(crate) fn put(&self, id: Identity, made_at: SystemTime, facts: Arc<Facts>) {
        let settled = made_at.duration_since(id.ctime()).is_ok_and(|age| age >= self.racy);
        if !settled {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= self.capacity {
            if let Some(oldest) = entries.iter().min_by_key(|(_, (t, _))| *t).map(|(k, _)| *k) {
                entries.remove(&oldest);
            }
        }
        entries.insert(id, (made_at, facts));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> Identity {
        Identity { dev: 1, ino: n, size: 10, mtime_ns: 0, ctime_ns: 0 }
    }

    fn facts() -> Arc<Facts> {
        Arc::new(Facts { hash: 1, total_lines: 1, index: vec![(1, 0)] })
    }

    #[test]
    fn the_oldest_entry_goes_when_full() {
        let cache = IndexCache::new(2, Duration::ZERO);
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        cache.put(id(1), t, facts());
        cache.put(id(2), t + Duration::from_secs(1), facts());
        cache.put(id(3), t + Duration::from_secs(2), facts());
        assert!(cache.get(&id(1)).is_none());
        assert!(cache.get(&id(2)).is_some() && cache.get(&id(3)).is_some());
    }

    #[test]
    fn a_pass_made_soon_after_a_change_is_not_kept() {
        let cache = IndexCache::new(4, Duration::from_secs(2));
        cache.put(id(1), SystemTime::UNIX_EPOCH + Duration::from_secs(1), facts());
        assert!(cache.get(&id(1)).is_none());
        cache.put(id(1), SystemTime::UNIX_EPOCH + Duration::from_secs(3), facts());
        assert!(cache.get(&id(1)).is_some());
    }
}
