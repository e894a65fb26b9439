//! Folders held open. A change reads, creates, checks, renames and removes names inside
//! a folder it holds, so a folder on the path that is swapped for a link between the
//! check and the change cannot send the change (or its temp file) anywhere else: the path
//! is resolved once, when the folder is opened, and never again.
//!
//! On Unix a [`Dir`] is a descriptor reached one name at a time from `/`, never through
//! a link. Every path given is already real (symlinks resolved), so a link met on the way
//! can only be a folder swapped since it was resolved, and is refused. Missing folders
//! can be made on the way (`mkdir -p`), each inside the one held before it, and removed
//! again ([`Made::undo`]) when the change they were made for fails. Elsewhere a `Dir` is
//! the path, and the checks made around it are all there is.
//!
//! Changes by several processes to one folder take turns ([`Dir::lock`]), so that the
//! last look at a file and the rename over it are one step for every fsgate process.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// An open folder, for changes made by name inside it.
pub(crate) struct Dir {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    /// Where it was when opened (for messages, and the path-based fallback).
    path: PathBuf,
}

/// The folders [`Dir::make`] created, newest last, so that a failed change can remove them.
#[derive(Default)]
pub(crate) struct Made {
    #[cfg(unix)]
    dirs: Vec<(std::os::fd::OwnedFd, std::ffi::CString)>,
    #[cfg(not(unix))]
    dirs: Vec<PathBuf>,
}

/// What a look at a name inside a [`Dir`] saw (the name itself, never a link's target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Modification and status-change times, as (seconds, nanoseconds).
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
    pub is_file: bool,
    pub is_link: bool,
}

impl Stat {
    /// The modification time in ms since the epoch.
    pub fn mtime_ms(&self) -> f64 {
        self.mtime.0 as f64 * 1000.0 + self.mtime.1 as f64 / 1e6
    }
}

/// The longest a change waits for another process's change in the same folder.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// The error for a folder on a real path that is now a link.
#[cfg(unix)]
fn swapped(path: &Path) -> Error {
    Error::new(ErrorKind::OutsideRoots, "a folder on its path changed into a link while it was being written")
        .with_path(path)
}

impl Dir {
    /// Opens the existing folder at `real` (a real path: absolute, no `.`, `..` or links).
    /// A link on the way is refused ([`ErrorKind::OutsideRoots`]), a file on the way is
    /// [`ErrorKind::InvalidPath`], a missing folder [`ErrorKind::NotFound`].
    pub fn open(real: &Path) -> Result<Dir> {
        Dir::reach(real, false).map(|(dir, _)| dir)
    }

    /// Opens the folder at `real` as [`Dir::open`] does, making the missing folders on the
    /// way, each inside the one before; the folders made are returned.
    pub fn make(real: &Path) -> Result<(Dir, Made)> {
        Dir::reach(real, true)
    }

    /// Opens a folder a walk found (a real path), only to look at the names in it: on
    /// Linux one `openat2` that refuses any link on the way, elsewhere the walk of
    /// [`Dir::open`]. A link on the way is [`ErrorKind::OutsideRoots`].
    pub fn open_to_look(real: &Path) -> Result<Dir> {
        #[cfg(target_os = "linux")]
        if let Some(opened) = crate::confine::openat2_no_links(real, libc::O_PATH | libc::O_DIRECTORY) {
            return match opened {
                Ok(file) => Ok(Dir { fd: file.into(), path: real.to_path_buf() }),
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(swapped(real)),
                Err(e) => Err(Error::io(e).with_path(real)),
            };
        }
        Dir::open(real)
    }

    /// Creates a new, uniquely named temp file for `name` (`.name.<pid>-<n>-<ns>.fsgate-tmp`).
    pub fn create_temp(&self, name: &OsStr, private: bool) -> Result<(OsString, File)> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = name.to_string_lossy();
        // File names are limited in bytes (255 on most systems): keep the stem short in bytes.
        let mut cut = name.len().min(64);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let stem = &name[..cut];
        for _ in 0..16 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            let temp = OsString::from(format!(".{stem}.{}-{n}-{nanos:x}.fsgate-tmp", std::process::id()));
            match self.create_new(&temp, private) {
                Ok(file) => return Ok((temp, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(e)),
            }
        }
        Err(Error::new(ErrorKind::Io, "could not create a temporary file"))
    }

    /// Waits (at most [`LOCK_WAIT`]) until no other process is changing a file in this
    /// folder, and holds the folder until the guard is dropped. Every fsgate process takes
    /// it for the last look at a file and the rename over it, so two processes that read
    /// the same version cannot both replace it. Where the folder cannot be locked (a file
    /// system without locks, a folder this process may not list) there is no wait.
    pub fn lock(&self) -> Result<Locked<'_>> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match self.try_lock() {
                Ok(true) => return Ok(Locked { dir: Some(self) }),
                Ok(false) if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(25));
                }
                Ok(false) => {
                    return Err(Error::new(
                        ErrorKind::Timeout,
                        format!("another process kept changing a file in this folder for {} s", LOCK_WAIT.as_secs()),
                    )
                    .with_path(&self.path))
                }
                Err(_) => return Ok(Locked { dir: None }),
            }
        }
    }
}

impl Made {
    /// Adds the folders another [`Dir::make`] made for the same change.
    pub fn absorb(&mut self, other: Made) {
        self.dirs.extend(other.dirs);
    }
}

/// A folder held by [`Dir::lock`]; dropping it lets the next process in.
pub(crate) struct Locked<'a> {
    dir: Option<&'a Dir>,
}

impl Locked<'_> {
    /// Whether the folder is really held (it could be locked).
    pub fn held(&self) -> bool {
        self.dir.is_some()
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.dir {
            dir.unlock();
        }
    }
}

#[cfg(unix)]
mod sys {
    use std::ffi::{CStr, CString, OsStr};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;

    /// How folders on the way are opened: only to look up names in them (Linux's O_PATH
    /// and the BSDs' O_SEARCH need no read permission, so `/home` at mode 0711 is no
    /// obstacle).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const SEARCH: libc::c_int = libc::O_PATH;
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
    pub const SEARCH: libc::c_int = libc::O_SEARCH;
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd"
    )))]
    pub const SEARCH: libc::c_int = libc::O_RDONLY;

    pub fn cstr(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    /// `openat` with close-on-exec, retried on EINTR.
    pub fn openat(dir: &OwnedFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
        loop {
            // SAFETY: a valid descriptor and NUL-terminated name; the result is checked.
            let fd =
                unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
            if fd >= 0 {
                // SAFETY: a new descriptor that nothing else owns.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    /// Turns a -1 result into the error it stands for.
    pub fn check(rc: libc::c_int) -> io::Result<()> {
        if rc == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

#[cfg(unix)]
impl Dir {
    /// Walks from `/` to `real` one name at a time, never through a link, making the
    /// missing folders when `create`. A folder on the way that vanishes while the rest is
    /// made (another write that made it for itself failed and removed it again) is made
    /// anew: the walk starts over, a few times at most.
    fn reach(real: &Path, create: bool) -> Result<(Dir, Made)> {
        let mut tries = 0;
        loop {
            match Dir::reach_once(real, create) {
                Err(e) if create && e.kind() == ErrorKind::NotFound && tries < 3 => tries += 1,
                other => return other,
            }
        }
    }

    /// One walk of [`Dir::reach`].
    fn reach_once(real: &Path, create: bool) -> Result<(Dir, Made)> {
        use std::os::fd::AsRawFd;
        use std::path::Component;
        let io = |e: std::io::Error| Error::io(e).with_path(real);
        let mut parts = real.components();
        if parts.next() != Some(Component::RootDir) {
            return Err(Error::new(ErrorKind::InvalidPath, "is not an absolute path").with_path(real));
        }
        let names: Vec<&OsStr> = parts
            .map(|part| match part {
                Component::Normal(name) => Ok(name),
                _ => Err(Error::new(ErrorKind::InvalidPath, "is not a real path").with_path(real)),
            })
            .collect::<Result<_>>()?;
        let mut made = Made::default();
        let result = (|| {
            let mut fd: std::os::fd::OwnedFd = std::fs::File::open("/").map_err(io)?.into();
            for (i, name) in names.iter().enumerate() {
                let last = i + 1 == names.len();
                let c = sys::cstr(name).map_err(io)?;
                let flags = libc::O_DIRECTORY | libc::O_NOFOLLOW | if last { libc::O_RDONLY } else { sys::SEARCH };
                let opened = match sys::openat(&fd, &c, flags, 0) {
                    Err(e) if create && e.raw_os_error() == Some(libc::ENOENT) => {
                        // SAFETY: a valid descriptor and NUL-terminated name.
                        match sys::check(unsafe { libc::mkdirat(fd.as_raw_fd(), c.as_ptr(), 0o777) }) {
                            Ok(()) => made.dirs.push((fd.try_clone().map_err(io)?, c.clone())),
                            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                            Err(e) => return Err(io(e)),
                        }
                        sys::openat(&fd, &c, flags, 0)
                    }
                    // The last folder may be one this process can write but not list.
                    Err(e) if last && e.raw_os_error() == Some(libc::EACCES) && sys::SEARCH != libc::O_RDONLY => {
                        sys::openat(&fd, &c, libc::O_DIRECTORY | libc::O_NOFOLLOW | sys::SEARCH, 0)
                    }
                    // A kernel older than its headers may not know O_SEARCH.
                    Err(e) if !last && e.raw_os_error() == Some(libc::EINVAL) && sys::SEARCH != libc::O_RDONLY => {
                        sys::openat(&fd, &c, libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_RDONLY, 0)
                    }
                    other => other,
                };
                fd = match opened {
                    Ok(next) => next,
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                        let here = Dir { fd, path: PathBuf::new() };
                        return Err(match here.stat(name) {
                            Ok(stat) if stat.is_link => swapped(real),
                            _ => Error::new(ErrorKind::InvalidPath, "has a part that is a file, not a folder")
                                .with_path(real),
                        });
                    }
                    Err(e) => return Err(io(e)),
                };
            }
            Ok(Dir { fd, path: real.to_path_buf() })
        })();
        match result {
            Ok(dir) => Ok((dir, made)),
            Err(e) => {
                made.undo();
                Err(e)
            }
        }
    }

    /// Creates a new file `name` for writing (never following or reusing an existing
    /// name), private to this user when `private`.
    pub fn create_new(&self, name: &OsStr, private: bool) -> std::io::Result<File> {
        let c = sys::cstr(name)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let fd = sys::openat(&self.fd, &c, flags, if private { 0o600 } else { 0o666 })?;
        Ok(File::from(fd))
    }

    /// Opens the regular file `name` for reading, without following a link or blocking.
    /// A link there now is [`ErrorKind::Stale`]: the name changed since it was resolved.
    pub fn open_file(&self, name: &OsStr) -> Result<File> {
        let at = || self.path.join(name);
        let c = sys::cstr(name).map_err(|e| Error::io(e).with_path(&at()))?;
        let fd = sys::openat(&self.fd, &c, libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0).map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                Error::new(ErrorKind::Stale, "changed into a link since it was resolved").with_path(&at())
            } else {
                Error::io(e).with_path(&at())
            }
        })?;
        let file = File::from(fd);
        if !file.metadata().map_err(|e| Error::io(e).with_path(&at()))?.is_file() {
            return Err(crate::confine::blocked(&at()));
        }
        Ok(file)
    }

    /// Looks at `name` itself (a link is not followed).
    pub fn stat(&self, name: &OsStr) -> std::io::Result<Stat> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        // A name fits in 256 bytes on every file system here: no allocation per look.
        let mut buf = [0u8; 256];
        let bytes = name.as_bytes();
        let heap;
        let c: &std::ffi::CStr = if bytes.len() < buf.len() {
            buf[..bytes.len()].copy_from_slice(bytes);
            std::ffi::CStr::from_bytes_until_nul(&buf)
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?
        } else {
            heap = sys::cstr(name)?;
            &heap
        };
        if c.to_bytes().len() != bytes.len() {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        }
        // SAFETY: stat is plain data; fstatat fills it or fails.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor, NUL-terminated name and writable buffer.
        sys::check(unsafe { libc::fstatat(self.fd.as_raw_fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        Ok(Stat {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            size: st.st_size as u64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
            is_file: st.st_mode & libc::S_IFMT == libc::S_IFREG,
            is_link: st.st_mode & libc::S_IFMT == libc::S_IFLNK,
        })
    }

    /// Whether this process may write the file `name` (a rename would replace even a
    /// read-only one, so this is asked first).
    pub fn writable(&self, name: &OsStr) -> bool {
        use std::os::fd::AsRawFd;
        let Ok(c) = sys::cstr(name) else { return false };
        // SAFETY: a valid descriptor and NUL-terminated name; faccessat only reads them.
        unsafe { libc::faccessat(self.fd.as_raw_fd(), c.as_ptr(), libc::W_OK, 0) == 0 }
    }

    /// Renames `from` to `to`, both in this folder (replacing `to`).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let (from, to) = (sys::cstr(from)?, sys::cstr(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid descriptors and NUL-terminated names.
        sys::check(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) })
    }

    /// Swaps the files named `a` and `b` in this folder in one step. `Ok(false)` where
    /// the system or the file system cannot (the caller renames instead).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn exchange(&self, a: &OsStr, b: &OsStr) -> std::io::Result<bool> {
        self.renameat2(a, b, libc::RENAME_EXCHANGE)
    }

    /// `renameat2` within this folder; `Ok(false)` where the kernel or the file system
    /// does not know the flag.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn renameat2(&self, from: &OsStr, to: &OsStr, flags: libc::c_uint) -> std::io::Result<bool> {
        use std::os::fd::AsRawFd;
        let (from, to) = (sys::cstr(from)?, sys::cstr(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid descriptors and NUL-terminated names; the result is checked.
        let rc = unsafe { libc::syscall(libc::SYS_renameat2, fd, from.as_ptr(), fd, to.as_ptr(), flags) };
        if rc == 0 {
            return Ok(true);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) | Some(libc::EPERM) => Ok(false),
            _ => Err(err),
        }
    }

    /// Swapping two names in one step is Linux's; elsewhere the caller renames.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn exchange(&self, _a: &OsStr, _b: &OsStr) -> std::io::Result<bool> {
        Ok(false)
    }

    /// Renames `from` to `to` only if `to` does not exist (`AlreadyExists` otherwise), in
    /// one step. `Ok(false)` where the system or the file system cannot.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn rename_noreplace(&self, from: &OsStr, to: &OsStr) -> std::io::Result<bool> {
        self.renameat2(from, to, libc::RENAME_NOREPLACE)
    }

    /// Renaming without replacing in one step is Linux's; elsewhere the caller looks first.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub fn rename_noreplace(&self, _from: &OsStr, _to: &OsStr) -> std::io::Result<bool> {
        Ok(false)
    }

    /// Gives the file `from` a second name `to` in this folder; fails if `to` exists.
    pub fn link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let (from, to) = (sys::cstr(from)?, sys::cstr(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid descriptors and NUL-terminated names.
        sys::check(unsafe { libc::linkat(fd, from.as_ptr(), fd, to.as_ptr(), 0) })
    }

    /// Removes the file `name` from this folder.
    pub fn remove(&self, name: &OsStr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let c = sys::cstr(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        sys::check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) })
    }

    /// Removes the folder `name` from this folder if it is empty (never a link).
    pub fn remove_folder(&self, name: &OsStr) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let c = sys::cstr(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        sys::check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
    }

    /// Flushes the folder's entries to disk, so a rename survives a power cut. Best
    /// effort: some file systems refuse it, and a folder opened only for lookups cannot.
    pub fn sync(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor.
        let _ = unsafe { libc::fsync(self.fd.as_raw_fd()) };
    }

    /// Takes the folder's lock if it is free: `Ok(false)` when another process holds it,
    /// an error where the folder cannot be locked.
    fn try_lock(&self) -> std::io::Result<bool> {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor.
        match sys::check(unsafe { libc::flock(self.fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) }) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn unlock(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor.
        let _ = unsafe { libc::flock(self.fd.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(unix)]
impl Made {
    /// Removes the folders made, newest first, as long as they are empty (a folder someone
    /// else has put a file in meanwhile stays).
    pub fn undo(self) {
        use std::os::fd::AsRawFd;
        for (parent, name) in self.dirs.iter().rev() {
            // SAFETY: a valid descriptor and NUL-terminated name.
            let _ = unsafe { libc::unlinkat(parent.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
        }
    }
}

#[cfg(not(unix))]
impl Dir {
    /// Opens (and with `create`, makes) the folder at `real`: here, only its path.
    fn reach(real: &Path, create: bool) -> Result<(Dir, Made)> {
        let mut made = Made::default();
        if create && !real.is_dir() {
            let missing: Vec<PathBuf> =
                real.ancestors().take_while(|a| !a.exists()).map(Path::to_path_buf).collect::<Vec<_>>();
            std::fs::create_dir_all(real).map_err(|e| Error::io(e).with_path(real))?;
            made.dirs = missing.into_iter().rev().collect();
        }
        if !real.is_dir() {
            return Err(Error::new(ErrorKind::NotFound, "no such folder").with_path(real));
        }
        Ok((Dir { path: real.to_path_buf() }, made))
    }

    /// Creates a new file `name` for writing (never reusing an existing name).
    pub fn create_new(&self, name: &OsStr, _private: bool) -> std::io::Result<File> {
        std::fs::OpenOptions::new().write(true).create_new(true).open(self.path.join(name))
    }

    /// Opens the regular file `name` for reading; a link there now is [`ErrorKind::Stale`].
    pub fn open_file(&self, name: &OsStr) -> Result<File> {
        let at = self.path.join(name);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::new(ErrorKind::Stale, "changed into a link since it was resolved").with_path(&at));
        }
        crate::confine::open_regular(&at).map(|(file, _)| file)
    }

    /// Looks at `name` itself (a link is not followed).
    pub fn stat(&self, name: &OsStr) -> std::io::Result<Stat> {
        let meta = std::fs::symlink_metadata(self.path.join(name))?;
        let time = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or((0, 0), |d| (d.as_secs() as i64, d.subsec_nanos() as i64))
        };
        Ok(Stat {
            dev: 0,
            ino: 0,
            size: meta.len(),
            mtime: time(meta.modified()),
            ctime: time(meta.modified()),
            is_file: meta.is_file(),
            is_link: meta.file_type().is_symlink(),
        })
    }

    /// Whether this process may write the file `name`.
    pub fn writable(&self, name: &OsStr) -> bool {
        std::fs::metadata(self.path.join(name)).is_ok_and(|m| !m.permissions().readonly())
    }

    /// Renames `from` to `to`, both in this folder (replacing `to`).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    /// Swapping two names in one step is Linux's; here the caller renames.
    pub fn exchange(&self, _a: &OsStr, _b: &OsStr) -> std::io::Result<bool> {
        Ok(false)
    }

    /// Renaming without replacing in one step is Linux's; here the caller looks first.
    pub fn rename_noreplace(&self, _from: &OsStr, _to: &OsStr) -> std::io::Result<bool> {
        Ok(false)
    }

    /// Gives the file `from` a second name `to` in this folder; fails if `to` exists.
    pub fn link(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        std::fs::hard_link(self.path.join(from), self.path.join(to))
    }

    /// Removes the file `name` from this folder.
    pub fn remove(&self, name: &OsStr) -> std::io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }

    /// Removes the folder `name` from this folder if it is empty.
    pub fn remove_folder(&self, name: &OsStr) -> std::io::Result<()> {
        std::fs::remove_dir(self.path.join(name))
    }

    /// Flushes the folder's entries (nothing to do here).
    pub fn sync(&self) {}

    /// Folders are not locked here.
    fn try_lock(&self) -> std::io::Result<bool> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }

    fn unlock(&self) {}
}

#[cfg(not(unix))]
impl Made {
    /// Removes the folders made, newest first, as long as they are empty.
    pub fn undo(self) {
        for dir in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::testutil::tmp;

    #[test]
    fn opens_and_makes_missing_folders_one_inside_the_other() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let deep = dir.join("a/b/c");
        assert_eq!(Dir::open(&deep).err().map(|e| e.kind()), Some(ErrorKind::NotFound));
        let (held, made) = Dir::make(&deep).unwrap();
        assert!(deep.is_dir());
        assert_eq!(made.dirs.len(), 3);
        let (temp, _) = held.create_temp(OsStr::new("x.txt"), true).unwrap();
        held.rename(&temp, OsStr::new("x.txt")).unwrap();
        assert!(deep.join("x.txt").is_file());
        assert!(held.stat(OsStr::new("x.txt")).unwrap().is_file);
        assert!(held.writable(OsStr::new("x.txt")));
    }

    #[test]
    fn the_folders_made_for_a_failed_change_are_removed_and_others_kept() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::create_dir_all(dir.join("a")).unwrap();
        let (_, made) = Dir::make(&dir.join("a/b/c")).unwrap();
        made.undo();
        assert!(dir.join("a").is_dir());
        assert!(!dir.join("a/b").exists());
        // A folder that someone filled meanwhile stays.
        let (_, made) = Dir::make(&dir.join("a/b/c")).unwrap();
        std::fs::write(dir.join("a/b/theirs.txt"), "x").unwrap();
        made.undo();
        assert!(!dir.join("a/b/c").exists());
        assert!(dir.join("a/b/theirs.txt").is_file());
    }

    #[test]
    fn a_link_on_the_way_is_refused_and_nothing_is_made_behind_it() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
        assert_eq!(Dir::open(&dir.join("link/new/deeper")).err().unwrap().kind(), ErrorKind::OutsideRoots);
        assert_eq!(Dir::make(&dir.join("link/new/deeper")).err().unwrap().kind(), ErrorKind::OutsideRoots);
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        std::fs::write(dir.join("file"), "x").unwrap();
        assert_eq!(Dir::make(&dir.join("file/sub")).err().unwrap().kind(), ErrorKind::InvalidPath);
        // What was made before the refusal is removed again.
        std::fs::create_dir_all(dir.join("mid")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("mid/link")).unwrap();
        assert!(Dir::make(&dir.join("mid/link/x")).is_err());
        assert_eq!(std::fs::read_dir(dir.join("mid")).unwrap().count(), 1);
    }

    /// The race the descriptor closes: the folder is swapped for a link to another one
    /// after it was opened; names made through the held folder still land in the first.
    #[test]
    fn changes_through_a_held_folder_stay_there_after_a_swap() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let (work, outside) = (dir.join("work"), dir.join("outside"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let held = Dir::open(&work).unwrap();
        std::fs::rename(&work, dir.join("work.moved")).unwrap();
        std::os::unix::fs::symlink(&outside, &work).unwrap();
        let (temp, _) = held.create_temp(OsStr::new("f"), true).unwrap();
        held.link(&temp, OsStr::new("f")).unwrap();
        held.remove(&temp).unwrap();
        assert!(dir.join("work.moved/f").is_file());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    #[test]
    fn a_link_where_a_file_was_is_stale_when_opened() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::write(dir.join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("real.txt"), dir.join("f.txt")).unwrap();
        let held = Dir::open(&dir).unwrap();
        assert_eq!(held.open_file(OsStr::new("f.txt")).unwrap_err().kind(), ErrorKind::Stale);
        assert!(held.open_file(OsStr::new("real.txt")).is_ok());
    }

    #[test]
    fn the_lock_is_held_by_one_holder_at_a_time_across_descriptors() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        let (a, b) = (Dir::open(&dir).unwrap(), Dir::open(&dir).unwrap());
        let held = a.lock().unwrap();
        assert!(!b.try_lock().unwrap());
        drop(held);
        assert!(b.try_lock().unwrap());
        b.unlock();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn exchange_swaps_two_names() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::write(dir.join("a"), "A").unwrap();
        std::fs::write(dir.join("b"), "B").unwrap();
        let held = Dir::open(&dir).unwrap();
        assert!(held.exchange(OsStr::new("a"), OsStr::new("b")).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join("a")).unwrap(), "B");
        assert_eq!(std::fs::read_to_string(dir.join("b")).unwrap(), "A");
    }

    #[test]
    fn relative_and_dotted_paths_are_refused() {
        assert_eq!(Dir::open(Path::new("rel/dir")).err().unwrap().kind(), ErrorKind::InvalidPath);
        assert_eq!(Dir::open(Path::new("/tmp/../etc")).err().unwrap().kind(), ErrorKind::InvalidPath);
    }
}
