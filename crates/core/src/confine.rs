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

    /// Whether a real (already canonical) path lies inside one of the roots.
    pub fn contains(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| real.starts_with(root))
    }

    /// Resolves `path` to its real path and checks it is inside the roots.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf> {
        check_malformed(path)?;
        let real = std::fs::canonicalize(path).map_err(|e| self.missing(path, e))?;
        if !self.contains(&real) {
            return Err(outside(path, &real));
        }
        Ok(real)
    }

    /// Opens an existing regular file for reading, confined to the roots.
    ///
    /// Devices, FIFOs and sockets are refused with [`ErrorKind::BlockedDevice`] wherever
    /// they are (their type is all that is revealed); the null device is [`Opened::Null`].
    /// A directory is [`ErrorKind::IsDirectory`]. The open never blocks on a FIFO.
    pub fn open_file(&self, path: &Path) -> Result<Opened> {
        check_malformed(path)?;
        // The kernel follows every link here, including /proc's magic links such as
        // /dev/stdin → /proc/self/fd/0 that have no real path to canonicalize.
        if let Ok(meta) = std::fs::metadata(path) {
            if !meta.is_file() && !meta.is_dir() {
                let real = std::fs::canonicalize(path).ok();
                return match real {
                    Some(real) if is_null_device(&real) => Ok(Opened::Null),
                    _ => Err(blocked(path)),
                };
            }
        }
        let real = std::fs::canonicalize(path).map_err(|e| self.missing(path, e))?;
        if !self.contains(&real) {
            return Err(outside(path, &real));
        }
        let meta = std::fs::metadata(&real).map_err(|e| Error::io(e).with_path(path))?;
        if meta.is_dir() {
            return Err(Error::new(ErrorKind::IsDirectory, "is a directory").with_path(path));
        }
        if !meta.is_file() {
            return Err(blocked(path));
        }
        let file = open_nonblocking(&real).map_err(|e| Error::io(e).with_path(path))?;
        let meta = file.metadata().map_err(|e| Error::io(e).with_path(path))?;
        if !meta.is_file() {
            return Err(blocked(path));
        }
        if let Some(opened) = opened_path(&file) {
            if !self.contains(&opened) {
                return Err(outside(path, &opened));
            }
        }
        Ok(Opened::File { file, meta, real })
    }
}

impl Roots {
    /// The error for a path that cannot be resolved. A missing path whose nearest existing
    /// ancestor is outside the roots is reported as outside, so nothing is revealed about
    /// what exists there.
    fn missing(&self, path: &Path, err: std::io::Error) -> Error {
        let err = Error::io(err).with_path(path);
        if err.kind() != ErrorKind::NotFound {
            return err;
        }
        let mut ancestor = path.parent();
        while let Some(dir) = ancestor {
            if let Ok(real) = std::fs::canonicalize(dir) {
                if !self.contains(&real) {
                    return outside(path, &real);
                }
                return err;
            }
            ancestor = dir.parent();
        }
        err
    }
}

fn check_malformed(path: &Path) -> Result<()> {
    let s = path.as_os_str();
    if s.is_empty() {
        return Err(Error::new(ErrorKind::InvalidPath, "path is empty"));
    }
    if s.as_encoded_bytes().contains(&0) {
        return Err(Error::new(
            ErrorKind::InvalidPath,
            "path contains a NUL byte",
        ));
    }
    Ok(())
}

fn outside(path: &Path, real: &Path) -> Error {
    Error::new(
        ErrorKind::OutsideRoots,
        format!(
            "resolves to {} which is outside the allowed folders",
            real.display()
        ),
    )
    .with_path(path)
}

fn blocked(path: &Path) -> Error {
    Error::new(
        ErrorKind::BlockedDevice,
        "is a device, FIFO, socket or other special file",
    )
    .with_path(path)
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
fn opened_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(not(target_os = "linux"))]
fn opened_path(_file: &File) -> Option<PathBuf> {
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
        assert!(matches!(
            roots.open_file(&dir.join("a.txt")).unwrap(),
            Opened::File { .. }
        ));
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
        assert_eq!(
            roots.open_file(&inner.join("link")).unwrap_err().kind(),
            ErrorKind::OutsideRoots
        );
    }

    #[test]
    fn missing_file_outside_is_outside_not_missing() {
        let dir = tmp();
        let inner = dir.join("ws");
        std::fs::create_dir_all(&inner).unwrap();
        let roots = Roots::new(&[&inner]).unwrap();
        assert_eq!(
            roots.open_file(&dir.join("nope")).unwrap_err().kind(),
            ErrorKind::OutsideRoots
        );
        assert_eq!(
            roots.open_file(&inner.join("nope")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            roots.open_file(&inner.join("a/b/nope")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
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
        assert_eq!(
            roots.open_file(Path::new("/dev/zero")).unwrap_err().kind(),
            ErrorKind::BlockedDevice
        );
        assert!(matches!(
            roots.open_file(Path::new("/dev/null")).unwrap(),
            Opened::Null
        ));
    }

    #[test]
    fn directory_is_reported() {
        let dir = tmp();
        let roots = Roots::new(&[&dir]).unwrap();
        assert_eq!(
            roots.open_file(&dir).unwrap_err().kind(),
            ErrorKind::IsDirectory
        );
    }
}
