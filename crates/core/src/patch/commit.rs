//! Changes of several files that land together or not at all, on the atomic writer of
//! [`crate::write`]. Every new version is first written and flushed beside its file (a
//! full disk or a write error is met here, before anything has changed); then the new
//! versions are moved into place, each only if its file is still the version the change
//! was made from, and the files to delete are removed likewise. When one of those steps
//! fails, the steps done are undone in reverse, and the outcome says what each file is now.

use std::fs::{Metadata, Permissions};
use std::path::{Path, PathBuf};

use crate::cancel::Cancel;
use crate::confine::Roots;
use crate::error::{Error, ErrorKind, Result};
use rayon::prelude::*;

use crate::write::{
    prepare, remove_if_unchanged, stage, sync_folder, Carry, Expect, Installed, Place, Prepared, Replacing, Staged,
    WriteConfig, Written,
};

/// One file of a change of several: where it is, what is there now (read by the caller
/// with [`prepare`]), and what it becomes (None: removed).
pub(crate) struct Slot {
    pub real: PathBuf,
    pub prepared: Prepared,
    pub new: Option<Vec<u8>>,
    /// The mode the new version gets (a file moved here keeps its own); None: the mode of
    /// the file it replaces, or a new file's default.
    pub mode: Option<Permissions>,
}

/// What a file of a change of several is after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDisk {
    /// As it was before the change.
    Old,
    /// The new version (or removed, if the change removed it).
    New,
    /// Neither could be made sure of: putting it back failed (someone else changed it meanwhile).
    Unknown,
}

/// A file the change left changed.
#[derive(Debug)]
pub struct Changed {
    /// The real path.
    pub real: PathBuf,
    /// What is there now; None when the change removed it.
    pub written: Option<Written>,
    /// The bytes the change replaced or removed (None: it created the file).
    pub previous: Option<Vec<u8>>,
    /// The mode of the file replaced or removed (an undo gives it back).
    pub previous_mode: Option<Permissions>,
    /// The folders made for a created file, the deepest first (an undo removes them if empty).
    pub made: Vec<PathBuf>,
}

/// Why a change of several files did not land.
#[derive(Debug)]
pub struct CommitFailure {
    /// The file whose step failed.
    pub real: PathBuf,
    /// What failed.
    pub error: Error,
    /// Every file of the change and what it is now (all [`OnDisk::Old`] unless putting one
    /// back failed).
    pub on_disk: Vec<(PathBuf, OnDisk)>,
}

/// The outcome of [`commit`].
pub(crate) type Committed = std::result::Result<Vec<Changed>, CommitFailure>;

/// A step done, remembered so that it can be undone.
enum Done {
    Installed { slot: usize, installed: Box<Installed> },
    Removed { slot: usize },
}

/// Lands the slots' new versions together (see the module doc). Slots whose new version
/// equals the old one are left alone.
pub(crate) fn commit(roots: &Roots, slots: Vec<Slot>, allow_outside: bool, cancel: &Cancel) -> Result<Committed> {
    cancel.check()?;
    struct Pending {
        real: PathBuf,
        old: Option<(Vec<u8>, Metadata)>,
        new: Option<Vec<u8>>,
        mode: Option<Permissions>,
        place: Option<Place>,
        /// The folders missing on the way to a new file, the deepest first.
        missing: Vec<PathBuf>,
    }
    let mut pending: Vec<Pending> = Vec::with_capacity(slots.len());
    for slot in slots {
        let Prepared { place, current } = slot.prepared;
        let same = match (&current, &slot.new) {
            (None, None) => true,
            (Some((old, meta)), Some(new)) => old == new && slot.mode.as_ref().is_none_or(|m| *m == meta.permissions()),
            _ => false,
        };
        if !same {
            let missing = if place.has_folder() { Vec::new() } else { missing_folders(&slot.real) };
            pending.push(Pending {
                real: slot.real,
                old: current,
                new: slot.new,
                mode: slot.mode,
                place: Some(place),
                missing,
            });
        }
    }

    // 1. Every new version written and flushed beside its file: first, in order, those that
    // need new folders (so that a failure takes the folders away in reverse), then the rest
    // at once (flushes of several files wait on the disk together).
    fn carry(p: &Pending) -> Carry<'_> {
        let owner = p.old.as_ref().map(|(_, meta)| meta);
        Carry { permissions: p.mode.clone().or_else(|| owner.map(Metadata::permissions)), owner }
    }
    let writes: Vec<usize> = (0..pending.len()).filter(|&i| pending[i].new.is_some()).collect();
    let (fresh, existing): (Vec<usize>, Vec<usize>) =
        writes.into_iter().partition(|&i| pending[i].place.as_ref().is_some_and(|p| !p.has_folder()));
    let mut staged: Vec<(usize, Staged)> = Vec::with_capacity(pending.len());
    let mut failed: Option<(usize, Error)> = None;
    for &i in &fresh {
        let place = pending[i].place.take().expect("each place is staged once");
        match stage(place, pending[i].new.as_deref().unwrap_or_default(), carry(&pending[i])) {
            Ok(s) => staged.push((i, s)),
            Err(e) => {
                failed = Some((i, e));
                break;
            }
        }
    }
    if failed.is_none() {
        let jobs: Vec<(usize, Place)> =
            existing.iter().map(|&i| (i, pending[i].place.take().expect("each place is staged once"))).collect();
        let pending = &pending;
        let results: Vec<(usize, Result<Staged>)> = jobs
            .into_par_iter()
            .map(|(i, place)| (i, stage(place, pending[i].new.as_deref().unwrap_or_default(), carry(&pending[i]))))
            .collect();
        for (i, result) in results {
            match result {
                Ok(s) => staged.push((i, s)),
                Err(e) => failed = failed.or(Some((i, e))),
            }
        }
    }
    // The fresh ones were staged first: discarded last, in reverse, each takes its folders away.
    let discard = |staged: Vec<(usize, Staged)>| {
        for (_, s) in staged.into_iter().rev() {
            s.discard();
        }
    };
    if let Some((i, error)) = failed {
        discard(staged);
        let real = pending[i].real.clone();
        let on_disk = pending.iter().map(|p| (p.real.clone(), OnDisk::Old)).collect();
        return Ok(Err(CommitFailure { error: error.with_path(&real), real, on_disk }));
    }
    if let Err(e) = cancel.check() {
        discard(staged);
        return Err(e);
    }
    // Into place in the patch's order.
    staged.sort_by_key(|(i, _)| *i);
    // 2. Into place, each only if its file is still the version read; 3. removals.
    let mut done: Vec<Done> = Vec::with_capacity(pending.len());
    let mut left = staged.into_iter();
    for (i, s) in left.by_ref() {
        let p = &pending[i];
        let replacing = p.old.as_ref().map(|(read, before)| Replacing { before, read, look: true });
        match s.install(replacing, false) {
            Ok(installed) => done.push(Done::Installed { slot: i, installed: Box::new(installed) }),
            Err(e) => {
                failed = Some((i, e));
                break;
            }
        }
    }
    for (_, s) in left {
        s.discard();
    }
    if failed.is_none() {
        for (i, p) in pending.iter().enumerate() {
            let (Some(place), Some((read, before)), None) = (&p.place, &p.old, &p.new) else { continue };
            match remove_if_unchanged(place, before, read, false) {
                Ok(()) => done.push(Done::Removed { slot: i }),
                Err(e) => {
                    failed = Some((i, e));
                    break;
                }
            }
        }
    }

    if let Some((i, error)) = failed {
        let mut state = vec![OnDisk::Old; pending.len()];
        for step in done.into_iter().rev() {
            let (slot, back) = match step {
                Done::Installed { slot, installed } => {
                    let p = &pending[slot];
                    (
                        slot,
                        undo_install(
                            roots,
                            &p.real,
                            p.old.as_ref(),
                            p.new.as_deref().unwrap_or_default(),
                            *installed,
                            allow_outside,
                        ),
                    )
                }
                Done::Removed { slot } => {
                    let p = &pending[slot];
                    (
                        slot,
                        restore_removed(
                            roots,
                            &p.real,
                            p.old.as_ref().expect("a removed file was there"),
                            allow_outside,
                        ),
                    )
                }
            };
            state[slot] = if back.is_ok() { OnDisk::Old } else { OnDisk::Unknown };
        }
        let real = pending[i].real.clone();
        let on_disk = pending.iter().zip(state).map(|(p, s)| (p.real.clone(), s)).collect();
        return Ok(Err(CommitFailure { error: error.with_path(&real), real, on_disk }));
    }

    // Each folder flushed once, after the last rename in it.
    let mut folders: Vec<&Path> = pending.iter().filter_map(|p| p.real.parent()).collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        sync_folder(folder);
    }

    let mut changed: Vec<Changed> = Vec::with_capacity(pending.len());
    let mut installed: Vec<Option<Written>> = (0..pending.len()).map(|_| None).collect();
    for step in done {
        if let Done::Installed { slot, installed: got } = step {
            installed[slot] = Some(got.written);
        }
    }
    for (p, written) in pending.into_iter().zip(installed) {
        let made = if written.is_some() { p.missing } else { Vec::new() };
        let previous_mode = p.old.as_ref().map(|(_, meta)| meta.permissions());
        changed.push(Changed { real: p.real, written, previous: p.old.map(|(bytes, _)| bytes), previous_mode, made });
    }
    Ok(Ok(changed))
}

/// Puts back what an install replaced (or removes what it created), if the file is still
/// the version installed.
fn undo_install(
    roots: &Roots,
    real: &Path,
    old: Option<&(Vec<u8>, Metadata)>,
    new: &[u8],
    installed: Installed,
    allow_outside: bool,
) -> Result<()> {
    let place = place_of(roots, real, allow_outside)?;
    match old {
        Some((bytes, meta)) => {
            let carry = Carry { permissions: Some(meta.permissions()), owner: Some(meta) };
            let replacing = Replacing { before: &installed.ours, read: new, look: true };
            stage(place, bytes, carry)?.install(Some(replacing), true).map(drop)
        }
        None => {
            remove_if_unchanged(&place, &installed.ours, new, true)?;
            installed.made.undo();
            Ok(())
        }
    }
}

/// Writes a removed file back where no file is now, with its mode and owner.
fn restore_removed(roots: &Roots, real: &Path, old: &(Vec<u8>, Metadata), allow_outside: bool) -> Result<()> {
    let place = place_of(roots, real, allow_outside)?;
    let (bytes, meta) = old;
    stage(place, bytes, Carry { permissions: Some(meta.permissions()), owner: Some(meta) })?
        .install(None, true)
        .map(drop)
}

/// The folders on the way to `real` that are not there, the deepest first.
fn missing_folders(real: &Path) -> Vec<PathBuf> {
    real.ancestors().skip(1).take_while(|dir| std::fs::symlink_metadata(dir).is_err()).map(Path::to_path_buf).collect()
}

fn place_of(roots: &Roots, real: &Path, allow_outside: bool) -> Result<Place> {
    Place::of(&roots.target(real, allow_outside)?, real)
}

/// A file to change, for [`commit_files`]: its real path, the version it must be now, and
/// what it becomes (None: removed).
#[derive(Clone, Debug)]
pub struct FileChange {
    /// The real path (the caller resolved and checked it).
    pub real: PathBuf,
    /// What must be there now: a version ([`ErrorKind::Stale`] otherwise), or no file.
    pub expect: Expect,
    /// The new bytes, written as they are; None removes the file.
    pub content: Option<Vec<u8>>,
    /// The mode the file gets (an undo gives a removed file its mode back); None: the mode
    /// of the file replaced, or a new file's default.
    pub mode: Option<Permissions>,
}

/// Changes several files together or not at all (see the module doc): an undo of a patch
/// puts its files back this way. Each file must be its expected version; one that is not
/// fails the whole change with nothing written ([`ErrorKind::Stale`], or
/// [`ErrorKind::Exists`] for a file expected absent).
pub fn commit_files(
    roots: &Roots,
    changes: &[FileChange],
    allow_outside: bool,
    cancel: &Cancel,
) -> Result<std::result::Result<Vec<Changed>, CommitFailure>> {
    let mut slots = Vec::with_capacity(changes.len());
    for change in changes {
        if slots.iter().any(|s: &Slot| s.real == change.real) {
            return Err(Error::new(ErrorKind::InvalidInput, "names a file twice").with_path(&change.real));
        }
        let mut config = WriteConfig::default();
        config.expect(change.expect).allow_outside(allow_outside).real_only(true);
        let prepared = prepare(roots, &change.real, &config)?;
        slots.push(Slot {
            real: change.real.clone(),
            prepared,
            new: change.content.clone(),
            mode: change.mode.clone(),
        });
    }
    commit(roots, slots, allow_outside, cancel)
}

/// Removes the folders given (real paths, the deepest first) that lie inside the roots and
/// are empty; the others stay. Each is removed by name inside its parent folder, held open
/// with no link on the way, so a folder swapped for a link meanwhile is never followed.
/// An undo of a patch takes away the folders the patch made this way.
pub fn remove_empty_folders(roots: &Roots, folders: &[PathBuf]) {
    for folder in folders {
        let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else { continue };
        if !roots.contains(folder) || !roots.contains(parent) {
            continue;
        }
        if let Ok(dir) = crate::dir::Dir::open(parent) {
            let _ = dir.remove_folder(name);
        }
    }
}

/// The expectation that a file is exactly `bytes`.
#[cfg(test)]
pub(crate) fn version_of(bytes: &[u8]) -> Expect {
    Expect::Version { size: bytes.len() as u64, hash: crate::hash::hash_bytes(bytes) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tmp, wfile};

    fn roots(dir: &Path) -> Roots {
        Roots::new(&[dir]).unwrap()
    }

    fn change(real: PathBuf, expect: Expect, content: Option<&str>) -> FileChange {
        FileChange { real, expect, content: content.map(|c| c.as_bytes().to_vec()), mode: None }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = walk(dir, dir);
        out.sort();
        out
    }

    fn walk(base: &Path, dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.push(format!("{rel}/"));
                out.extend(walk(base, &p));
            } else {
                out.push(rel);
            }
        }
        out
    }

    #[test]
    fn lands_creations_replacements_and_removals_together() {
        let dir = tmp();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let a = wfile(&dir, "a.txt", b"a0\n");
        let gone = wfile(&dir, "gone.txt", b"bye\n");
        let changes = [
            change(a.clone(), version_of(b"a0\n"), Some("a1\n")),
            change(dir.join("new/deep/b.txt"), Expect::Absent, Some("b\n")),
            change(gone.clone(), version_of(b"bye\n"), None),
        ];
        let done = commit_files(&roots(&dir), &changes, false, &Cancel::new()).unwrap().unwrap();
        assert_eq!(done.len(), 3);
        assert_eq!(done[0].previous.as_deref(), Some(&b"a0\n"[..]));
        assert!(done[1].previous.is_none() && done[1].written.as_ref().unwrap().created);
        assert_eq!(done[1].made, [dir.join("new/deep"), dir.join("new")]);
        assert!(done[0].made.is_empty());
        assert!(done[2].written.is_none());
        assert_eq!(std::fs::read(&a).unwrap(), b"a1\n");
        assert_eq!(entries(&dir), ["a.txt", "new/", "new/deep/", "new/deep/b.txt"]);
    }

    #[test]
    fn a_stale_file_fails_the_whole_change_before_anything_is_written() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let a = wfile(&dir, "a.txt", b"a0\n");
        let b = wfile(&dir, "b.txt", b"changed\n");
        let changes =
            [change(a.clone(), version_of(b"a0\n"), Some("a1\n")), change(b, version_of(b"b0\n"), Some("b1\n"))];
        let err = commit_files(&roots(&dir), &changes, false, &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Stale);
        assert_eq!(std::fs::read(&a).unwrap(), b"a0\n");
    }

    #[test]
    fn a_failed_install_puts_back_every_file_already_in_place() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        #[cfg(unix)]
        let mode = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(wfile(&dir, "a.txt", b"a0\n"), std::fs::Permissions::from_mode(0o640)).unwrap();
            0o640
        };
        #[cfg(not(unix))]
        wfile(&dir, "a.txt", b"a0\n");
        wfile(&dir, "c.txt", b"c0\n");
        let before = entries(&dir);
        for fail_at in 1..=3 {
            let changes = [
                change(dir.join("a.txt"), version_of(b"a0\n"), Some("a1\n")),
                change(dir.join("n/b.txt"), Expect::Absent, Some("b\n")),
                change(dir.join("c.txt"), version_of(b"c0\n"), Some("c1\n")),
            ];
            crate::write::fail_install(fail_at);
            let failure = commit_files(&roots(&dir), &changes, false, &Cancel::new()).unwrap().unwrap_err();
            assert_eq!(failure.real, changes[fail_at as usize - 1].real);
            assert!(failure.on_disk.iter().all(|(_, s)| *s == OnDisk::Old), "{failure:?}");
            assert_eq!(entries(&dir), before, "after a failure at install {fail_at}");
            assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a0\n");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                assert_eq!(std::fs::metadata(dir.join("a.txt")).unwrap().permissions().mode() & 0o777, mode);
            }
        }
    }

    #[test]
    fn a_failed_removal_puts_back_the_files_written_and_removed() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        wfile(&dir, "a.txt", b"a0\n");
        wfile(&dir, "x.txt", b"x\n");
        let y = wfile(&dir, "y.txt", b"y\n");
        let before = entries(&dir);
        let changes = [
            change(dir.join("a.txt"), version_of(b"a0\n"), Some("a1\n")),
            change(dir.join("x.txt"), version_of(b"x\n"), None),
            change(y.clone(), version_of(b"y\n"), None),
        ];
        let root = roots(&dir);
        let mut slots = Vec::new();
        for c in &changes {
            let mut config = WriteConfig::default();
            config.expect(c.expect).real_only(true);
            slots.push(Slot {
                real: c.real.clone(),
                prepared: prepare(&root, &c.real, &config).unwrap(),
                new: c.content.clone(),
                mode: None,
            });
        }
        // y.txt changes after it was read: its removal is STALE.
        std::fs::write(&y, b"y2\n").unwrap();
        let failure = commit(&root, slots, false, &Cancel::new()).unwrap().unwrap_err();
        assert_eq!(failure.error.kind(), ErrorKind::Stale);
        assert_eq!(failure.real, y);
        assert_eq!(entries(&dir), before);
        assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"a0\n");
        assert_eq!(std::fs::read(dir.join("x.txt")).unwrap(), b"x\n");
        assert_eq!(std::fs::read(&y).unwrap(), b"y2\n");
    }

    #[test]
    fn empty_folders_inside_the_roots_are_removed_and_the_others_stay() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::create_dir_all(dir.join("full")).unwrap();
        wfile(&dir.join("full"), "x", b"x");
        let outside = std::fs::canonicalize(tmp()).unwrap();
        std::fs::create_dir_all(outside.join("empty")).unwrap();
        remove_empty_folders(&roots(&dir), &[dir.join("a/b"), dir.join("a"), dir.join("full"), outside.join("empty")]);
        assert_eq!(entries(&dir), ["full/", "full/x"]);
        assert!(outside.join("empty").is_dir());
    }

    #[test]
    fn a_file_named_twice_is_refused() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let a = wfile(&dir, "a.txt", b"a\n");
        let changes = [change(a.clone(), Expect::Any, Some("1")), change(a, Expect::Any, None)];
        assert_eq!(
            commit_files(&roots(&dir), &changes, false, &Cancel::new()).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }
}
