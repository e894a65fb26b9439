use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// The folders a caller may touch: the workspace and any extra allowed roots.
///
/// Every check is made on the *real* path (symlinks resolved), and, where the platform
/// can tell, again on the file actually opened, so a folder swapped for a symlink between
/// the check and the open is still caught.
#[derive(Clone, Debug, Default)]
pub struct Roots {
    roots: Vec<PathBuf>,
}

/// What [`Roots::open_file`] found at a path.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made once per read, never stored
pub enum Opened {
    /// A regular file, opened for reading.
    File {
        /// The open handle.
        file: File,
        /// Its metadata, taken from the handle.
        meta: Metadata,
        /// The real path that was opened.
        real: PathBuf,
    },
    /// The null device: reads as empty.
    Null,
}

impl Roots {
    /// Creates the set from folders; each is canonicalized now (it must exist).
    pub fn new<P: AsRef<Path>>(roots: &[P]) -> Result<Roots> {
        let mut out = Vec::with_capacity(roots.len());
        for root in roots {
            let root = root.as_ref();
            let real = std::fs::canonicalize(root).map_err(|e| Error::io(e).with_path(root))?;
            out.push(real);
        }
        Ok(Roots { roots: out })
    }

    /// The first root (the workspace), real.
    pub fn first(&self) -> Option<&Path> {
        self.roots.first().map(PathBuf::as_path)
    }

    /// Whether a real (already canonical) path lies inside one of the roots.
    pub fn contains(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| real.starts_with(root))
    }

    /// Opens an existing regular file for reading, confined to the roots.
    ///
    /// Devices, FIFOs and sockets, and the stream aliases `/dev/stdin`, `/dev/fd/N` and
    /// `/proc/*/fd/N`, are refused with [`ErrorKind::BlockedDevice`] wherever they are
    /// (their type is all that is revealed); the null device is [`Opened::Null`]. A
    /// directory is [`ErrorKind::IsDirectory`]. The open never blocks on a FIFO.
    pub fn open_file(&self, path: &Path) -> Result<Opened> {
        check_malformed(path)?;
        if is_stream_alias(path) {
            return Err(blocked(path));
        }
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            Err(err) => {
                // A link with no real path behind it (a /proc magic link to a pipe) may
                // still lead to a special file: the kernel can stat through it.
                if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
                    return Err(blocked(path));
                }
                return Err(self.unresolved(path, err));
            }
        };
        let meta = std::fs::metadata(&real).map_err(|e| Error::io(e).with_path(path))?;
        if !meta.is_file() && !meta.is_dir() {
            return if is_null_device(&real) { Ok(Opened::Null) } else { Err(blocked(path)) };
        }
        if !self.contains(&real) {
            return Err(outside(path, &real));
        }
        if meta.is_dir() {
            return Err(Error::new(ErrorKind::IsDirectory, "is a directory").with_path(path));
        }
        // The real path has no links: one met now is a folder swapped since, and nothing
        // is opened through it (on Linux; elsewhere the check after the open catches it).
        let file = open_no_links(&real).map_err(|e| match e.kind() {
            ErrorKind::OutsideRoots => outside(path, &real),
            _ => e.with_path(path),
        })?;
        let meta = file.metadata().map_err(|e| Error::io(e).with_path(path))?;
        if !meta.is_file() {
            return Err(blocked(path));
        }
        self.check_opened(path, &real, &file, &meta)?;
        Ok(Opened::File { file, meta, real })
    }

    /// Checks, after the open, that the file opened is the one that was checked: by the
    /// kernel's own path of the handle where the platform has one, else by resolving the
    /// path again and comparing the file's identity.
    fn check_opened(&self, path: &Path, real: &Path, file: &File, meta: &Metadata) -> Result<()> {
        if let Some(opened) = opened_path(file) {
            if !self.contains(&opened) {
                return Err(outside(path, &opened));
            }
            return Ok(());
        }
        self.check_reresolved(path, real, meta)
    }

    /// The post-open check where the platform cannot name an open file: the path must
    /// still resolve to the same real path and the same file, inside the roots.
    fn check_reresolved(&self, path: &Path, real: &Path, meta: &Metadata) -> Result<()> {
        let again = std::fs::canonicalize(path).map_err(|e| self.unresolved(path, e))?;
        let same = again == real && std::fs::metadata(&again).is_ok_and(|m| same_file(&m, meta));
        if !same || !self.contains(&again) {
            return Err(outside(path, &again));
        }
        Ok(())
    }

    /// The error for a path that cannot be resolved. Where the path would lead is
    /// worked out by following its links by hand; if that is outside the roots, the path
    /// is reported as outside, so nothing is revealed about what exists there.
    fn unresolved(&self, path: &Path, err: std::io::Error) -> Error {
        let err = Error::io(err).with_path(path);
        // A loop is judged by where it was when it was given up on.
        let (Ok(target) | Err(target)) = follow_links(path);
        if self.contains(&target) {
            err
        } else {
            outside(path, &target)
        }
    }
}

/// Opens a file a walk found, for reading, without blocking: one swapped for
/// a FIFO or device since the walk saw it is [`ErrorKind::BlockedDevice`].
///
/// A walk follows no links and starts from a real folder, so a link anywhere on the path
/// now can only be a folder swapped for one since the walk read it: that is
/// [`ErrorKind::OutsideRoots`], and nothing is opened through it. On Linux this is one
/// `openat2` call that refuses every link on the way (`RESOLVE_NO_SYMLINKS`); where that
/// is missing, the file opened must be the one at the path reached without links.
pub(crate) fn open_found(path: &Path) -> Result<File> {
    let file = open_no_links(path).map_err(|e| e.with_path(path))?;
    let meta = file.metadata().map_err(|e| Error::io(e).with_path(path))?;
    if !meta.is_file() {
        return Err(blocked(path));
    }
    Ok(file)
}

/// What is at a path a walk found (the entry itself: never followed, never opened for
/// reading), if it is still there and reached without a link. A walk reads folders by
/// path, so a folder swapped for a link to another place while it was read yields that
/// place's names: a name that is not there now, inside, is one of those (or was removed
/// since), and must not be shown. `Err` says why not: [`ErrorKind::NotFound`] or
/// [`ErrorKind::OutsideRoots`] (a link on the way) for a name that is not there, any other
/// kind for a name that is there but cannot be looked at (a path too long).
pub(crate) fn found_still(path: &Path) -> Result<Metadata> {
    #[cfg(target_os = "linux")]
    if let Some(opened) = openat2_no_links(path, libc::O_PATH | libc::O_NOFOLLOW) {
        return opened.map_err(no_links_error)?.metadata().map_err(Error::io);
    }
    // Elsewhere: the entry, and the folder it is in reached without a link.
    let meta = std::fs::symlink_metadata(path).map_err(Error::io)?;
    folder_unlinked(path)?;
    Ok(meta)
}

/// Opens `path` (a real path) for reading, without passing through any link.
fn open_no_links(path: &Path) -> Result<File> {
    #[cfg(target_os = "linux")]
    if let Some(opened) = openat2_no_links(path, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW) {
        return opened.map_err(no_links_error);
    }
    open_then_check(path)
}

/// [`open_no_links`] where the kernel cannot refuse links on the way: the file is opened
/// (a final link is never followed), then its folder must be reached without a link and
/// hold, at that name, the very file opened. A swap before the open makes the folder a
/// link or the name another file; one after it cannot change what was opened.
fn open_then_check(path: &Path) -> Result<File> {
    let file = open_nonblocking(path).map_err(no_links_error)?;
    let opened = file.metadata().map_err(Error::io)?;
    folder_unlinked(path)?;
    let named = std::fs::symlink_metadata(path).map_err(Error::io)?;
    if !same_file(&opened, &named) {
        return Err(swapped_link());
    }
    Ok(file)
}

/// Checks that the folder `path` is in is reached without a link (its real path is itself).
fn folder_unlinked(path: &Path) -> Result<()> {
    let Some(folder) = path.parent() else { return Ok(()) };
    match std::fs::canonicalize(folder) {
        Ok(real) if real == folder => Ok(()),
        Ok(_) => Err(swapped_link()),
        Err(e) => Err(no_links_error(e)),
    }
}

/// The error for an open refused on the way: a link where a folder was is a swap.
fn no_links_error(e: std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(ELOOP) => swapped_link(),
        #[cfg(target_os = "linux")]
        Some(libc::EXDEV) => swapped_link(),
        // A file leased by another process (O_NONBLOCK): reported, not waited for.
        #[cfg(unix)]
        Some(libc::EAGAIN) => Error::new(ErrorKind::Io, "is locked by another process (a lease); try again later"),
        _ => Error::io(e),
    }
}

fn swapped_link() -> Error {
    Error::new(ErrorKind::OutsideRoots, "a folder on its path changed into a link during the search")
}

#[cfg(unix)]
const ELOOP: i32 = libc::ELOOP;
#[cfg(not(unix))]
const ELOOP: i32 = 1921;

/// `openat2(path, flags, RESOLVE_NO_SYMLINKS)`, or None where the kernel (before 5.6) or
/// a seccomp filter does not allow it (remembered: the call is not tried again).
#[cfg(target_os = "linux")]
pub(crate) fn openat2_no_links(path: &Path, flags: libc::c_int) -> Option<std::io::Result<File>> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    static MISSING: AtomicBool = AtomicBool::new(false);
    if MISSING.load(Ordering::Relaxed) {
        return None;
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Some(Err(std::io::Error::from(std::io::ErrorKind::InvalidInput)));
    };
    /// The kernel's `struct open_how` (libc's is not constructible).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    loop {
        // SAFETY: a NUL-terminated path and an open_how of the size passed; the result is checked.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                libc::AT_FDCWD,
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a new descriptor that nothing else owns.
            return Some(Ok(unsafe { File::from_raw_fd(fd as i32) }));
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            // Missing (before Linux 5.6), or refused by an older seccomp profile (containers).
            Some(libc::ENOSYS) | Some(libc::EPERM) => {
                MISSING.store(true, Ordering::Relaxed);
                return None;
            }
            _ => return Some(Err(err)),
        }
    }
}

/// Opens an existing regular file for reading without following a final symlink and
/// without blocking; anything but a regular file is [`ErrorKind::BlockedDevice`].
pub fn open_regular(path: &Path) -> Result<(File, Metadata)> {
    check_malformed(path)?;
    if is_stream_alias(path) {
        return Err(blocked(path));
    }
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            return Err(if meta.is_dir() {
                Error::new(ErrorKind::IsDirectory, "is a directory").with_path(path)
            } else {
                blocked(path)
            });
        }
    }
    let file = open_nonblocking(path).map_err(Error::io)?;
    let meta = file.metadata().map_err(Error::io)?;
    if !meta.is_file() {
        return Err(blocked(path));
    }
    Ok((file, meta))
}

/// Where a path leads, following its symlinks by hand so that a missing final part
/// (a dangling link, a file not yet created) still has an answer. A loop is `Err` with
/// the point reached.
pub(crate) fn follow_links(path: &Path) -> std::result::Result<PathBuf, PathBuf> {
    use std::path::Component;
    let mut pending: Vec<PathBuf> = path.components().rev().map(|c| PathBuf::from(c.as_os_str())).collect();
    let mut resolved = PathBuf::new();
    let mut hops = 0;
    let mut missing = false;
    while let Some(part) = pending.pop() {
        match part.components().next() {
            Some(Component::Prefix(_)) | Some(Component::RootDir) => resolved.push(&part),
            Some(Component::CurDir) | None => {}
            Some(Component::ParentDir) => {
                resolved.pop();
            }
            Some(Component::Normal(name)) => {
                let candidate = resolved.join(name);
                let link = (!missing)
                    .then(|| std::fs::symlink_metadata(&candidate).ok())
                    .flatten()
                    .filter(|m| m.file_type().is_symlink());
                match link {
                    Some(_) => {
                        hops += 1;
                        let target = match std::fs::read_link(&candidate) {
                            Ok(target) if hops <= 40 => target,
                            _ => return Err(resolved),
                        };
                        pending.extend(target.components().rev().map(|c| PathBuf::from(c.as_os_str())));
                    }
                    None => {
                        missing = missing || std::fs::symlink_metadata(&candidate).is_err();
                        resolved = candidate;
                    }
                }
            }
        }
    }
    Ok(resolved)
}

/// Paths that name a process's open streams rather than a file: `/dev/stdin`,
/// `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/*/fd/N`.
pub(crate) fn is_stream_alias(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let parts: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
    matches!(
        parts.as_slice(),
        ["/", "dev", "stdin" | "stdout" | "stderr", ..] | ["/", "dev", "fd", ..] | ["/", "proc", _, "fd", ..]
    )
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

pub(crate) fn check_malformed(path: &Path) -> Result<()> {
    let s = path.as_os_str();
    if s.is_empty() {
        return Err(Error::new(ErrorKind::InvalidPath, "path is empty"));
    }
    if s.as_encoded_bytes().contains(&0) {
        return Err(Error::new(ErrorKind::InvalidPath, "path contains a NUL byte"));
    }
    Ok(())
}

pub(crate) fn outside(path: &Path, real: &Path) -> Error {
    Error::new(ErrorKind::OutsideRoots, format!("resolves to {} which is outside the allowed folders", real.display()))
        .with_path(path)
}

pub(crate) fn blocked(path: &Path) -> Error {
    Error::new(ErrorKind::BlockedDevice, "is a device, FIFO, socket or other special file").with_path(path)
}

fn is_null_device(real: &Path) -> bool {
    if cfg!(windows) {
        real.as_os_str().eq_ignore_ascii_case("nul")
    } else {
        real == Path::new("/dev/null")
    }
}

#[cfg(unix)]
fn open_nonblocking(real: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(real)
}

#[cfg(not(unix))]
fn open_nonblocking(real: &Path) -> std::io::Result<File> {
    File::open(real)
}

/// The kernel's own idea of the path of an open file, where the platform exposes it.
#[cfg(target_os = "linux")]
pub(crate) fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

/// The path of an open file as the kernel records it (`F_GETPATH`).
#[cfg(target_os = "macos")]
pub(crate) fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: F_GETPATH writes at most PATH_MAX bytes, NUL-terminated, into buf.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) };
    if rc == -1 {
        return None;
    }
    let len = buf.iter().position(|&b| b == 0)?;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..len])))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(crate) fn opened_path(_file: &File) -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tmp;

    #[test]
    fn file_inside_opens() {
        let dir = tmp();
        std::fs::write(dir.join("a.txt"), "x").unwrap();
        let roots = Roots::new(&[&dir]).unwrap();
        assert!(matches!(roots.open_file(&dir.join("a.txt")).unwrap(), Opened::File { .. }));
    }

    #[test]
    fn dotdot_escape_refused() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(dir.join("secret"), "x").unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        let err = roots.open_file(&inner.join("../secret")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::OutsideRoots);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_escape_refused() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(dir.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), inner.join("link")).unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        assert_eq!(roots.open_file(&inner.join("link")).unwrap_err().kind(), ErrorKind::OutsideRoots);
    }

    #[test]
    fn missing_file_outside_is_outside_not_missing() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        assert_eq!(roots.open_file(&dir.join("nope")).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(roots.open_file(&inner.join("nope")).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(roots.open_file(&inner.join("a/b/nope")).unwrap_err().kind(), ErrorKind::NotFound);
    }

    #[cfg(unix)]
    #[test]
    fn dangling_link_to_outside_is_outside() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        std::os::unix::fs::symlink(dir.join("no-such-file"), inner.join("dangling")).unwrap();
        std::os::unix::fs::symlink(inner.join("also-missing"), inner.join("dangling-in")).unwrap();
        std::os::unix::fs::symlink(dir.join("loop-b"), dir.join("loop-a")).unwrap();
        std::os::unix::fs::symlink(dir.join("loop-a"), dir.join("loop-b")).unwrap();
        std::os::unix::fs::symlink(dir.join("loop-a"), inner.join("to-loop")).unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        assert_eq!(roots.open_file(&inner.join("dangling")).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(roots.open_file(&inner.join("dangling-in")).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(roots.open_file(&inner.join("to-loop")).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(roots.open_file(&dir.join("loop-a")).unwrap_err().kind(), ErrorKind::OutsideRoots);
    }

    /// The fallback post-open check (used where the kernel cannot name an open file)
    /// catches a link swapped to point outside between the check and the open.
    #[cfg(unix)]
    #[test]
    fn reresolving_catches_a_swapped_link() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(inner.join("a.txt"), "inside").unwrap();
        std::fs::write(dir.join("secret"), "outside").unwrap();
        let link = inner.join("link");
        std::os::unix::fs::symlink(inner.join("a.txt"), &link).unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        let Opened::File { meta, real, .. } = roots.open_file(&link).unwrap() else { panic!("not a file") };
        assert!(roots.check_reresolved(&link, &real, &meta).is_ok());
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), &link).unwrap();
        assert_eq!(roots.check_reresolved(&link, &real, &meta).unwrap_err().kind(), ErrorKind::OutsideRoots);
    }

    #[cfg(unix)]
    #[test]
    fn stream_aliases_are_blocked() {
        let roots = Roots::new(&[std::env::temp_dir()]).unwrap();
        for p in ["/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/0", "/proc/self/fd/0", "/proc/1/fd/3"] {
            assert_eq!(roots.open_file(Path::new(p)).unwrap_err().kind(), ErrorKind::BlockedDevice, "{p}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn open_regular_never_blocks_on_a_fifo() {
        let dir = tmp();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(open_regular(&fifo).unwrap_err().kind(), ErrorKind::BlockedDevice);
    }

    /// A file a walk found, reached now through a folder that changed into a link, is not
    /// opened (nor looked at), by openat2 and by the fallback check alike.
    #[cfg(unix)]
    #[test]
    fn found_files_behind_a_swapped_folder_are_refused() {
        let dir = std::fs::canonicalize(tmp()).unwrap();
        std::fs::create_dir_all(dir.join("ws/sub")).unwrap();
        std::fs::create_dir_all(dir.join("out")).unwrap();
        std::fs::write(dir.join("ws/sub/f.txt"), "inside").unwrap();
        std::fs::write(dir.join("out/f.txt"), "outside").unwrap();
        let found = dir.join("ws/sub/f.txt");
        assert!(open_found(&found).is_ok());
        assert!(found_still(&found).is_ok_and(|m| m.is_file()));
        assert!(open_then_check(&found).is_ok());
        std::fs::rename(dir.join("ws/sub"), dir.join("ws/sub.real")).unwrap();
        std::os::unix::fs::symlink(dir.join("out"), dir.join("ws/sub")).unwrap();
        assert_eq!(open_found(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(found_still(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(open_then_check(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(folder_unlinked(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        // A found file that is itself now a link is not followed either.
        std::fs::remove_file(dir.join("ws/sub")).unwrap();
        std::fs::rename(dir.join("ws/sub.real"), dir.join("ws/sub")).unwrap();
        std::fs::remove_file(&found).unwrap();
        std::os::unix::fs::symlink(dir.join("out/f.txt"), &found).unwrap();
        assert_eq!(open_found(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert_eq!(open_then_check(&found).unwrap_err().kind(), ErrorKind::OutsideRoots);
        assert!(found_still(&found).is_ok_and(|m| m.file_type().is_symlink()));
        std::fs::remove_file(&found).unwrap();
        assert_eq!(open_found(&found).unwrap_err().kind(), ErrorKind::NotFound);
        assert_eq!(found_still(&found).unwrap_err().kind(), ErrorKind::NotFound);
    }

    #[test]
    fn nul_byte_is_invalid() {
        let dir = tmp();
        let roots = Roots::new(&[&dir]).unwrap();
        let err = roots.open_file(Path::new("a\0b")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPath);
    }

    #[cfg(unix)]
    #[test]
    fn devices_blocked_and_null_empty() {
        let roots = Roots::new(&[std::env::temp_dir()]).unwrap();
        assert_eq!(roots.open_file(Path::new("/dev/zero")).unwrap_err().kind(), ErrorKind::BlockedDevice);
        assert!(matches!(roots.open_file(Path::new("/dev/null")).unwrap(), Opened::Null));
    }

    #[test]
    fn directory_is_reported() {
        let dir = tmp();
        let roots = Roots::new(&[&dir]).unwrap();
        assert_eq!(roots.open_file(&dir).unwrap_err().kind(), ErrorKind::IsDirectory);
    }
}
