//! Helpers for the unit tests of this crate.

use std::path::{Path, PathBuf};

/// A new, empty temporary folder, unique to this call.
pub(crate) fn tmp() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fsgate-core-test-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `data` to `dir/name` and returns the path.
pub(crate) fn wfile(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

/// A new temporary folder holding `files` (path, contents), folders made as needed.
pub(crate) fn tree(files: &[(&str, &str)]) -> PathBuf {
    let dir = tmp();
    for (path, text) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    dir
}
